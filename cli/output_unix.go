//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// watchOutputs closes gone when standard output or error is a pipe or
// socket whose reader has gone: on a SIGPIPE that was about them (the
// signal also comes for a write to a dead stdio server's stdin, which is
// the client's business, not an interruption), and, for a pipe, as soon as
// its reader closes it, without waiting for inflight's next write — a call
// whose server is silent would otherwise go on until its timeout after
// `| head` has read all it wanted.
func watchOutputs(gone *outputGone) {
	// With SIGPIPE notified, a write to a closed stdout fails with EPIPE
	// instead of killing the process.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	go func() {
		for range pipes {
			if outputClosed(1, 0) || outputClosed(2, 0) {
				gone.close()
			}
		}
	}()
	for _, fd := range []int{1, 2} {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			continue
		}
		go func() {
			// Blocks in poll until the pipe's reader is gone (POLLERR):
			// it asks for no event, so a pipe with room to write does not
			// wake it.
			if outputClosed(fd, -1) {
				gone.close()
			}
		}()
	}
}

// outputClosed polls fd for an error or hang-up, waiting up to timeout
// milliseconds (-1: for ever).
func outputClosed(fd, timeout int) bool {
	fds := []unix.PollFd{{Fd: int32(fd)}}
	for {
		n, err := unix.Poll(fds, timeout)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
	}
}
