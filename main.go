// Command inflight is an interactive terminal client for the Model Context
// Protocol that shows every request in flight and cancels any of them with the
// signal its transport and protocol era require.
//
// Run with no arguments it opens the TUI on the embedded demo server. The
// subcommands are headless: `call` sends one request and follows it to the
// end, `check` runs a cancellation compliance battery, `replay` prints a
// trace file, `demo-server` serves the demo over stdio or HTTP. The command
// line itself is package cli; this file only runs it under the context the
// process's signals end (cli.Interruptible) and turns its result into the
// exit code.
package main

import (
	"os"

	"inflight/cli"
)

func main() {
	ctx, stdout, stderr := cli.Interruptible(os.Stdout, os.Stderr)
	os.Exit(cli.Execute(ctx, os.Args[1:], stdout, stderr))
}
