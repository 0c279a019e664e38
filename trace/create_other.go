//go:build !unix

package trace

// noFollow is unix's O_NOFOLLOW, which other systems lack; Create checks
// for a link itself there.
const noFollow = 0
