//go:build !unix

package cli

// watchOutputs has nothing to watch where there is no SIGPIPE: a closed
// output shows as a failed write (outputWriter).
func watchOutputs(gone *outputGone) {}
