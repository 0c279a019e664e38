package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"inflight/check"
	"inflight/client"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/ui"
)

// runInteractive opens the TUI on the target. It returns the process exit
// code: 0 after a normal quit, 1 when the UI failed, 2 for a bad target.
func runInteractive(ctx context.Context, target check.Target, opts InteractiveOptions) int {
	errOut := opts.Stderr
	if errOut == nil {
		errOut = os.Stderr
	}
	red := target.Redactor()
	fail := func(code int, err error) int {
		fmt.Fprintf(errOut, "inflight: %s\n", termsafe.Line(red.Error(err)))
		return code
	}
	if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		return fail(check.ExitUsage, errors.New("the interactive view needs a terminal; for scripts use `inflight call` or `inflight check`"))
	}
	m, err := newInteractiveModel(ctx, target, opts)
	if err != nil {
		return fail(check.ExitUsage, err)
	}
	runErr := runProgram(ctx, m, m)
	switch {
	case runErr == nil, errors.Is(runErr, tea.ErrInterrupted), errors.Is(runErr, context.Canceled):
		return 0
	default:
		return fail(1, runErr)
	}
}

// newInteractiveModel builds the TUI's model for the target: the client
// configuration, the --call requests and the tracker's defaults. It starts
// nothing; the model dials in Init.
func newInteractiveModel(ctx context.Context, target check.Target, opts InteractiveOptions) (*ui.Model, error) {
	red := target.Redactor()
	cfg, err := target.ClientConfig(ctx)
	if err != nil {
		return nil, err
	}
	if opts.LateWindow > 0 {
		cfg.LateWindow = opts.LateWindow
	}
	trackerCfg := session.DefaultConfig()
	if opts.Timeout > 0 {
		trackerCfg.DefaultTimeout = opts.Timeout
	}
	if opts.MaxTimeout > 0 {
		trackerCfg.MaxTimeout = opts.MaxTimeout
	}
	reset := opts.ResetOnProgress
	trackerCfg.ResetOnProgress = &reset
	if opts.LateWindow > 0 {
		trackerCfg.LateWindow = opts.LateWindow
	}
	transport := "stdio"
	if target.IsHTTP() {
		transport = "http"
	}
	return ui.New(ui.Options{
		Target:    headerTarget(target),
		Transport: transport,
		// Every dial is a new connection; for stdio that restarts the
		// server, which is how R reconnects after the server died.
		Dial: func() (ui.Client, error) {
			c, err := client.New(cfg)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		Tracker: trackerCfg,
		Calls:   opts.Calls,
		Export: func(path string, snap ui.Snapshot) (string, error) {
			return writeTrace(path, snap, red)
		},
		Redact: red.String,
		Dark:   true,
	})
}

// runProgram runs the TUI until it ends and returns why it ended. model is
// the program's model (m itself, or a test's wrapper around it).
//
// ctx ending (main's first SIGINT or SIGTERM) does not kill the program:
// Bubble Tea would end at once and what is in flight would never be
// cancelled. The model gets a ui.ShutdownMsg instead and cancels everything
// with reason "interrupted", as Ctrl+C does, then quits; if it has not ended
// within shutdownGrace, or a second signal comes, the program is killed.
// Bubble Tea's own signal handler is off for the same reason: it ends the
// program on SIGINT before the model sees it.
func runProgram(ctx context.Context, model tea.Model, m *ui.Model, opts ...tea.ProgramOption) error {
	p := tea.NewProgram(model, append([]tea.ProgramOption{tea.WithoutSignalHandler()}, opts...)...)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		p.Send(ui.ShutdownMsg{Reason: "interrupted"})
		select {
		case <-done:
		case <-time.After(shutdownGrace):
			p.Kill()
		case <-check.HurryOf(ctx):
			// A second signal: stop waiting for the cancels' fate. Kill
			// still restores the terminal.
			p.Kill()
		}
	}()
	_, runErr := p.Run()
	close(done)
	<-watched
	// Whatever ended the program — a quit, Ctrl+C, a signal, a panic inside
	// the UI (Bubble Tea restores the terminal and reports it) — the
	// connection is closed, which stops a stdio server's process, and no
	// timer of the model outlives the program.
	m.Stop()
	if c := m.Conn(); c != nil {
		_ = c.Close()
	}
	return runErr
}

// shutdownGrace bounds how long a signalled TUI may take to cancel what is
// in flight and quit.
const shutdownGrace = 5 * time.Second

// writeTrace saves the TUI's protocol log as a trace file (key e) and
// returns the path it wrote. The UI names files by the second, so a second
// export within the same second finds its name taken: rather than fail, or
// overwrite the first, it writes NAME-2.jsonl, NAME-3.jsonl, … (O_EXCL
// still, so that nothing is ever overwritten).
func writeTrace(path string, snap ui.Snapshot, red *redact.Redactor) (string, error) {
	f, written, err := createUnique(path)
	if err != nil {
		return "", err
	}
	if err := trace.WriteEntries(f, snap.Entries, snap.Dropped, snap.Start, red); err != nil {
		f.Close()
		return written, err
	}
	return written, f.Close()
}

// maxExportSuffix bounds the names createUnique tries.
const maxExportSuffix = 1000

// createUnique creates path, or, when a file of that name exists, the first
// free name with a counter before its extension (trace.jsonl, trace-2.jsonl,
// trace-3.jsonl, …). It never opens an existing file.
func createUnique(path string) (*os.File, string, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	name := path
	for n := 2; ; n++ {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		switch {
		case err == nil:
			return f, name, nil
		case !errors.Is(err, fs.ErrExist) || n > maxExportSuffix:
			return nil, "", err
		}
		name = fmt.Sprintf("%s-%d%s", base, n, ext)
	}
}

// headerTarget names the target in the TUI's header, where the transport
// is shown beside it.
func headerTarget(t check.Target) string {
	if t.Demo {
		return "embedded demo server"
	}
	return t.Describe()
}
