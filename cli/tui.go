package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"inflight/answer"
	"inflight/client"
	"inflight/exitcode"
	"inflight/headless"
	"inflight/otlp"
	"inflight/redact"
	"inflight/runner"
	"inflight/session"
	"inflight/target"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/ui"
	"inflight/version"
	"inflight/wire"
)

// InteractiveOptions configure the TUI (runInteractive).
type InteractiveOptions struct {
	// Calls are tool calls to send as soon as the TUI is connected, from
	// repeatable --call flags ("TOOL" or 'TOOL={"json":"args"}', read by
	// ParseCallFlag).
	Calls []ui.Call
	// Timeout, MaxTimeout, ResetOnProgress and LateWindow are the tracker's
	// defaults for new requests.
	Timeout         time.Duration
	MaxTimeout      time.Duration
	ResetOnProgress bool
	LateWindow      time.Duration
	// Grace widens the crossing window (session.Config.Grace).
	Grace time.Duration
	// TracePath, when set, records the session from the start (--trace).
	TracePath string
	// HARPath, when set, receives the session's HTTP exchanges as an HAR
	// when the TUI ends (--har).
	HARPath string
	// OTLP, when set, is the OTLP/HTTP collector the session's spans go
	// to (--otlp; else the OTEL_EXPORTER_OTLP_* variables', if any).
	OTLP string
	// spans and notices are the open export and its warning for the
	// status line (runInteractive sets them).
	spans   *otlp.Sink
	notices <-chan string
	// Roots are the directories a server's roots/list is answered with,
	// without a prompt (--root, repeatable; default none).
	Roots []string
	// LogLevel is the level requests ask the server to log at (--log-level,
	// default info; "none" asks for none).
	LogLevel string
	// MaxRounds caps a conversation's rounds (--max-rounds; session's
	// default when 0).
	MaxRounds int
	// Stderr is where errors that end the TUI before or after it ran are
	// written (os.Stderr when nil).
	Stderr io.Writer
}

// ParseCallFlag reads a --call flag: "TOOL" or 'TOOL={"json":"args"}'.
// It returns the tools/call params.
func ParseCallFlag(s string) (tool string, params json.RawMessage, err error) {
	tool, args, _ := strings.Cut(s, "=")
	tool = strings.TrimSpace(tool)
	if tool == "" {
		return "", nil, fmt.Errorf("--call %q: want TOOL or 'TOOL={\"json\":\"args\"}'", s)
	}
	if strings.TrimSpace(args) != "" {
		if err := runner.CheckObject(json.RawMessage(args), "the text after '='"); err != nil {
			return "", nil, fmt.Errorf("--call %s: %w", tool, err)
		}
	}
	params, err = runner.ToolCallParams(tool, json.RawMessage(args))
	if err != nil {
		return "", nil, fmt.Errorf("--call %s: %w", tool, err)
	}
	return tool, params, nil
}

