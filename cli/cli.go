// Command inflight is an interactive terminal client for the Model Context
// Protocol that shows every request in flight and cancels any of them with the
// signal its transport and protocol era require.
//
// Run with no arguments it opens the TUI on the embedded demo server. The
// subcommands are headless: `call` sends one request and follows it to the
// end, `check` runs a cancellation compliance battery, `replay` prints a
// trace file, `demo-server` serves the demo over stdio or HTTP.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"inflight/check"
	"inflight/demo"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui"
	"inflight/wire"
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
		interrupt(check.Interrupt{Signal: name})
		<-sigs
		close(hurry)
		signal.Reset(os.Interrupt, syscall.SIGTERM)
	}()
	os.Exit(run(check.WithHurry(ctx, hurry), os.Args[1:], os.Stdout, os.Stderr))
}

// cli is what the commands share: where they write and the exit code the
// one that ran chose.
type cli struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	code   int
	// targets are the target flags of every command, read when an error is
	// printed to know which secrets the command line holds.
	targets []*targetFlags
	// jsonUsage prints a usage failure of a command as that command's
	// --json object, when --json was given; run calls it for the command
	// that failed.
	jsonUsage map[*cobra.Command]func(msg string, red *redact.Redactor)
}

// run executes inflight with the given arguments and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, stdout: stdout, stderr: stderr, jsonUsage: map[*cobra.Command]func(string, *redact.Redactor){}}
	root := c.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if cmd, err := root.ExecuteContextC(ctx); err != nil {
		// A usage error can quote a flag's value (url.Parse quotes the
		// whole URL; pflag quotes an unknown flag as typed): redact the
		// secrets the command line holds and make it inert before it
		// reaches the terminal.
		red := c.commandLineRedactor(args)
		msg := red.Error(err)
		if f := c.jsonUsage[cmd]; f != nil {
			f(msg, red)
		}
		// Name the command that failed, and point at its own help.
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), termsafe.Line(msg))
		fmt.Fprintf(stderr, "run '%s --help' for usage\n", cmd.CommandPath())
		return check.ExitUsage
	}
	return c.code
}

// commandLineRedactor knows the secrets of the command line as typed: the
// -H, --env and --url values of every command (only the one that ran has
// any) and every argument that looks like a URL (a bare URL). It works from
// the raw values, since a usage error may be about one that did not parse.
func (c *cli) commandLineRedactor(args []string) *redact.Redactor {
	var b redact.Builder
	for _, tf := range c.targets {
		for _, h := range tf.headers {
			if name, value, ok := strings.Cut(h, ":"); ok {
				b.AddHeader(strings.TrimSpace(name), strings.TrimSpace(value))
			}
		}
		b.AddEnv(tf.env)
		if tf.url != "" {
			b.AddURL(tf.url)
		}
	}
	for _, a := range args {
		if looksLikeURL(a) {
			b.AddURL(a)
		}
	}
	return b.Build()
}

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
	params, err = check.ToolCallParams(tool, json.RawMessage(args))
	if err != nil {
		return "", nil, fmt.Errorf("--call %s: %w", tool, err)
	}
	return tool, params, nil
}

