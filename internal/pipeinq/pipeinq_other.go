//go:build !linux

// Package pipeinq asks a pipe how many bytes wait unread in it; where it
// cannot be asked, Pending is 0 and a position counts only what was read.
package pipeinq

import "io"

// Pending is 0 where the pipe cannot be asked how much it holds.
func Pending(io.Reader) int64 { return 0 }