func (c *cli) rootCommand() *cobra.Command {
	var tf target.Flags
	c.targets = append(c.targets, &tf)
	var callFlags []string
	opts := InteractiveOptions{}
	root := &cobra.Command{
		Use:   "inflight [URL] [flags] [-- CMD ARGS…]",
		Short: "An MCP client that shows every request in flight and cancels it properly",
		Long: `inflight is a terminal client for the Model Context Protocol (MCP). It shows every
request in flight with its timer, progress and timeout countdown, cancels any of them
with the signal the transport and protocol era require, and flags responses and
progress that arrive after a cancel.

With no server named, inflight starts its embedded demo server and connects to it.

Servers:
  inflight -- npx -y @modelcontextprotocol/server-everything   a stdio server
  inflight https://example.com/mcp -H 'Authorization: Bearer …' a Streamable HTTP server
  inflight https://example.com/sse --transport sse              an HTTP+SSE server (2024-11-05;
                                                                also found from the bare URL)
  inflight --config ~/.cursor/mcp.json --server github          from a client config file`,
		Version:       version.Version,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			positional, command := splitDash(args, cmd.ArgsLenAtDash())
			bare := ""
			switch {
			case len(positional) > 0 && !looksLikeURL(positional[0]):
				return fmt.Errorf("%q is neither a subcommand nor an http(s) URL; to start a stdio server, put it after --: inflight -- %s",
					positional[0], strings.Join(positional, " "))
			case len(positional) > 1:
				return fmt.Errorf("unexpected arguments %q", positional[1:])
			case len(positional) == 1:
				bare = positional[0]
			}
			for _, call := range callFlags {
				if _, _, err := ParseCallFlag(call); err != nil {
					return err
				}
			}
			if names, many := manyServers(&tf, command, bare); many {
				opts.Stderr = c.stderr
				c.code = runInteractiveMany(cmd.Context(), &tf, names, callFlags, opts)
				return nil
			}
			target, err := tf.Resolve(command, bare)
			if err != nil {
				return err
			}
			if target.Auth != nil {
				// Not on the terminal the TUI draws on: its protocol log
				// shows each authorization step, the URL among them.
				target.Auth.Prompt = nil
			}
			for _, call := range callFlags {
				_, params, err := ParseCallFlag(call)
				if err != nil {
					return err
				}
				opts.Calls = append(opts.Calls, ui.Call{Method: wire.MethodToolsCall, Params: params})
			}
			opts.Stderr = c.stderr
			c.code = runInteractive(cmd.Context(), target, opts)
			return nil
		},
	}
	root.SetVersionTemplate("inflight {{.Version}}\n")
	tf.Add(root.Flags())
	fs := root.Flags()
	fs.StringArrayVar(&callFlags, "call", nil, "send tools/call `TOOL` (or 'TOOL={\"json\":\"args\"}') once connected (repeatable)")
	durationVar(fs, &opts.Timeout, "timeout", session.DefaultTimeout, "default timeout of a request", true)
	durationVar(fs, &opts.MaxTimeout, "max-timeout", session.DefaultMaxTimeout, "maximum timeout, which progress never pushes back", true)
	fs.BoolVar(&opts.ResetOnProgress, "reset-on-progress", true, "restart a request's timeout on each progress notification")
	durationVar(fs, &opts.LateWindow, "late-window", session.DefaultLateWindow, "how long to watch for late traffic after a cancel", true)
	fs.StringVar(&opts.LogLevel, "log-level", "info", "ask for the server's log lines at `LEVEL` (debug, info, notice, warning, error, …, or none): per request in the modern era, logging/setLevel in the legacy one; the composer can change it")
	fs.StringArrayVar(&opts.Roots, "root", nil, "answer the server's roots/list with `DIR` (repeatable; default: no roots)")
	fs.IntVar(&opts.MaxRounds, "max-rounds", session.DefaultMaxRounds, "give up on a multi round-trip request after `N` rounds")
	fs.StringVar(&opts.TracePath, "trace", "", "record the session from the start to `FILE` (JSON Lines, as call and check write; replay reads it)")
	fs.StringVar(&opts.HARPath, "har", "", "write the session's HTTP exchanges to `FILE` as an HAR (HTTP Archive 1.2) when inflight ends, with its verdicts as comments")
	otlpVar(fs, &opts.OTLP)
	durationVar(fs, &opts.Grace, "grace", 0, "widen the window in which what follows a cancel counts as crossed in flight, beyond half the measured round trip", false)
	root.AddCommand(c.callCommand(), c.checkCommand(), c.replayCommand(), c.exportCommand(), c.demoServerCommand(), c.proxyCommand(), c.attachCommand(), c.authCommand())
	return root
}

// runInteractive opens the TUI on the target. It returns the process exit
// code: 0 after a normal quit, 1 when the UI failed, 2 for a bad target.
func runInteractive(ctx context.Context, target target.Target, opts InteractiveOptions) int {
	errOut := opts.Stderr
	if errOut == nil {
		errOut = os.Stderr
	}
	red := target.Redactor()
	fail := func(code int, err error) int {
		fmt.Fprintf(errOut, "inflight: %s\n", termsafe.Line(red.Error(err)))
		return code
	}
	if opts.HARPath != "" {
		if err := headless.HARCheck(target); err != nil {
			return fail(exitcode.Usage, err)
		}
	}
	if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		return fail(exitcode.Usage, errors.New("the interactive view needs a terminal; for scripts use `inflight call` or `inflight check`"))
	}
	var tw *trace.Writer
	if opts.TracePath != "" {
		f, err := trace.Create(opts.TracePath)
		if err != nil {
			return fail(exitcode.Usage, fmt.Errorf("--trace: %w", err))
		}
		defer f.Close()
		tw = trace.NewWriter(f, time.Now(), red)
		defer tw.Flush()
	}
	if opts.HARPath != "" {
		writeHAR, err := harOfTrace(&tw, opts.HARPath, red)
		if err != nil {
			return fail(exitcode.Usage, fmt.Errorf("--har: %w", err))
		}
		defer func() {
			if err := writeHAR(); err != nil {
				fmt.Fprintf(errOut, "inflight: --har: %s\n", termsafe.Line(red.Error(err)))
			}
		}()
	}
	warn := newTUIWarn(errOut)
	spans, err := otlp.Open(otlp.Options{Endpoint: opts.OTLP, Name: "inflight", Transport: target.Transport(), Redactor: red, Warn: warn.say})
	if err != nil {
		return fail(exitcode.Usage, err)
	}
	opts.spans, opts.notices = spans, warn.ch
	m, err := newInteractiveModel(ctx, target, opts, tw)
	if err != nil {
		_ = spans.Close()
		return fail(exitcode.Usage, err)
	}
	runErr := runProgram(ctx, m, m)
	warn.ended()
	_ = spans.Close()
	code := tuiExitCode(runErr, m.Interrupted())
	if code == 1 {
		return fail(code, runErr)
	}
	return code
}

