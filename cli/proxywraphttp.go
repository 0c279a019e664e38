package cli

import (
	"fmt"
	"net"
	"strings"

	"inflight/mcpconfig"
	"inflight/proxy"
	"inflight/redact"
	"inflight/session"
)

// wrapHTTPEntry is --wrap on a Streamable HTTP entry n: its URL becomes
// the proxy's local one, and the command that runs the proxy (name) is
// returned to print (a host launches a stdio server, but an HTTP proxy
// must be running before the host connects).
func wrapHTTPEntry(data []byte, o wrapOptions, n, name, tracePath string) (wrappedEntry, []byte, error) {
	listen := o.listen
	if listen == "" {
		// A port free now, so that the entry and the command agree.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return wrappedEntry{}, nil, fmt.Errorf("find a free port: %w", err)
		}
		listen = l.Addr().String()
		l.Close()
	}
	if !proxy.LoopbackAddr(listen) {
		return wrappedEntry{}, nil, fmt.Errorf("--listen %q: the proxy serves only on a loopback address", listen)
	}
	w, upstream, err := mcpconfig.WrapHTTP(data, o.config, n, listen)
	if err != nil {
		return wrappedEntry{}, nil, err
	}
	red := redact.New(w.Server.Headers, w.Server.Env, w.Server.URL)
	run := []string{"inflight", "proxy", "--name", name}
	if tracePath != "" {
		run = append(run, "--trace", tracePath)
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
	return wrappedEntry{name: w.Name, proxy: name, entry: red.String(string(w.Entry)), run: red.String(strings.Join(quoted, " "))}, w.File, nil
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
