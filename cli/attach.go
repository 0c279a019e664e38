package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"inflight/exitcode"
	"inflight/proxy"
	"inflight/replay"
	"inflight/session"
	"inflight/source"
	"inflight/termsafe"
	"inflight/ui"
	"inflight/wire"
)

func (c *cli) attachCommand() *cobra.Command {
	var plain, all bool
	cmd := &cobra.Command{
		Use:   "attach [NAME | --all]",
		Short: "List the proxies, watch what one sees, or replay the run of one that ended",
		Long: `With no NAME, list the proxies running for you (inflight proxy), with their
process, command and start. With NAME, open the interactive view on that
proxy: the host's requests (marked ⇄) in the list, with their states, timers,
progress and flags — the host's cancels judged, late answers flagged — the
detail and the protocol log. On a selected host request, keys make things
happen through the proxy: d delay its response (asks for how long, 30s by
default), h hold it, u release a held one (or take back a hold not yet
taken: its response then passes on untouched), D drop it, z cancel it upstream
(the server gets notifications/cancelled, the host error -32800), Z the same
cancel leaving the host waiting, t race (hold the response and pass it on
the instant the host's cancel comes). The row says what the proxy did
("◇ held by you · 4.1s", "released after 4.1s"). A proxy started with
--read-only takes no commands: the view only watches. q or Ctrl+C detaches,
leaving the proxy and the host running.

With --plain (or when stdout is not a terminal), follow what the proxy
records as trace lines instead (JSON, the format replay reads): its hello,
its recent lines, then the new ones until the proxy ends. Piped or
redirected, the lines are the proxy's bytes exactly; on a terminal, any
control character or escape sequence in them is shown as a visible
placeholder instead of reaching the terminal.

attach refuses a socket directory, or a socket, that is not yours alone
(another user's, or one others may write in), as the proxy refuses to
listen there.

A proxy started with --trace FILE leaves where FILE is beside its socket,
and keeps it there after it ends: attach NAME then opens the run it
recorded, as inflight replay FILE does (the interactive view with its
scrubber; with --plain or when stdout is not a terminal, the table of what
happened to each request), saying that the proxy has ended. The list shows
such a proxy as "ended (trace FILE)".

With --all, every running proxy opens in one view: their requests in one list
with a SERVER column (f filters by state, / searches the proxies' names and
the requests), the header counting per proxy; the keys above act on the
selected row's proxy. Proxies started later join the view within a second;
one that ends is marked ended, its rows kept.`,
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := proxy.SocketDir()
			if all {
				if len(args) > 0 || plain {
					return errors.New("--all opens every proxy in the interactive view: it takes no NAME and no --plain")
				}
				if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
					return errors.New("--all opens the interactive view, which needs a terminal; inflight attach --plain NAME follows one proxy")
				}
				c.code = c.attachAll(cmd.Context(), dir)
				return nil
			}
			if len(args) == 0 {
				running, err := proxy.List(dir)
				if err != nil {
					fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
					c.code = exitcode.Usage
					return nil
				}
				if len(running) == 0 {
					fmt.Fprintf(c.stdout, "no proxy is running (sockets in %s)\n", termsafe.Line(dir))
					return nil
				}
				live := 0
				for _, r := range running {
					if r.Ended || (r.Stale && r.Trace != "") {
						fmt.Fprintf(c.stdout, "%-20s %s\n", termsafe.Line(r.Proxy), endedLine(r))
						continue
					}
					if r.Stale {
						fmt.Fprintf(c.stdout, "%-20s (stale socket: its proxy is gone; the next proxy of that name replaces it)\n", termsafe.Line(r.Proxy))
						continue
					}
					fmt.Fprintf(c.stdout, "%-20s pid %-7d since %s  %s\n", termsafe.Line(r.Proxy), r.PID,
						r.Started.Local().Format(time.DateTime), termsafe.Line(r.Command))
					live++
				}
				if live > 1 {
					fmt.Fprintln(c.stdout, "inflight attach --all opens them all in one view")
				}
				return nil
			}
			way, err := attachDecision(dir, args[0])
			if err != nil {
				for _, line := range strings.Split(err.Error(), "\n") {
					fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(line))
				}
				c.code = exitcode.Usage
				return nil
			}
			if way.trace != "" {
				view := !plain && isTerminal(c.stdout) && term.IsTerminal(os.Stdin.Fd())
				c.code = c.attachEnded(cmd.Context(), args[0], way.trace, view, defaultReplayFlags())
				return nil
			}
			conn := way.conn
			if !plain && term.IsTerminal(os.Stdin.Fd()) && term.IsTerminal(os.Stdout.Fd()) {
				c.code = c.attachView(cmd.Context(), conn)
				return nil
			}
			go func() {
				<-cmd.Context().Done()
				conn.Close() // Ctrl+C: stop following; the proxy runs on
			}()
			_ = copyPlain(c.stdout, conn, isTerminal(c.stdout))
			conn.Close()
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "open every running proxy in one view (a SERVER column, the header counting per proxy); proxies started later join it, and one that ends keeps its rows, marked ended")
	cmd.Flags().BoolVar(&plain, "plain", false, "print the proxy's trace lines (of one that ended, the table of the run it recorded) instead of opening the interactive view")
	return cmd
}

