package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"inflight/exitcode"
	"inflight/proxy"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
)

// proxyFlags are the proxy command's flags.
type proxyFlags struct {
	name, tracePath, listenAddr, upstream string
	otlp                                  string
	ruleTexts                             []string
	lateWindow                            time.Duration
	wrap                                  wrapOptions
	wrapping, readOnly, noTUI             bool

	// harPath is --har (with --url).
	harPath string
}

func (c *cli) proxyCommand() *cobra.Command {
	var f proxyFlags
	cmd := &cobra.Command{
		Use: `proxy [--name NAME] [--trace FILE] [--rule RULE]… -- CMD [ARGS…]
  inflight proxy [--name NAME] [--trace FILE] [--har FILE] [--listen 127.0.0.1:PORT] --url UPSTREAM
  inflight proxy --wrap --config FILE [--server NAME]… [--write] [--rule RULE]…`,
		Short:         "Stand between a host and a stdio server: forward every byte, record the host's requests",
		Long:          proxyLong,
		Args:          f.checkArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.wrapping:
				f.wrap.rules, f.wrap.trace, f.wrap.lateWindow, f.wrap.name = f.ruleTexts, f.tracePath, f.lateWindow, f.name
				f.wrap.listen, f.wrap.readOnly, f.wrap.otlp = f.listenAddr, f.readOnly, f.otlp
				if f.name != "" && !proxy.ValidName(f.name) {
					return fmt.Errorf("--name %q: use letters, digits, '.', '_' and '-' (at most 64), starting with a letter or digit", f.name)
				}
				return c.proxyWrap(f.wrap)
			case f.upstream != "":
				return c.proxyHTTP(cmd.Context(), f.name, f.listenAddr, f.upstream, files{trace: f.tracePath, har: f.harPath, otlp: f.otlp}, f.ruleTexts, f.lateWindow, httpUI{readOnly: f.readOnly, noTUI: f.noTUI})
			}
			return c.proxyStdio(cmd.Context(), f, args)
		},
	}
	f.add(cmd.Flags())
	return cmd
}

// proxyLong is the proxy command's help.
var proxyLong = `Run what a host (Claude Desktop, Cursor, an SDK's client) would run as its
server through inflight: the proxy starts CMD, forwards every byte between the
host (its stdin and stdout) and the server unchanged, passes the server's
stderr through, and records the host's requests: their states, progress, the
host's cancels (judged: a cancelled initialize, an unknown ID, a host that
leaves without cancelling are flagged on stderr) and what the server sends
after them. --trace FILE writes it all in the trace format; inflight replay
reads it. --otlp URL sends it as OpenTelemetry spans, the host's requests as
client spans. The proxy also streams what it records on a Unix socket, NAME.sock,
in a directory of yours alone; inflight attach lists the running proxies and
attaches to one. When the host closes stdin the proxy stops the server (close
its stdin, wait, SIGTERM, SIGKILL); when the server exits the proxy exits too.

With --url UPSTREAM the proxy is a Streamable HTTP reverse proxy instead: it
serves on --listen (a loopback address, 127.0.0.1:0 by default: a free port;
the URL to give the host is printed on stderr) and forwards every request to
UPSTREAM, headers and body as they come and the upstream's answer as it
streams (SSE events flushed as they arrive). A request with a foreign Origin
(not loopback) is refused with 403. Both eras pass through: legacy sessions
(Mcp-Session-Id), GET streams and resumption (Last-Event-ID); modern
per-request streams. A host closing a request's stream is judged: the cancel
on modern HTTP; on legacy HTTP, without notifications/cancelled, it is
flagged. A request whose Host is not a loopback name is refused with 403
too (DNS rebinding). --trace, the attach socket and --rule work as on stdio
(a cancel rule's signal is the era's: notifications/cancelled POSTed with
the host's session on legacy HTTP, closing the upstream request on modern
HTTP, where a race has nothing to cross and says so). Ctrl+C (or SIGTERM)
stops it. When its stdin and stdout are a terminal,
the HTTP proxy opens the attach view in its own process (its header shows
the URL to give the host; q or Ctrl+C there stops the proxy, and the proxy's
own lines are printed once the view is gone); --no-tui keeps it headless.

--rule makes the hard cases happen on purpose, on the host's requests it
matches (repeatable; the first rule that matches a request acts on it):

  ` + strings.ReplaceAll(proxy.RuleGrammar, "\n", "\n  ") + `

  inflight proxy --rule 'tools/call slow: delay 30s' -- node server.js
  inflight proxy --rule 'tools/call search: cancel 2s' --rule '*: race' -- ./srv

The keys of inflight attach do the same to one request the user picks while
it is in flight (the attach socket takes their commands); --read-only makes
the proxy refuse them, so that a viewer can only watch.

Everything a rule does is said on stderr ("injected delay 30s: …") and in the
trace ("injected" lines, and "injected" on the lines acted on). What no rule
acts on is forwarded byte for byte; a held response is passed on when the
proxy gets SIGUSR1 (kill -USR1 PID: every response held at that moment) or
when it ends.

--wrap puts the proxy into a host's config: it prints each stdio entry NAME
(--server, repeatable; without it every server) of FILE (Claude Desktop,
Claude Code, Cursor, VS Code) rewritten so that its
command is this inflight and its args "proxy --name NAME -- <the entry's
command and args>" (env, envFile and cwd kept; --rule, --trace, --otlp
and --late-window go along; with several servers --trace FILE becomes one
FILE-NAME per proxy); --write changes FILE in place once, keeping the original
as FILE.inflight-backup and every comment of FILE. An HTTP entry (a url) is
rewritten to the local URL of a reverse proxy, and the command that runs that
proxy is printed.`

