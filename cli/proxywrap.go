package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"inflight/exitcode"
	"inflight/mcpconfig"
	"inflight/proxy"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
)

// wrapOptions are the proxy's flags that the wrapped entry carries.
type wrapOptions struct {
	config string
	// servers are the entries to wrap (--server, repeatable); none: every
	// server of the config.
	servers    []string
	write      bool
	rules      []string
	trace      string
	otlp       string
	lateWindow time.Duration
	readOnly   bool
	name       string
	// listen is --listen, for an HTTP entry ("": a free loopback port).
	listen string
}

// wrappedEntry is one entry --wrap rewrote, as it is shown.
type wrappedEntry struct {
	// name is the entry's; proxy the proxy's that runs it (attach NAME).
	name, proxy string
	// entry is the rewritten entry, its secrets hidden.
	entry string
	// run is, for an HTTP entry, the command that runs its proxy ("" for
	// a stdio entry, which the host runs itself).
	run string
}

// proxyWrap is `inflight proxy --wrap`: the stdio entries of a config
// file rewritten to run through `inflight proxy` (and its HTTP entries to
// reach a proxy's local URL), printed or (--write) written back with one
// backup.
func (c *cli) proxyWrap(o wrapOptions) error {
	fail := func(err error) error {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: %s\n", termsafe.Line(err.Error()))
		c.code = exitcode.Usage
		return nil
	}
	if o.config == "" {
		return fail(errors.New("--wrap needs --config FILE (and --server NAME to wrap only some of its servers)"))
	}
	if _, err := proxy.ParseRules(o.rules); err != nil {
		return fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(fmt.Errorf("where inflight is: %w", err))
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: inflight runs from a temporary build (%s), which will be gone: install it (go install) and wrap with that one\n", termsafe.Line(exe))
	}
	names, all, err := wrapNames(o)
	if err != nil {
		return fail(err)
	}
	several := len(names) > 1
	if several && o.name != "" {
		return fail(errors.New("--name names one proxy: with several servers each proxy is named after its entry"))
	}
	if several && o.listen != "" {
		return fail(errors.New("--listen is one address: with several servers each HTTP entry gets a free loopback port"))
	}
	var done []wrappedEntry
	var skipped []string
	_, backup, err := mcpconfig.RewriteFile(o.config, o.write, func(data []byte) ([]byte, error) {
		done, skipped = done[:0], skipped[:0]
		proxies := map[string]string{}
		for _, n := range names {
			if all {
				if why := leftForAll(data, o.config, n); why != "" {
					skipped = append(skipped, why)
					continue
				}
			}
			w, next, err := wrapEntry(data, o, n, exe, several)
			if err != nil {
				// Wrapping every server, an entry that is wrapped already
				// or that no proxy can stand in front of is left as it
				// is, and said; one named is refused.
				if all && (errors.Is(err, mcpconfig.ErrWrapped) || errors.Is(err, mcpconfig.ErrSSEEntry)) {
					skipped = append(skipped, err.Error())
					continue
				}
				return nil, err
			}
			if other, ok := proxies[w.proxy]; ok {
				return nil, fmt.Errorf("servers %q and %q would both run as proxy %q: wrap them one at a time with --name", other, w.name, w.proxy)
			}
			proxies[w.proxy] = w.name
			data = next
			done = append(done, w)
		}
		if len(done) == 0 {
			return nil, fmt.Errorf("config file %s: no server left to wrap", o.config)
		}
		return data, nil
	})
	for _, s := range skipped {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: left as it is: %s\n", termsafe.Line(s))
	}
	if err != nil {
		return fail(err)
	}
	for _, w := range done {
		fmt.Fprintf(c.stdout, "%s: %s\n", termsafe.Line(strconv.Quote(w.name)), termsafe.Block(w.entry))
		if w.run != "" {
			fmt.Fprintf(c.stdout, "run the proxy (before the host connects): %s\n", termsafe.Line(w.run))
		}
	}
	c.wrapSaid(o, done, backup)
	return nil
}

// leftForAll says why wrapping every server leaves entry n as it is, ""
// when it does not: an HTTP entry on this machine's loopback is where a
// wrapped entry points (its proxy's address), and nothing in the file
// tells a proxy's address from a local server's; wrapping it again would
// put a second proxy in front of the first. Named with --server, it is
// wrapped.
func leftForAll(data []byte, path, n string) string {
	srv, err := mcpconfig.Parse(data, path, n)
	if err != nil || srv.URL == "" || srv.SSE {
		return ""
	}
	u, err := url.Parse(srv.URL)
	if err != nil || !proxy.LoopbackAddr(u.Host) {
		return ""
	}
	return fmt.Sprintf("server %q: its URL is on this machine (%s), as a wrapped entry's proxy is; name it with --server to wrap it",
		srv.Name, u.Host)
}

