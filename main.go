// Command inflight is an interactive terminal client for the Model Context
// Protocol that shows every request in flight and cancels any of them with the
// signal its transport and protocol era require.
//
// Run with no arguments it opens the TUI on the embedded demo server. The
// subcommands are headless: `call` sends one request and follows it to the
// end, `check` runs a cancellation compliance battery, `replay` prints a
// trace file, `demo-server` serves the demo over stdio or HTTP. The command
// line itself is package cli; this file only turns signals into the
// context it runs under and its result into the exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"inflight/cli"
	"inflight/runner"
)

func main() {
	// The first Ctrl+C (or SIGTERM) cancels what is in flight, with the
	// proper signal, and waits (bounded) for its fate. A second one stops
	// the waiting: call and check report what they have (their --json
	// object, their trace) and exit at once. After that the default
	// behaviour comes back, so a third ends inflight where it stands.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, interrupt := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})
	go func() {
		sig := <-sigs
		name := "SIGINT"
		if sig == syscall.SIGTERM {
			name = "SIGTERM"
		}
		interrupt(runner.Interrupt{Signal: name})
		<-sigs
		close(hurry)
		signal.Reset(os.Interrupt, syscall.SIGTERM)
	}()
	os.Exit(cli.Execute(runner.WithHurry(ctx, hurry), os.Args[1:], os.Stdout, os.Stderr))
}