// checkArgs checks the command line's arguments against the proxy's three
// forms: --wrap takes none, --url none, the stdio proxy a command.
func (f *proxyFlags) checkArgs(cmd *cobra.Command, args []string) error {
	if f.wrapping {
		if len(args) > 0 {
			return fmt.Errorf("--wrap takes the server from --config, not a command line (got %q)", args[0])
		}
		return nil
	}
	if f.wrap.config != "" || len(f.wrap.servers) > 0 || f.wrap.write {
		return errors.New("--config, --server and --write go with --wrap")
	}
	if f.harPath != "" && f.upstream == "" {
		return errors.New("--har goes with --url UPSTREAM: it records the HTTP exchanges between the host and the server")
	}
	if f.upstream != "" {
		if len(args) > 0 {
			return fmt.Errorf("--url proxies an HTTP server: give no command (got %q)", args[0])
		}
		return nil
	}
	if f.listenAddr != "" {
		return errors.New("--listen goes with --url UPSTREAM (the Streamable HTTP server to proxy)")
	}
	return cobra.MinimumNArgs(1)(cmd, args)
}

// add defines the proxy's flags in fs.
func (f *proxyFlags) add(fs *pflag.FlagSet) {
	// Everything after CMD is the server's, flags included.
	fs.SetInterspersed(false)
	fs.StringVar(&f.name, "name", "", "name of this proxy in its messages and its attach socket (default: CMD's base name)")
	fs.StringArrayVar(&f.ruleTexts, "rule", nil, "make something happen to the host's requests a `RULE` matches (see above; repeatable)")
	fs.StringVar(&f.tracePath, "trace", "", "record the proxied traffic to `FILE` (JSON Lines; \"by\" says host or server; replay reads it)")
	fs.StringVar(&f.harPath, "har", "", "with --url: write the exchanges between the host and the server to `FILE` as an HAR (HTTP Archive 1.2) when the proxy ends, with its verdicts as comments")
	otlpVar(fs, &f.otlp)
	fs.StringVar(&f.upstream, "url", "", "proxy the Streamable HTTP server at `UPSTREAM` instead of running a command")
	fs.StringVar(&f.listenAddr, "listen", "", "with --url: serve the proxy on `ADDR`, a loopback address (default 127.0.0.1:0, a free port)")
	fs.BoolVar(&f.readOnly, "read-only", false, "refuse the commands of inflight attach's keys (hold, delay, drop, cancel, race): viewers only watch")
	fs.BoolVar(&f.noTUI, "no-tui", false, "with --url: run headless even when stdin and stdout are a terminal (no view in this process)")
	fs.BoolVar(&f.wrapping, "wrap", false, "print the --config entry rewritten to run through inflight proxy (see above)")
	fs.StringVar(&f.wrap.config, "config", "", "with --wrap: the host's MCP config `FILE`")
	fs.StringArrayVar(&f.wrap.servers, "server", nil, "with --wrap: the `NAME` of a server in --config to wrap (repeatable; default: every server)")
	fs.BoolVar(&f.wrap.write, "write", false, "with --wrap: change the file in place, keeping a backup (FILE.inflight-backup) and its comments")
	durationVar(fs, &f.lateWindow, "late-window", session.DefaultLateWindow, "how long to watch for late traffic after the host's cancel", true)
}

