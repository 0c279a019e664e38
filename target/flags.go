package target

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"inflight/mcpconfig"
	"inflight/redact"
	"inflight/wire"
)

// Flags are the flags that name a server, shared by every command that
// talks to one (the TUI, call, check).
type Flags struct {
	env             []string
	cwd             string
	url             string
	headers         []string
	config          string
	servers         []string
	protocolVersion string
	transport       string
	auth            authFlags
}

// Add defines the flags on fs.
func (f *Flags) Add(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.env, "env", nil, "`K=V` added to a stdio server's environment (repeatable)")
	fs.StringVar(&f.cwd, "cwd", "", "working `DIR` of a stdio server")
	fs.StringVar(&f.url, "url", "", "Streamable HTTP endpoint `URL` of the server")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "HTTP header `'Name: value'` sent to a URL server (repeatable)")
	fs.StringVar(&f.config, "config", "", "MCP client config `FILE` (Claude Desktop, Cursor, VS Code) to read the server from")
	fs.StringArrayVar(&f.servers, "server", nil, "`NAME` of the server in --config (repeatable where a command opens several)")
	fs.StringVar(&f.protocolVersion, "protocol-version", "", "force protocol version `V` (and with it the era): "+
		wire.VersionModern+" (modern) or "+strings.Join(wire.LegacyVersions, ", ")+" (legacy; "+wire.Version20241105+" over --transport sse)")
	fs.StringVar(&f.transport, "transport", "", "a URL's transport `T`: http (Streamable HTTP only), sse (the deprecated HTTP+SSE, the URL being its stream); "+
		"by default Streamable HTTP, and HTTP+SSE when the server refuses its POST and offers the stream")
	f.auth.add(fs)
}

// Resolve turns the flags, the command after a literal "--" and a bare URL
// (root command only) into a target. No server named at all means the
// embedded demo server.
func (f *Flags) Resolve(command []string, bareURL string) (Target, error) {
	url, err := f.oneServer(command, bareURL)
	if err != nil {
		return Target{}, err
	}
	if err := f.checkProtocol(); err != nil {
		return Target{}, err
	}
	headers, err := f.parseHeaders()
	if err != nil {
		return Target{}, err
	}
	t, err := f.named(command, url, headers)
	if err != nil {
		return Target{}, err
	}
	if len(t.Headers) == 0 {
		t.Headers = nil
	}
	switch f.transport {
	case "sse":
		t.SSE, t.NoSSEFallback = true, false
	case "http", "streamable-http":
		t.SSE, t.NoSSEFallback = false, true
	}
	t.ProtocolVersion = f.protocolVersion
	if err := f.auth.resolve(&t); err != nil {
		return Target{}, err
	}
	if err := t.Validate(); err != nil {
		return Target{}, err
	}
	return t, nil
}

