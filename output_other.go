//go:build !unix

package main

// watchOutputs has nothing to watch where there is no SIGPIPE: a closed
// output shows as a failed write (outputWriter).
func watchOutputs(gone *outputGone) {}
