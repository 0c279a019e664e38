//go:build !unix

package source

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