// wrapNames is the entries --wrap rewrites: those --server names (each
// once, in the order given), or every server of the config (all).
func wrapNames(o wrapOptions) (names []string, all bool, err error) {
	if len(o.servers) == 0 {
		names, err := mcpconfig.Names(o.config)
		if err != nil {
			return nil, true, err
		}
		if len(names) == 0 {
			return nil, true, fmt.Errorf("config file %s has no servers", o.config)
		}
		return names, true, nil
	}
	seen := map[string]bool{}
	for _, n := range o.servers {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names, false, nil
}

// wrapSaid says on stderr what --wrap did, and what to do next.
func (c *cli) wrapSaid(o wrapOptions, done []wrappedEntry, backup string) {
	if !o.write {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: %s is unchanged; --write rewrites it (keeping a backup and its comments)\n", termsafe.Line(o.config))
		return
	}
	start := ""
	for _, w := range done {
		if w.run != "" {
			start = "start the proxy as above, "
		}
	}
	if len(done) == 1 {
		w := done[0]
		if start != "" {
			fmt.Fprintf(c.stderr, "inflight proxy --wrap: wrote %s (the original is %s); %srestart the host, and watch it with: inflight attach %s\n",
				termsafe.Line(o.config), termsafe.Line(backup), start, termsafe.Line(w.proxy))
			return
		}
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: wrote %s (the original is %s); restart the host to run %q through inflight, and watch it with: inflight attach %s\n",
			termsafe.Line(o.config), termsafe.Line(backup), termsafe.Line(w.name), termsafe.Line(w.proxy))
		return
	}
	if start != "" {
		start = "start the proxies as above, "
	}
	quoted := make([]string, len(done))
	for i, w := range done {
		quoted[i] = strconv.Quote(w.name)
	}
	fmt.Fprintf(c.stderr, "inflight proxy --wrap: wrote %s (the original is %s); %srestart the host to run %s through inflight, and watch them with: inflight attach --all\n",
		termsafe.Line(o.config), termsafe.Line(backup), start, termsafe.Line(strings.Join(quoted, ", ")))
}

// wrapEntry rewrites the entry called n of the config's bytes data: a
// stdio entry to run through this inflight's proxy, an HTTP one to reach
// a proxy's local URL. It returns the entry as shown and the rewritten
// bytes. With several entries, --trace FILE becomes one file per proxy
// (FILE-NAME.ext): proxies writing one file would overwrite each other.
func wrapEntry(data []byte, o wrapOptions, n, exe string, several bool) (wrappedEntry, []byte, error) {
	// The entry's name picks the proxy's name (and its socket's), unless
	// --name says otherwise.
	srv, err := mcpconfig.Parse(data, o.config, n)
	if err != nil {
		return wrappedEntry{}, nil, err
	}
	name := o.name
	if name == "" {
		name = proxy.CleanName(srv.Name)
	}
	tracePath := ""
	if o.trace != "" {
		if tracePath, err = filepath.Abs(o.trace); err != nil {
			return wrappedEntry{}, nil, fmt.Errorf("--trace: %w", err)
		}
		if several {
			ext := filepath.Ext(tracePath)
			tracePath = strings.TrimSuffix(tracePath, ext) + "-" + name + ext
		}
	}
	if srv.URL != "" {
		return wrapHTTPEntry(data, o, n, name, tracePath)
	}
	prefix := []string{"proxy", "--name", name}
	for _, r := range o.rules {
		prefix = append(prefix, "--rule", r)
	}
	if o.readOnly {
		prefix = append(prefix, "--read-only")
	}
	if tracePath != "" {
		prefix = append(prefix, "--trace", tracePath)
	}
	if o.otlp != "" {
		prefix = append(prefix, "--otlp", o.otlp)
	}
	if o.lateWindow != session.DefaultLateWindow {
		prefix = append(prefix, "--late-window", o.lateWindow.String())
	}
	prefix = append(prefix, "--")
	w, err := mcpconfig.Wrap(data, o.config, n, exe, prefix)
	if err != nil {
		return wrappedEntry{}, nil, err
	}
	// What is shown of the entry hides its secrets (env values, header
	// values, secret-looking args), as everything inflight shows does.
	red := redact.New(w.Server.Headers, w.Server.Env, w.Server.URL, w.Server.Args...)
	return wrappedEntry{name: w.Name, proxy: name, entry: red.String(string(w.Entry))}, w.File, nil
}
