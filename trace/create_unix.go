//go:build unix

package trace

import "syscall"

// noFollow makes opening a symlink fail (ELOOP) instead of opening what it
// names.
const noFollow = syscall.O_NOFOLLOW
