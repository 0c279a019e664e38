package cli

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"inflight/mcpconfig"
	"inflight/proxy"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
)

// proxyWrapHTTP is --wrap on a Streamable HTTP entry: its URL becomes the
// proxy's local one, and the command that runs the proxy is printed (a
// host launches a stdio server, but an HTTP proxy must be running before
// the host connects).
func (c *cli) proxyWrapHTTP(o wrapOptions, name string, fail func(error) error) error {
	listen := o.listen
	if listen == "" {
		// A port free now, so that the entry and the command agree.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fail(fmt.Errorf("find a free port: %w", err))
		}
		listen = l.Addr().String()
		l.Close()
	}
	if !proxy.LoopbackAddr(listen) {
		return fail(fmt.Errorf("--listen %q: the proxy serves only on a loopback address", listen))
	}
	w, upstream, backup, err := mcpconfig.WrapHTTPFile(o.config, o.server, listen, o.write)
	if err != nil {
		return fail(err)
	}
	red := redact.New(w.Server.Headers, w.Server.Env, w.Server.URL)
	fmt.Fprintf(c.stdout, "%s: %s\n", termsafe.Line(strconv.Quote(w.Name)), termsafe.Block(red.String(string(w.Entry))))
	run := []string{"inflight", "proxy", "--name", name}
	if o.trace != "" {
		abs, err := filepath.Abs(o.trace)
		if err != nil {
			return fail(fmt.Errorf("--trace: %w", err))
		}
		run = append(run, "--trace", abs)
	}
	if o.otlp != "" {
		run = append(run, "--otlp", o.otlp)
	}
	if o.lateWindow != session.DefaultLateWindow {
		run = append(run, "--late-window", o.lateWindow.String())
	}
	for _, r := range o.rules {
		run = append(run, "--rule", r)
	}
	if o.readOnly {
		run = append(run, "--read-only")
	}
	run = append(run, "--listen", listen, "--url", upstream)
	quoted := make([]string, len(run))
	for i, a := range run {
		quoted[i] = shellQuote(a)
	}
	fmt.Fprintf(c.stdout, "run the proxy (before the host connects): %s\n", termsafe.Line(red.String(strings.Join(quoted, " "))))
	if o.write {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: wrote %s (the original is %s); start the proxy as above, restart the host, and watch it with: inflight attach %s\n",
			termsafe.Line(o.config), termsafe.Line(backup), termsafe.Line(name))
	} else {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: %s is unchanged; --write rewrites it (keeping a backup and its comments)\n", termsafe.Line(o.config))
	}
	return nil
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
