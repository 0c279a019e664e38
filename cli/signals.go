package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/charmbracelet/x/term"

	"inflight/runner"
)

// Interruptible is what main runs Execute under: a context that every way
// inflight can be told to stop ends, and the standard output and error
// the commands write to. It installs the process's signal handlers, so it
// is for main alone; tests call Execute with a context of their own.
//
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
func Interruptible(stdoutFile, stderrFile *os.File) (ctx context.Context, stdout, stderr io.Writer) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, interrupt := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})

	gone := newOutputGone()
	stdout, stderr = output(stdoutFile, gone), output(stderrFile, gone)
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
	return runner.WithHurry(ctx, hurry), stdout, stderr
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
