package proxy

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pipePending is how many bytes wait unread in r, the server's stdout
// pipe (TIOCINQ); 0 when r is no pipe or the count cannot be had.
func pipePending(r io.Reader) int64 {
	f, ok := r.(*os.File)
	if !ok {
		return 0
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var n int
	if sc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }) != nil || err != nil {
		return 0
	}
	return int64(max(n, 0))
}
