// Command inflight is an interactive terminal client for the Model Context
// Protocol that shows every request in flight and cancels any of them with the
// signal its transport and protocol era require.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "inflight: under construction")
	os.Exit(2)
}
