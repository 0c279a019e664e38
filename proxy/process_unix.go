//go:build unix

package proxy

import (
	"os"
	"os/exec"
	"syscall"
)

var (
	sigTerm os.Signal = syscall.SIGTERM
	sigKill os.Signal = syscall.SIGKILL
	// sigRelease asks a proxy to pass on what its rules hold.
	sigRelease os.Signal = syscall.SIGUSR1
)

// ownGroup puts the server in a process group of its own, so that the
// stop signals reach whatever it started, and a Ctrl+C meant for the host
// reaches the proxy (which stops the server in order) rather than the
// server behind its back.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// groupAlive reports whether anything is left in the server's group.
func groupAlive(cmd *exec.Cmd) bool {
	return cmd.Process != nil && syscall.Kill(-cmd.Process.Pid, 0) == nil
}

// signalGroup signals the server's group (or the server alone, when the
// group is gone).
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process == nil {
		return
	}
	if s, ok := sig.(syscall.Signal); ok && syscall.Kill(-cmd.Process.Pid, s) == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
}

// ownerOf is the user who owns a file.
func ownerOf(fi os.FileInfo) (uid int, known bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// noFollow makes an open refuse a symbolic link at the path.
const noFollow = syscall.O_NOFOLLOW
