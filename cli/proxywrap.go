package cli

import (
	"errors"
	"fmt"
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
	config, server string
	write          bool
	rules          []string
	trace          string
	otlp           string
	lateWindow     time.Duration
	readOnly       bool
	name           string
	// listen is --listen, for an HTTP entry ("": a free loopback port).
	listen string
}

// proxyWrap is `inflight proxy --wrap`: a config file's stdio entry
// rewritten to run through `inflight proxy`, printed or (--write) written
// back with a backup.
func (c *cli) proxyWrap(o wrapOptions) error {
	fail := func(err error) error {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: %s\n", termsafe.Line(err.Error()))
		c.code = exitcode.Usage
		return nil
	}
	if o.config == "" {
		return fail(errors.New("--wrap needs --config FILE (and --server NAME when the file has several servers)"))
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
	data, err := os.ReadFile(o.config)
	if err != nil {
		return fail(fmt.Errorf("config file: %w", err))
	}
	// The entry's name picks the proxy's name (and its socket's), unless
	// --name says otherwise.
	probe, err := mcpconfig.Parse(data, o.config, o.server)
	if err != nil {
		return fail(err)
	}
	name := o.name
	if name == "" {
		name = proxy.CleanName(probe.Name)
	}
	if probe.URL != "" {
		return c.proxyWrapHTTP(o, name, fail)
	}
	prefix := []string{"proxy", "--name", name}
	for _, r := range o.rules {
		prefix = append(prefix, "--rule", r)
	}
	if o.readOnly {
		prefix = append(prefix, "--read-only")
	}
	if o.trace != "" {
		abs, err := filepath.Abs(o.trace)
		if err != nil {
			return fail(fmt.Errorf("--trace: %w", err))
		}
		prefix = append(prefix, "--trace", abs)
	}
	if o.otlp != "" {
		prefix = append(prefix, "--otlp", o.otlp)
	}
	if o.lateWindow != session.DefaultLateWindow {
		prefix = append(prefix, "--late-window", o.lateWindow.String())
	}
	prefix = append(prefix, "--")
	w, backup, err := mcpconfig.WrapFile(o.config, probe.Name, exe, prefix, o.write)
	if err != nil {
		return fail(err)
	}
	// What is shown of the entry hides its secrets (env values, header
	// values, secret-looking args), as everything inflight shows does.
	red := redact.New(w.Server.Headers, w.Server.Env, w.Server.URL, w.Server.Args...)
	fmt.Fprintf(c.stdout, "%s: %s\n", termsafe.Line(strconv.Quote(w.Name)), termsafe.Block(red.String(string(w.Entry))))
	if o.write {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: wrote %s (the original is %s); restart the host to run %q through inflight, and watch it with: inflight attach %s\n",
			termsafe.Line(o.config), termsafe.Line(backup), termsafe.Line(w.Name), termsafe.Line(name))
	} else {
		fmt.Fprintf(c.stderr, "inflight proxy --wrap: %s is unchanged; --write rewrites it (keeping a backup and its comments)\n", termsafe.Line(o.config))
	}
	return nil
}