func (c *cli) rootCommand() *cobra.Command {
	var tf targetFlags
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
  inflight --config ~/.cursor/mcp.json --server github          from a client config file`,
		Version:       check.Version,
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
			target, err := tf.resolve(command, bare)
			if err != nil {
				return err
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
	tf.add(root.Flags())
	fs := root.Flags()
	fs.StringArrayVar(&callFlags, "call", nil, "send tools/call `TOOL` (or 'TOOL={\"json\":\"args\"}') once connected (repeatable)")
	durationVar(fs, &opts.Timeout, "timeout", session.DefaultTimeout, "default timeout of a request", true)
	durationVar(fs, &opts.MaxTimeout, "max-timeout", session.DefaultMaxTimeout, "maximum timeout, which progress never pushes back", true)
	fs.BoolVar(&opts.ResetOnProgress, "reset-on-progress", true, "restart a request's timeout on each progress notification")
	durationVar(fs, &opts.LateWindow, "late-window", session.DefaultLateWindow, "how long to watch for late traffic after a cancel", true)
	root.AddCommand(c.callCommand(), c.checkCommand(), c.replayCommand(), c.demoServerCommand())
	return root
}

func (c *cli) callCommand() *cobra.Command {
	var tf targetFlags
	c.targets = append(c.targets, &tf)
	var o check.CallOptions
	var tool, toolArgs string
	cmd := &cobra.Command{
		Use:   "call [METHOD [PARAMS_JSON]] [flags] [-- CMD ARGS…]",
		Short: "Send one request and follow it to the end",
		Long: `Send one request and follow it to the end: progress as it comes (a bar on a terminal,
plain lines otherwise), the cancel (--cancel-after, a timeout, Ctrl+C) with the signal
the transport and era require, late traffic for --late-window, then a summary.

Exit codes: 0 completed; 1 a tool error result or a JSON-RPC error; 2 usage or
connection failure; 3 timed out; 4 cancelled; 5 connection lost.`,
		Example: `  inflight call --tool slow --args '{"seconds":5}' --cancel-after 1s
  inflight call tools/list --json -- node server.js
  inflight call resources/read '{"uri":"demo://clock"}' --url http://127.0.0.1:8080/mcp`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			positional, command := splitDash(args, cmd.ArgsLenAtDash())
			for _, a := range positional {
				if looksLikeURL(a) {
					return fmt.Errorf("a server URL goes with --url: inflight call --url %s METHOD", a)
				}
			}
			if len(positional) > 2 {
				return fmt.Errorf("at most METHOD and PARAMS_JSON before --, got %d arguments", len(positional))
			}
			if len(positional) > 0 {
				o.Method = positional[0]
			}
			if len(positional) > 1 {
				o.Params = json.RawMessage(positional[1])
			}
			switch {
			case tool != "":
				if o.Method != "" && o.Method != "tools/call" {
					return fmt.Errorf("--tool is tools/call; it cannot go with method %q", o.Method)
				}
				if len(o.Params) > 0 {
					return errors.New("give the tool's arguments with --args, not as PARAMS_JSON")
				}
				params, err := check.ToolCallParams(tool, json.RawMessage(toolArgs))
				if err != nil {
					return err
				}
				o.Method, o.Params = "tools/call", params
			case toolArgs != "":
				return errors.New("--args goes with --tool NAME")
			case o.Method == "":
				return errors.New("give a METHOD (and PARAMS_JSON), or --tool NAME --args JSON")
			}
			target, err := tf.resolve(command, "")
			if err != nil {
				return err
			}
			o.Target = target
			if o.JSON {
				// Stdout carries exactly one JSON object; a person at the
				// terminal still sees the run on stderr.
				if isTerminal(c.stderr) {
					o.Live, o.Bar = c.stderr, true
				}
			} else {
				o.Live, o.Bar = c.stdout, isTerminal(c.stdout)
			}
			c.code = check.Call(cmd.Context(), o, c.stdout, c.stderr)
			return nil
		},
	}
	c.jsonUsage[cmd] = func(msg string, red *redact.Redactor) {
		if o.JSON {
			// The README promises the object on usage failures too, with
			// state not_sent, so that a script always has one to read.
			check.WriteCallNotSent(c.stdout, check.CallOptions{Method: o.Method, Target: tf.rawTarget()}, check.ExitUsage, msg, red)
		}
	}
	tf.add(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&tool, "tool", "", "call tool `NAME` (short for METHOD tools/call)")
	fs.StringVar(&toolArgs, "args", "", "the tool's arguments, a `JSON` object")
	durationVar(fs, &o.Timeout, "timeout", check.DefaultCallTimeout, "timeout of the request", true)
	fs.BoolVar(&o.ResetOnProgress, "reset-on-progress", true, "restart the timeout on each progress notification")
	durationVar(fs, &o.MaxTimeout, "max-timeout", check.DefaultCallMaxTimeout, "maximum timeout, which progress never pushes back", true)
	durationVar(fs, &o.CancelAfter, "cancel-after", 0, "cancel the request after `D` (0: never)", false)
	durationVar(fs, &o.LateWindow, "late-window", check.DefaultLateWindow, "how long to watch for a late response or progress after a cancel", true)
	fs.BoolVar(&o.JSON, "json", false, "print exactly one JSON object at the end (see README)")
	fs.StringVar(&o.TracePath, "trace", "", "write a trace of the run to `FILE` (JSON Lines)")
	return cmd
}

