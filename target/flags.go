package main

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"inflight/check"
	"inflight/wire"
)

// targetFlags are the flags that name a server, shared by every command
// that talks to one (the TUI, call, check).
type targetFlags struct {
	env             []string
	cwd             string
	url             string
	headers         []string
	config          string
	server          string
	protocolVersion string
}

func (f *targetFlags) add(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.env, "env", nil, "`K=V` added to a stdio server's environment (repeatable)")
	fs.StringVar(&f.cwd, "cwd", "", "working `DIR` of a stdio server")
	fs.StringVar(&f.url, "url", "", "Streamable HTTP endpoint `URL` of the server")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "HTTP header `'Name: value'` sent to a URL server (repeatable)")
	fs.StringVar(&f.config, "config", "", "MCP client config `FILE` (Claude Desktop, Cursor, VS Code) to read the server from")
	fs.StringVar(&f.server, "server", "", "`NAME` of the server in --config")
	fs.StringVar(&f.protocolVersion, "protocol-version", "", "force protocol version `V` (and with it the era): "+
		wire.VersionModern+" (modern) or "+strings.Join(wire.LegacyVersions, ", ")+" (legacy)")
}

// resolve turns the flags, the command after a literal "--" and a bare URL
// (root command only) into a target. No server named at all means the
// embedded demo server.
func (f *targetFlags) resolve(command []string, bareURL string) (check.Target, error) {
	url := f.url
	if bareURL != "" {
		if url != "" && url != bareURL {
			return check.Target{}, errors.New("give the URL once: as an argument or with --url")
		}
		url = bareURL
	}
	kinds := 0
	for _, set := range []bool{len(command) > 0, url != "", f.config != ""} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return check.Target{}, errors.New("give one server: -- CMD ARGS…, --url URL or --config FILE --server NAME")
	}
	if f.server != "" && f.config == "" {
		return check.Target{}, errors.New("--server NAME needs --config FILE")
	}
	// The client checks this too, but only when it dials; a usage error
	// belongs here, before anything starts. (The client's isLegacyVersion
	// is unexported; wire is the place for one check both can use.)
	if v := f.protocolVersion; v != "" && !wire.IsModernVersion(v) && !slices.Contains(wire.LegacyVersions, v) {
		return check.Target{}, fmt.Errorf("--protocol-version %q: inflight speaks %s (modern) and %s (legacy)",
			v, wire.VersionModern, strings.Join(wire.LegacyVersions, ", "))
	}
	headers := http.Header{}
	for _, h := range f.headers {
		name, value, err := check.ParseHeader(h)
		if err != nil {
			return check.Target{}, err
		}
		headers.Add(name, value)
	}
	for _, e := range f.env {
		if _, err := check.ParseEnv(e); err != nil {
			return check.Target{}, err
		}
	}
	var t check.Target
	switch {
	case f.config != "":
		var err error
		t, err = check.LoadConfigFile(f.config, f.server)
		if err != nil {
			return check.Target{}, err
		}
		t.Override(f.env, headers, f.cwd)
	case len(command) > 0:
		// Validate, below, refuses -H on a stdio command and --env or
		// --cwd on a URL, for config entries and flags alike.
		t = check.Target{Command: command[0], Args: command[1:], Env: f.env, Dir: f.cwd, Headers: headers}
	case url != "":
		t = check.Target{URL: url, Headers: headers, Env: f.env, Dir: f.cwd}
	default:
		if len(f.env) > 0 || f.cwd != "" || len(headers) > 0 {
			return check.Target{}, errors.New("--env, --cwd and -H need a server: -- CMD ARGS…, --url URL or --config FILE")
		}
		var err error
		t, err = check.DemoTarget()
		if err != nil {
			return check.Target{}, err
		}
	}
	if len(t.Headers) == 0 {
		t.Headers = nil
	}
	t.ProtocolVersion = f.protocolVersion
	if err := t.Validate(); err != nil {
		return check.Target{}, err
	}
	return t, nil
}

// rawTarget is the server as the flags name it, unchecked: what the --json
// object of a usage failure can say about it (its transport).
func (f *targetFlags) rawTarget() check.Target { return check.Target{URL: f.url} }

// splitDash splits a command's arguments at a literal "--": what comes
// before is the command's own positional arguments, what follows is a stdio
// server's command line.
func splitDash(args []string, dash int) (positional, command []string) {
	if dash < 0 {
		return args, nil
	}
	return args[:dash], args[dash:]
}

// looksLikeURL reports whether a positional argument is an http(s) URL.
func looksLikeURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// durationFlag is a duration flag that refuses negative values, and zero
// too when positive is set: "--timeout 0" must not quietly mean "no
// timeout", nor "--late-window -1s" the default.
type durationFlag struct {
	p        *time.Duration
	positive bool
}

func (f *durationFlag) String() string {
	if *f.p == 0 {
		return "0" // what pflag takes for "no default" in help
	}
	return f.p.String()
}
func (f *durationFlag) Type() string { return "duration" }

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration (try 30s or 2m)")
	}
	switch {
	case d < 0:
		return fmt.Errorf("must not be negative")
	case d == 0 && f.positive:
		return fmt.Errorf("must be longer than zero")
	}
	*f.p = d
	return nil
}

// durationVar defines a duration flag with its default; positive refuses
// zero as well as negative values.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string, positive bool) {
	*p = def
	fs.Var(&durationFlag{p: p, positive: positive}, name, usage)
}
