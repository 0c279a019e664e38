// Package cachelock serialises the test kits that build or install an
// outside peer into a shared cache (npm packages, Jaeger): one process at
// a time does the work, the others wait and then find it done.
package cachelock

import (
	"os"
	"syscall"
)

// Lock takes an exclusive lock on the file at path (created if need be)
// and returns the function that lets it go.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