// proxyStdio runs the stdio proxy: args is the server's command line, the
// host is inflight's own stdin and stdout.
func (c *cli) proxyStdio(ctx context.Context, f proxyFlags, args []string) error {
	red := redact.New(nil, nil, "", args...)
	name := f.name
	switch {
	case name == "":
		name = proxy.CleanName(filepath.Base(args[0]))
	case !proxy.ValidName(name):
		return fmt.Errorf("--name %q: use letters, digits, '.', '_' and '-' (at most 64), starting with a letter or digit", name)
	}
	opts := proxy.Options{Name: name, Stderr: c.stderr, Tracker: session.Config{LateWindow: f.lateWindow},
		SocketDir: proxy.SocketDir(), Redactor: red, ReadOnly: f.readOnly}
	fail := func(err error) error {
		fmt.Fprintf(c.stderr, "inflight proxy: %s\n", termsafe.Line(red.Error(err)))
		c.code = exitcode.Usage
		return nil
	}
	rules, ok := c.parseRules(f.ruleTexts)
	if !ok {
		return nil
	}
	opts.Rules = rules
	done, err := proxyExtras(&opts, f.tracePath, red)
	if err != nil {
		return fail(err)
	}
	defer done()
	closeSpans, err := proxySpans(&opts, f.otlp, "stdio", c.stderr, red)
	if err != nil {
		return fail(err)
	}
	defer closeSpans()
	res, err := proxy.Run(ctx, proxy.Host{In: os.Stdin, Out: c.stdout}, args[0], args[1:], opts)
	if err != nil {
		return fail(err)
	}
	switch res.End {
	case proxy.EndServerExited:
		c.code = exitcode.ConnectionLost
	case proxy.EndInterrupted:
		c.code = exitcode.Cancelled
	}
	return nil
}

// parseRules parses the proxy's --rule flags; a rule that does not parse
// is said on stderr, with the grammar, and the exit code is usage.
func (c *cli) parseRules(texts []string) ([]proxy.Rule, bool) {
	rules, err := proxy.ParseRules(texts)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(c.stderr, "inflight proxy: --%s\n", termsafe.Line(line))
		}
		fmt.Fprintf(c.stderr, "a rule is:\n  %s\n", strings.ReplaceAll(proxy.RuleGrammar, "\n", "\n  "))
		c.code = exitcode.Usage
		return nil, false
	}
	return rules, true
}

// proxyExtras sets up what both proxies take beside their options: the
// --trace file (both sides named) and SIGUSR1's release, wherever a
// response may be held (a rule, or a key in inflight attach: any proxy
// but a read-only one without rules). done undoes them, the trace first.
func proxyExtras(opts *proxy.Options, tracePath string, red *redact.Redactor) (done func(), err error) {
	var undo []func()
	done = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if len(opts.Rules) > 0 || !opts.ReadOnly {
		release, stop := proxy.NotifyRelease()
		opts.Release = release
		undo = append(undo, stop)
	}
	if tracePath != "" {
		// Where inflight attach finds the run once the proxy has ended,
		// from whatever directory it is run.
		if opts.TracePath, err = filepath.Abs(tracePath); err != nil {
			done()
			return nil, fmt.Errorf("--trace: %w", err)
		}
		f, err := trace.Create(tracePath)
		if err != nil {
			done()
			return nil, fmt.Errorf("--trace: %w", err)
		}
		tw := trace.NewWriter(f, time.Now(), red)
		tw.SetSenders("host", "server")
		opts.Trace = tw
		undo = append(undo, func() { f.Close() }, func() { tw.Close() })
	}
	return done, nil
}