// attachWay is what attach NAME opens: the live proxy's socket, or,
// once the proxy has ended, the trace it recorded.
type attachWay struct {
	conn  net.Conn // the live proxy's socket
	trace string   // the ended proxy's trace file, which is there
}

// noProxyHint follows the error of attach NAME when neither a proxy nor
// its recorded run is there.
const noProxyHint = "a proxy started with --trace FILE can be replayed after it ends: inflight attach NAME then opens the run it recorded"

// attachDecision says what attach name opens in dir: the proxy's socket
// when one answers there; else the trace the proxy recorded, when it left
// where (NAME.trace) and the file is there. The error says what is
// missing, on more than one line when it ends with a hint.
func attachDecision(dir, name string) (attachWay, error) {
	conn, err := proxy.Attach(dir, name)
	if err == nil {
		return attachWay{conn: conn}, nil
	}
	if errors.Is(err, proxy.ErrUntrusted) {
		return attachWay{}, err
	}
	path, terr := proxy.RecordedTrace(dir, name)
	switch {
	case errors.Is(terr, proxy.ErrNoTrace):
		return attachWay{}, fmt.Errorf("%w\n%s", err, noProxyHint)
	case terr != nil:
		return attachWay{}, fmt.Errorf("no proxy named %q is running, and what it left of its trace is refused: %w", name, terr)
	}
	if _, serr := os.Stat(path); serr != nil {
		if errors.Is(serr, fs.ErrNotExist) {
			return attachWay{}, fmt.Errorf("proxy %q has ended, and the trace it recorded, %s, is gone (removed or moved since)", name, path)
		}
		return attachWay{}, fmt.Errorf("proxy %q has ended, and the trace it recorded cannot be read: %w", name, serr)
	}
	return attachWay{trace: path}, nil
}

// endedLine is how the list shows a proxy that ended leaving its trace.
func endedLine(r proxy.Running) string {
	line := "ended (trace " + termsafe.Line(r.Trace) + ")"
	if _, err := os.Stat(r.Trace); errors.Is(err, fs.ErrNotExist) {
		line = "ended (trace " + termsafe.Line(r.Trace) + ", gone since)"
	}
	if r.Stale {
		line += "; its proxy left a stale socket, which the next proxy of that name replaces"
	}
	return line
}

// attachEnded opens the run the ended proxy name recorded at path, as
// inflight replay does: the interactive view (view), else the table; it
// says first that the proxy has ended.
func (c *cli) attachEnded(ctx context.Context, name, path string, view bool, f *replayFlags) int {
	fmt.Fprintf(c.stderr, "inflight attach: proxy %s has ended; this is the run it recorded (%s)\n", termsafe.Line(name), termsafe.Line(path))
	if view {
		return c.openReplay(ctx, path, "attach", "attach "+name+" · ended · replay "+termsafe.Line(path), f)
	}
	return replay.File(path, replay.Options{Stop: ctx.Done()}, c.stdout, c.stderr)
}