// oneServer refuses flags that name more than one server (a command, a
// URL, a config entry), and returns the URL named, --url or bare.
func (f *Flags) oneServer(command []string, bareURL string) (url string, err error) {
	url = f.url
	if bareURL != "" {
		if url != "" && url != bareURL {
			return "", errors.New("give the URL once: as an argument or with --url")
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
		return "", errors.New("give one server: -- CMD ARGS…, --url URL or --config FILE --server NAME")
	}
	if len(f.servers) > 0 && f.config == "" {
		return "", errors.New("--server NAME needs --config FILE")
	}
	if len(f.servers) > 1 {
		return "", fmt.Errorf("give one --server NAME, got %d: this command talks to one server", len(f.servers))
	}
	return url, nil
}

// checkProtocol refuses a --protocol-version or --transport inflight does
// not speak.
func (f *Flags) checkProtocol() error {
	// The client checks this too, but only when it dials; a usage error
	// belongs here, before anything starts. Not wire.IsModernVersion: it
	// takes every version from the modern one on (a date compared as a
	// string), so "9999" would pass here and fail only at connect. Only
	// the versions inflight speaks are accepted.
	if v := f.protocolVersion; v != "" && !KnownVersion(v) && v != wire.Version20241105 {
		return fmt.Errorf("--protocol-version %q: inflight speaks %s (modern) and %s (legacy), and %s over HTTP+SSE",
			v, wire.VersionModern, strings.Join(wire.LegacyVersions, ", "), wire.Version20241105)
	}
	switch f.transport {
	case "", "auto", "http", "streamable-http", "sse":
	default:
		return fmt.Errorf("--transport %q: want http (Streamable HTTP) or sse (HTTP+SSE)", f.transport)
	}
	return nil
}

// parseHeaders parses the -H flags, and checks the --env ones.
func (f *Flags) parseHeaders() (http.Header, error) {
	headers := http.Header{}
	for _, h := range f.headers {
		name, value, err := ParseHeader(h)
		if err != nil {
			return nil, err
		}
		headers.Add(name, value)
	}
	for _, e := range f.env {
		if _, err := ParseEnv(e); err != nil {
			return nil, err
		}
	}
	return headers, nil
}

// named is the server the flags name — a config entry (with the flags'
// --env, -H and --cwd over its own), a command, a URL — or, with none,
// the embedded demo.
func (f *Flags) named(command []string, url string, headers http.Header) (Target, error) {
	switch {
	case f.config != "":
		t, err := LoadConfigFile(f.config, f.server())
		if err != nil {
			return Target{}, err
		}
		t.Override(f.env, headers, f.cwd)
		return t, nil
	case len(command) > 0:
		// Validate, in Resolve, refuses -H on a stdio command and --env
		// or --cwd on a URL, for config entries and flags alike.
		return Target{Command: command[0], Args: command[1:], Env: f.env, Dir: f.cwd, Headers: headers}, nil
	case url != "":
		return Target{URL: url, Headers: headers, Env: f.env, Dir: f.cwd}, nil
	}
	if len(f.env) > 0 || f.cwd != "" || len(headers) > 0 {
		return Target{}, errors.New("--env, --cwd and -H need a server: -- CMD ARGS…, --url URL or --config FILE")
	}
	return DemoTarget()
}

// server is the one --server NAME, "" when none was given.
func (f *Flags) server() string {
	if len(f.servers) == 0 {
		return ""
	}
	return f.servers[0]
}

// Servers are the --server names given, in order.
func (f *Flags) Servers() []string { return f.servers }

// Config is the --config file named, "" when none.
func (f *Flags) Config() string { return f.config }

// ConfigServers are the servers of --config a command that opens several
// opens: the --server names in the order given (each once), or, with none,
// every server of the file, sorted. It refuses what does not name a config
// file's servers (a command, a URL, no --config).
func (f *Flags) ConfigServers() ([]string, error) {
	if f.config == "" {
		return nil, errors.New("several servers come from --config FILE")
	}
	if f.url != "" {
		return nil, errors.New("give one server: --url URL or --config FILE")
	}
	names, err := mcpconfig.Names(f.config)
	if err != nil {
		return nil, err
	}
	if len(f.servers) == 0 {
		return names, nil
	}
	var chosen []string
	for _, n := range f.servers {
		if !slices.Contains(names, n) {
			// Parse says which servers the file has.
			_, err := LoadConfigFile(f.config, n)
			return nil, err
		}
		if !slices.Contains(chosen, n) {
			chosen = append(chosen, n)
		}
	}
	return chosen, nil
}

// ResolveServer is Resolve for the server called name in --config, with
// the flags' --env, -H and --cwd over its own as for one server.
func (f *Flags) ResolveServer(name string) (Target, error) {
	one := *f
	one.servers = []string{name}
	return one.Resolve(nil, "")
}

// Raw is the server as the flags name it, unchecked: what the --json
// object of a usage failure can say about it (its transport).
func (f *Flags) Raw() Target { return Target{URL: f.url, SSE: f.transport == "sse"} }

// AddSecrets adds the secrets the flags hold, as typed (the -H, --env and
// --url values), to b: a usage error may quote one that did not parse.
func (f *Flags) AddSecrets(b *redact.Builder) {
	for _, h := range f.headers {
		if name, value, ok := strings.Cut(h, ":"); ok {
			b.AddHeader(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	b.AddEnv(f.env)
	f.auth.addSecrets(b)
	if f.url != "" {
		b.AddURL(f.url)
	}
}

// KnownVersion reports whether inflight speaks protocol version v on every
// transport: the modern one or one of the legacy ones. (2024-11-05 is not
// one: it is spoken over its own HTTP transport only, HTTP+SSE, and
// Validate says so.)
func KnownVersion(v string) bool {
	return v == wire.VersionModern || slices.Contains(wire.LegacyVersions, v)
}
