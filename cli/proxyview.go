package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"inflight/proxy"
	"inflight/termsafe"
)

// This file is the view in the HTTP proxy's own process: `inflight proxy
// --url U` whose stdin and stdout are a terminal opens the attach view on
// itself (--no-tui keeps it headless). The view connects to the proxy's
// own attach socket, the very stream and commands `inflight attach` uses,
// so there is one path for both; quitting it stops the proxy. (The stdio
// proxy never opens one: the host owns its stdin and stdout.) While the
// view is up, the proxy's own lines (the URL it listens on, refusals,
// flags) are kept and printed once the view is gone; the header shows the
// URL meanwhile.

// httpUI is how the HTTP proxy meets its terminal.
type httpUI struct {
	readOnly bool
	noTUI    bool
	// terminal overrides the terminal test (tests).
	terminal func() bool
}

// tui reports whether the proxy opens its view.
func (h httpUI) tui() bool {
	if h.noTUI {
		return false
	}
	if h.terminal != nil {
		return h.terminal()
	}
	return term.IsTerminal(os.Stdin.Fd()) && term.IsTerminal(os.Stdout.Fd())
}

// viewRunner runs a model to its end (runProgram; tests drive it).
type viewRunner func(ctx context.Context, conn net.Conn, hello proxy.Hello, br *bufio.Reader) error

// proxyHTTPWithView runs the proxy (run) with its view in this process,
// until the view quits (which stops the proxy) or ctx ends. The view's
// header names url, the URL to give the host (the proxy's own lines, which
// say it too, wait for the view's end). quit reports that the user quit
// the view (q): the proxy stopped because it was asked to, not
// interrupted, and exits 0.
func (c *cli) proxyHTTPWithView(ctx context.Context, name, url string, opts proxy.Options,
	run func(context.Context, proxy.Options) (proxy.Result, error)) (res proxy.Result, quit bool, err error) {
	return c.proxyWithView(ctx, name, url, opts, run, c.runProxyView)
}

func (c *cli) proxyWithView(ctx context.Context, name, url string, opts proxy.Options,
	run func(context.Context, proxy.Options) (proxy.Result, error), view viewRunner) (proxy.Result, bool, error) {
	held := &heldWriter{w: opts.Stderr, max: 256 << 10}
	opts.Stderr = held
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	type ran struct {
		res proxy.Result
		err error
	}
	done := make(chan ran, 1)
	ended := make(chan struct{})
	go func() {
		res, err := run(pctx, opts)
		done <- ran{res, err}
		close(ended)
	}()
	conn, br, hello, err := dialOwn(opts.SocketDir, name, ended)
	if err != nil {
		// No view: the proxy runs on headless, saying why.
		held.release()
		fmt.Fprintf(held, "inflight proxy %s: no view in this process (%s): running headless; Ctrl+C stops it\n",
			termsafe.Line(name), termsafe.Line(err.Error()))
		r := <-done
		return r.res, false, r.err
	}
	if url != "" {
		hello.Command = termsafe.Line(opts.Redactor.String(url))
	}
	err = view(pctx, conn, hello, br)
	// The view ended of itself, with no signal and no error: the user
	// quit it.
	quit := err == nil && ctx.Err() == nil
	conn.Close()
	// The view quit (q, Ctrl+C) or failed: this is the proxy's process, so
	// the proxy stops with it.
	stop()
	r := <-done
	held.release()
	if err != nil && !errors.Is(err, tea.ErrInterrupted) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(held, "inflight proxy %s: the view failed: %s\n", termsafe.Line(name), termsafe.Line(err.Error()))
	}
	return r.res, quit, r.err
}

// dialOwn connects to the proxy's own socket as soon as it is there (the
// proxy opens it first thing) and reads its hello, or says why not. A
// socket of that name that is another process's (a proxy already running
// under the name, which this one could not replace) is not this proxy's.
func dialOwn(dir, name string, ended <-chan struct{}) (net.Conn, *bufio.Reader, proxy.Hello, error) {
	if dir == "" {
		return nil, nil, proxy.Hello{}, errors.New("no attach socket")
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		conn, err := proxy.Attach(dir, name)
		if err == nil {
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			br := bufio.NewReaderSize(conn, 64<<10)
			hello, err := proxy.ReadHello(br)
			_ = conn.SetReadDeadline(time.Time{})
			switch {
			case err != nil:
				conn.Close()
				return nil, nil, proxy.Hello{}, err
			case hello.PID != os.Getpid():
				conn.Close()
				return nil, nil, proxy.Hello{}, fmt.Errorf("the socket %q is another proxy's (pid %d)", name, hello.PID)
			}
			return conn, br, hello, nil
		}
		select {
		case <-ended:
			return nil, nil, proxy.Hello{}, errors.New("the proxy ended")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, nil, proxy.Hello{}, err
		}
	}
}

// runProxyView is the view on a terminal.
func (c *cli) runProxyView(ctx context.Context, conn net.Conn, hello proxy.Hello, br *bufio.Reader) error {
	m, err := newAttachModel(hello, br, conn, true)
	if err != nil {
		return err
	}
	return runProgram(ctx, m, m)
}

// heldWriter keeps what is written (its latest max bytes) until release,
// then writes it to w, and from then on writes through.
type heldWriter struct {
	mu       sync.Mutex
	w        io.Writer
	buf      bytes.Buffer
	max      int
	cut      bool
	released bool
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return h.w.Write(p)
	}
	h.buf.Write(p)
	if over := h.buf.Len() - h.max; over > 0 {
		b := h.buf.Bytes()[over:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
		rest := bytes.Clone(b)
		h.buf.Reset()
		h.buf.Write(rest)
		h.cut = true
	}
	return len(p), nil
}

// release writes what was kept and lets what follows through.
func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	if h.cut {
		fmt.Fprintln(h.w, "(the proxy's earlier lines, written while its view was up, were cut)")
	}
	_, _ = h.w.Write(h.buf.Bytes())
	h.buf.Reset()
}