// attachView opens the TUI on a proxy's stream and returns the exit code:
// 0 when the user detached (q, Ctrl+C), 1 when the view failed.
func (c *cli) attachView(ctx context.Context, conn net.Conn) int {
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	hello, err := proxy.ReadHello(br)
	if err != nil {
		fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
		return 1
	}
	m, err := newAttachModel(hello, br, conn, false)
	if err != nil {
		fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
		return 1
	}
	if err := runProgram(ctx, m, m); err != nil && !errors.Is(err, tea.ErrInterrupted) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
		return 1
	}
	return exitcode.Completed
}

// newAttachModel is the TUI's model on a proxy whose stream, after its
// hello, r reads; commands, when the proxy takes them, go to w (the same
// connection). inProcess: the view runs in the proxy's own process.
func newAttachModel(hello proxy.Hello, r io.Reader, w io.Writer, inProcess bool) (*ui.Model, error) {
	opts, err := attachOptions(hello, r, w, inProcess)
	if err != nil {
		return nil, err
	}
	return ui.New(opts)
}

// attachOptions are the root model's options on a proxy (newAttachModel).
func attachOptions(hello proxy.Hello, r io.Reader, w io.Writer, inProcess bool) (ui.Options, error) {
	cfg := source.AttachConfig{Proxy: source.Proxy{Name: hello.Proxy, Command: hello.Command, Start: hello.Started, HistoryCut: hello.HistoryCut}}
	if hello.Acts && w != nil {
		cfg.Commands, cfg.Encode = w, encodeCommand
	}
	src := source.NewAttach(r, cfg)
	a := &ui.Attach{Proxy: src.Proxy(), InProcess: inProcess}
	if src.Acts() {
		a.Act = src.Act
	}
	// The header and the help name the host's transport before the
	// host's first message says its era.
	transport := hello.Transport
	switch {
	case transport != "":
	case inProcess:
		transport = "http" // only the HTTP proxy has a view in its process
	default:
		transport = "stdio" // an older proxy's hello, which says none
	}
	return ui.Options{
		Target:    "attach " + hello.Proxy + " · host <-> " + hello.Command,
		Transport: transport,
		Attach:    a,
		Source:    src,
		Tracker:   session.Config{LateWindow: time.Duration(hello.LateWindow)},
		Export: func(path string, snap ui.Snapshot) (string, error) {
			return writeTrace(path, snap, nil)
		},
		Dark: true,
	}, nil
}

// encodeCommand is a view's command as the proxy reads it.
func encodeCommand(act string, id wire.ID, after time.Duration) []byte {
	c := proxy.Command{Act: act}
	if act != proxy.ActReleaseAll {
		c.ID = &id
	}
	if after > 0 {
		c.After = after.String()
	}
	return proxy.EncodeCommand(c)
}

// copyPlain copies what attach --plain follows to w. The trace writer
// escapes what it records, but the socket's peer may not be a proxy: on
// a terminal every control character and escape sequence is shown as a
// placeholder (termsafe.Block), so that nothing read drives the
// terminal; piped, the bytes pass exactly.
func copyPlain(w io.Writer, r io.Reader, terminal bool) error {
	if !terminal {
		_, err := io.Copy(w, r)
		return err
	}
	buf := make([]byte, 32<<10)
	var carry int // bytes of a rune cut by the read, kept for the next
	for {
		n, err := r.Read(buf[carry:])
		n += carry
		carry = 0
		if err == nil {
			carry = cutRune(buf[:n])
		}
		if n-carry > 0 {
			if _, werr := io.WriteString(w, termsafe.Block(string(buf[:n-carry]))); werr != nil {
				return werr
			}
		}
		copy(buf, buf[n-carry:n])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// cutRune is how many bytes at b's end start a UTF-8 sequence that the
// next read may complete (0 when b ends on a whole rune or on bytes no
// read can make valid).
func cutRune(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return 0 // ASCII: nothing after it is cut
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}
