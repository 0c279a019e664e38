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
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/charmbracelet/x/term"

	"inflight/cli"
	"inflight/runner"
)

// Every way inflight can be told to stop is an interruption: the context's
// cause is a runner.Interrupt naming it, what is in flight is cancelled with
// the proper signal, the trace is flushed and the server stopped.
//
//   - SIGINT (Ctrl+C) and SIGTERM: the first cancels and waits (bounded) for
//     the cancels' fate; a second stops the waiting — call and check report
//     what they have and exit at once. After that the default behaviour
//     comes back, so a third ends inflight where it stands.
//   - SIGHUP: the terminal went away (closed window, tmux kill-session,
//     kill -HUP). Without a handler Go exits at once, and a stdio server,
//     which runs in its own process group and gets no hangup, is left
//     running with parent 1. It counts as the first signal, like SIGTERM.
//   - A closed stdout or stderr (`inflight call … | head -2`): without a
//     handler Go dies of SIGPIPE on the next write (exit 141), sending no
//     cancel and cutting the trace. Here a write that fails with EPIPE, a
//     SIGPIPE for standard output or error, or (on a pipe) the reader's end
//     closing while inflight waits in silence, interrupts the run once; it
//     never counts towards the second signal, since every later write to
//     the closed pipe fails again.
func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, interrupt := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})

	gone := newOutputGone()
	stdout, stderr := output(os.Stdout, gone), output(os.Stderr, gone)
	watchOutputs(gone)

	go func() {
		interrupted := false
		stop := func(name string) {
			if !interrupted {
				interrupted = true
				interrupt(runner.Interrupt{Signal: name})
			}
		}
		pipe := gone.ch
		for {
			select {
			case sig := <-sigs:
				if !interrupted {
					stop(signalName(sig))
					continue
				}
				close(hurry)
				signal.Reset(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
				return
			case <-pipe:
				pipe = nil
				stop("SIGPIPE")
			}
		}
	}()
	os.Exit(cli.Execute(runner.WithHurry(ctx, hurry), os.Args[1:], stdout, stderr))
}

// output is what the commands write to for f: a terminal as the *os.File
// it is (the live bar, --json's run drawn on stderr and the TUI look at
// it), a pipe or file through the writer that turns EPIPE into the
// interruption.
func output(f *os.File, gone *outputGone) io.Writer {
	if term.IsTerminal(f.Fd()) {
		return f
	}
	return &outputWriter{w: f, gone: gone}
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return "SIGINT"
}

// outputGone is closed once standard output or error is found closed by
// its reader.
type outputGone struct {
	once sync.Once
	ch   chan struct{}
}

func newOutputGone() *outputGone { return &outputGone{ch: make(chan struct{})} }

func (g *outputGone) close() { g.once.Do(func() { close(g.ch) }) }

// outputWriter is standard output or error; a write its reader is no
// longer there for (EPIPE) is the interruption.
type outputWriter struct {
	w    io.Writer
	gone *outputGone
}

func (o *outputWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		o.gone.close()
	}
	return n, err
}
