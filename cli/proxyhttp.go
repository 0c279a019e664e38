package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"

	"inflight/exitcode"
	"inflight/proxy"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
)

// proxyHTTP is `inflight proxy --url UPSTREAM [--listen ADDR]`: the
// Streamable HTTP reverse proxy, until the context ends (Ctrl+C, SIGTERM).
func (c *cli) proxyHTTP(ctx context.Context, name, listenAddr, upstream string, out files, rules []string, lateWindow time.Duration, hu httpUI) error {
	red := redact.New(nil, nil, upstream)
	fail := func(err error) error {
		fmt.Fprintf(c.stderr, "inflight proxy: %s\n", termsafe.Line(red.Error(err)))
		c.code = exitcode.Usage
		return nil
	}
	parsed, ok := c.parseRules(rules)
	if !ok {
		return nil
	}
	up, err := url.Parse(upstream)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return fail(fmt.Errorf("--url %q: want an http:// or https:// URL", upstream))
	}
	if listenAddr == "" {
		listenAddr = "127.0.0.1:0"
	}
	if !proxy.LoopbackAddr(listenAddr) {
		return fail(fmt.Errorf("--listen %q: the proxy serves only on a loopback address (127.0.0.1:PORT, [::1]:PORT, localhost:PORT), so that nothing off this machine reaches the server through it", listenAddr))
	}
	switch {
	case name == "":
		name = proxy.CleanName(up.Hostname() + "-" + up.Port())
	case !proxy.ValidName(name):
		return fail(fmt.Errorf("--name %q: use letters, digits, '.', '_' and '-' (at most 64), starting with a letter or digit", name))
	}
	l, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return fail(fmt.Errorf("--listen: %w", err))
	}
	opts := proxy.Options{Name: name, Stderr: c.stderr, Tracker: session.Config{LateWindow: lateWindow},
		SocketDir: proxy.SocketDir(), Redactor: red, Rules: parsed,
		ReadOnly: hu.readOnly}
	done, err := proxyExtras(&opts, out.trace, red)
	if err != nil {
		l.Close()
		return fail(err)
	}
	defer done()
	writeHAR, err := proxyHAR(&opts, out.har, red)
	if err != nil {
		l.Close()
		return fail(err)
	}
	closeSpans, err := proxySpans(&opts, out.otlp, "http", c.stderr, red)
	if err != nil {
		l.Close()
		return fail(err)
	}
	defer func() {
		if err := writeHAR(); err != nil {
			fmt.Fprintf(c.stderr, "inflight proxy: --har: %s\n", termsafe.Line(red.Error(err)))
		}
	}()
	defer closeSpans()
	local := url.URL{Scheme: "http", Host: l.Addr().String(), Path: up.Path}
	fmt.Fprintf(c.stderr, "inflight proxy %s: listening on %s → %s\n", termsafe.Line(name), local.String(),
		termsafe.Line(red.String(up.Redacted())))
	var res proxy.Result
	quit := false
	if hu.tui() {
		res, quit, err = c.proxyHTTPWithView(ctx, name, local.String(), opts, func(ctx context.Context, opts proxy.Options) (proxy.Result, error) {
			return proxy.RunHTTP(ctx, l, upstream, opts)
		})
	} else {
		res, err = proxy.RunHTTP(ctx, l, upstream, opts)
	}
	if err != nil {
		return fail(err)
	}
	// A signal stops the proxy as a cancel does (4); the user's q on its
	// view is an ordinary end (0).
	if res.End == proxy.EndInterrupted && !quit {
		c.code = exitcode.Cancelled
	}
	return nil
}

// files are where the HTTP proxy writes its run: --trace, --har.
type files struct{ trace, har, otlp string }

// proxyHAR makes the HTTP proxy record its exchanges whole when a trace
// or an HAR is written (the trace's http_exchange lines, which the HAR is
// made of; export --har makes the same HAR from the trace), and write the
// HAR to path when it ends (writeHAR; nothing without --har).
func proxyHAR(opts *proxy.Options, path string, red *redact.Redactor) (writeHAR func() error, err error) {
	opts.RecordHTTP = opts.Trace != nil || path != ""
	opts.RecordHTTPBodies = path != ""
	if path == "" {
		return func() error { return nil }, nil
	}
	if opts.Trace == nil {
		// A trace kept to itself, with the proxy's senders: the HAR says
		// which cancels were the host's.
		opts.Trace = trace.NewWriter(io.Discard, time.Now(), red)
		opts.Trace.SetSenders("host", "server")
	}
	writeHAR, err = harOfTrace(&opts.Trace, path, red)
	if err != nil {
		return nil, fmt.Errorf("--har: %w", err)
	}
	return writeHAR, nil
}
