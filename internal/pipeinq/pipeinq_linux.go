// Package pipeinq asks a pipe how many bytes wait unread in it (TIOCINQ),
// for the client and the proxy, which place a cancel by how much the server
// had written when it left: what was read plus what waits in the pipe.
package pipeinq

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Pending is how many bytes wait unread in r, a pipe from a server
// (TIOCINQ); 0 when r is no pipe or the count cannot be had.
func Pending(r io.Reader) int64 {
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