func (c *cli) checkCommand() *cobra.Command {
	var tf targetFlags
	c.targets = append(c.targets, &tf)
	var o check.CheckOptions
	var toolArgs string
	cmd := &cobra.Command{
		Use:   "check [URL] [flags] [-- CMD ARGS…]",
		Short: "Run a cancellation compliance battery against a server",
		Long: `Run a cancellation compliance battery against a server, using one slow tool that
reports progress (the demo's slow by default): a full run (progress increases, none after
the response), a cancel mid-way (progress stops, no response, how long until quiet), a
cancel of a finished request, of an unknown ID and malformed cancels (the server must
stay healthy), server/discover on modern servers, a closed stream on modern HTTP, and
server-sent notifications/cancelled.

Each finding is PASS, WARN or FAIL, quoting the spec's MUST or SHOULD and its page;
a connection lost part-way is an ERROR finding, and the checks not run are skipped.
Exit codes: 0 no MUST failed; 1 a MUST failed; 2 usage or connection failure (also
lost part-way); 4 interrupted.`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			positional, command := splitDash(args, cmd.ArgsLenAtDash())
			bare := ""
			switch {
			case len(positional) > 1 || (len(positional) == 1 && !looksLikeURL(positional[0])):
				return fmt.Errorf("at most a server URL before --, got %q (a stdio server's command goes after --)", positional)
			case len(positional) == 1:
				bare = positional[0]
			}
			target, err := tf.resolve(command, bare)
			if err != nil {
				return err
			}
			o.Target = target
			o.Args = json.RawMessage(toolArgs)
			if !o.JSON {
				o.Live = c.stdout
			}
			c.code = check.Check(cmd.Context(), o, c.stdout, c.stderr)
			return nil
		},
	}
	c.jsonUsage[cmd] = func(msg string, red *redact.Redactor) {
		if o.JSON {
			check.WriteCheckNotRun(c.stdout, check.CheckOptions{Tool: o.Tool, Args: json.RawMessage(toolArgs), Target: tf.rawTarget()},
				check.ExitUsage, msg, red)
		}
	}
	tf.add(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&o.Tool, "tool", check.DefaultCheckTool, "slow tool `NAME` that reports progress")
	fs.StringVar(&toolArgs, "args", "", "the tool's arguments, a `JSON` object (demo slow/stubborn: {\"seconds\":1.5,\"steps\":6})")
	durationVar(fs, &o.CancelAfter, "cancel-after", check.DefaultCheckCancelAfter, "cancel mid-way at the first progress, or after `D` without any", true)
	durationVar(fs, &o.LateWindow, "late-window", check.DefaultCheckLateWindow, "how long to watch after each cancel", true)
	durationVar(fs, &o.Grace, "grace", check.DefaultCheckGrace, "messages this soon after a cancel crossed it in flight and are allowed", false)
	durationVar(fs, &o.Timeout, "timeout", check.DefaultCheckTimeout, "timeout of each request", true)
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&o.TracePath, "trace", "", "write a trace of the battery to `FILE` (JSON Lines)")
	return cmd
}

func (c *cli) replayCommand() *cobra.Command {
	var o check.ReplayOptions
	cmd := &cobra.Command{
		Use:           "replay FILE",
		Short:         "Print a trace file as a table of what happened to each request",
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			c.code = check.Replay(args[0], o, c.stdout, c.stderr)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "also show the client's own housekeeping (era probe, initialize, pings)")
	return cmd
}

func (c *cli) demoServerCommand() *cobra.Command {
	var addr string
	var tick time.Duration
	var useHTTP bool
	cmd := &cobra.Command{
		Use:   "demo-server [--http ADDR]",
		Short: "Serve the embedded demo MCP server (stdio, or Streamable HTTP at /mcp)",
		Long: `Serve the embedded demo MCP server over stdio (the default), or over Streamable HTTP
at /mcp with --http ADDR (127.0.0.1:0 picks a free port; the URL is printed on stderr).
Its tools show every cancellation behaviour: slow, stubborn, silent, flood, fail,
end_subscriptions; resource demo://clock; prompt explain_cancellation.`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			useHTTP = cmd.Flags().Changed("http")
			opts := demo.Options{Logger: c.stderr, TickInterval: tick}
			ctx := cmd.Context()
			if useHTTP {
				err := demo.ServeHTTP(ctx, addr, opts, func(url string) {
					fmt.Fprintf(c.stderr, "inflight demo server: %s\n", url)
				})
				if err != nil && !errors.Is(err, context.Canceled) {
					fmt.Fprintf(c.stderr, "inflight demo-server: %s\n", err)
					c.code = 1
				}
				return nil
			}
			opts.NoTimestamps = true // the client stamps the stderr lines it reads
			srv := demo.New(opts)
			defer srv.Close()
			if err := srv.ServeStdio(ctx, os.Stdin, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(c.stderr, "inflight demo-server: %s\n", err)
				c.code = 1
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "http", "127.0.0.1:0", "serve Streamable HTTP on `ADDR` instead of stdio")
	cmd.Flags().DurationVar(&tick, "tick", 0, "how often demo://clock changes (default 3s)")
	return cmd
}

// isTerminal reports whether w is a terminal (a character device), so that
// progress is drawn as a bar rather than printed as lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