// tuiExitCode is the TUI's exit code: 0 after q, 4 (cancelled, as call's)
// after Ctrl+C or a signal interrupted it, 1 when the program failed.
func tuiExitCode(runErr error, interrupted bool) int {
	switch {
	case runErr != nil && !errors.Is(runErr, tea.ErrInterrupted) && !errors.Is(runErr, context.Canceled):
		return 1
	case interrupted || errors.Is(runErr, tea.ErrInterrupted) || errors.Is(runErr, context.Canceled):
		return exitcode.Cancelled
	}
	return exitcode.Completed
}

// newInteractiveModel builds the TUI's model for the target: the client
// configuration, the --call requests and the tracker's defaults. It starts
// nothing; the model dials in Init.
func newInteractiveModel(ctx context.Context, target target.Target, opts InteractiveOptions, tw *trace.Writer) (*ui.Model, error) {
	o, err := interactiveOptions(ctx, target, opts, tw)
	if err != nil {
		return nil, err
	}
	return ui.New(o)
}

// interactiveOptions are the root model's options for the target.
func interactiveOptions(ctx context.Context, target target.Target, opts InteractiveOptions, tw *trace.Writer) (ui.Options, error) {
	red := target.Redactor()
	cfg, err := target.ClientConfig(ctx)
	if err != nil {
		return ui.Options{}, err
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
	trackerCfg.Grace = opts.Grace
	// The server's questions are answered in the TUI: a modern round
	// waits for the user (Converse), a legacy server's own requests go to
	// the UI (roots/list from --root at once).
	trackerCfg.Converse = true
	if opts.MaxRounds > 0 {
		trackerCfg.MaxRounds = opts.MaxRounds
	}
	roots, err := rootsResult(opts.Roots)
	if err != nil {
		return ui.Options{}, err
	}
	logLevel, err := ui.ParseLogLevel(opts.LogLevel)
	if err != nil {
		return ui.Options{}, fmt.Errorf("--%w", err)
	}
	questions := ui.NewQuestions(roots, 0)
	cfg.Answers = client.Answers{Elicitation: true, ElicitationURL: true, Sampling: true, Roots: true}
	// A trace (or an HAR, which is made of one) records each HTTP
	// exchange whole.
	cfg.RecordHTTP = tw != nil
	cfg.RecordHTTPBodies = opts.HARPath != ""
	cfg.ServerRequests = questions.Serve
	return ui.Options{
		Questions: questions,
		Roots:     roots,
		Target:    headerTarget(target),
		Transport: target.Transport(),
		// Every dial is a new connection; for stdio that restarts the
		// server, which is how R reconnects after the server died.
		Dial: func() (ui.Client, error) {
			c, err := client.New(cfg)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		Tracker:  trackerCfg,
		Trace:    tw,
		Spans:    opts.spans,
		Notices:  opts.notices,
		Calls:    opts.Calls,
		LogLevel: logLevel,
		Export: func(path string, snap ui.Snapshot) (string, error) {
			return writeTrace(path, snap, red)
		},
		Redact: red.String,
		Dark:   true,
	}, nil
}

// rootsResult is the roots/list result for --root directories (an empty
// list for none).
func rootsResult(dirs []string) (json.RawMessage, error) {
	if len(dirs) == 0 {
		return json.RawMessage(`{"roots":[]}`), nil
	}
	book, err := answer.New(nil, false, dirs)
	if err != nil {
		return nil, err
	}
	res, _ := book.Input(wire.MethodRootsList, wire.MethodRootsList, nil)
	return res, nil
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
	return runProgramThen(ctx, model, func() {
		m.Stop()
		if c := m.Conn(); c != nil {
			_ = c.Close()
		}
	}, opts...)
}

// runProgramThen is runProgram with what to release once the program
// ended: every timer, every connection (which stops stdio servers).
func runProgramThen(ctx context.Context, model tea.Model, release func(), opts ...tea.ProgramOption) error {
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
		p.Send(ui.ShutdownMsg{Reason: shutdownReason(ctx)})
		select {
		case <-done:
		case <-time.After(shutdownGrace):
			p.Kill()
		case <-runner.HurryOf(ctx):
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
	release()
	return runErr
}

// shutdownReason is the reason the TUI cancels with when ctx ends:
// "interrupted", naming the signal when it was not SIGINT — a hangup
// (the terminal closed) or SIGTERM.
func shutdownReason(ctx context.Context) string {
	var in runner.Interrupt
	if errors.As(context.Cause(ctx), &in) && in.Signal != "" && in.Signal != "SIGINT" {
		return "interrupted (" + in.Signal + ")"
	}
	return "interrupted"
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
func headerTarget(t target.Target) string {
	if t.Demo {
		return "embedded demo server"
	}
	return t.Describe()
}
