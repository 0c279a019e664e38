// Package target is the server a command talks to: the Target a user names
// with the target flags, a bare URL, a command after "--" or a config file
// entry, checked (Validate), described with its secrets redacted
// (Describe), and turned into a client configuration (ClientConfig). The
// TUI, call and check all resolve their server here.
package target

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"inflight/client"
	"inflight/mcpconfig"
	"inflight/oauth"
	"inflight/redact"
	"inflight/termsafe"
	"inflight/version"
	"inflight/wire"
)

// Target is the server a command talks to: a stdio command, a Streamable
// HTTP URL, or the embedded demo server.
type Target struct {
	// Command, Args, Env and Dir start a stdio server. Env holds KEY=VALUE
	// entries added to inflight's own environment.
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL is a Streamable HTTP endpoint; Headers go on every HTTP request.
	URL     string
	Headers http.Header
	// SSE says URL is the stream of the deprecated HTTP+SSE transport
	// (--transport sse, "type": "sse"). NoSSEFallback (--transport http)
	// keeps a Streamable HTTP URL from being taken for one when its POST is
	// refused.
	SSE           bool
	NoSSEFallback bool

	// Demo marks the embedded demo server. Flags resolve it to a Command
	// that re-executes inflight as `inflight demo-server`; Demo stays set so
	// that output can say which server it is.
	Demo bool

	// ProtocolVersion forces a protocol version, and with it the era; ""
	// lets the client detect it.
	ProtocolVersion string

	// Name is the server's name in the config file it came from, if any.
	Name string

	// Pipes, when set, connects to an in-process stdio server instead of
	// starting Command: every call opens one connection. Tests and the
	// in-process demo use it.
	Pipes func(ctx context.Context) (*client.Pipes, error)

	// HTTPClient replaces the default HTTP client (tests).
	HTTPClient *http.Client

	// Auth authorizes a URL server with OAuth (see package oauth); nil
	// when -H gives the credentials or --no-auth says not to.
	Auth *oauth.Config

	// unresolved lists the ${input:…} variables of a VS Code config that
	// inflight cannot prompt for, by the env key or header name holding
	// them; Override clears the ones a flag replaces.
	unresolved map[string]string
}

// IsHTTP reports whether the target is a Streamable HTTP endpoint.
func (t Target) IsHTTP() bool { return t.URL != "" }

// Transport is "sse" for an HTTP+SSE stream, "http" for a Streamable HTTP
// endpoint (which the client may still find to be HTTP+SSE: the connection
// says), else "stdio".
func (t Target) Transport() string {
	if t.SSE && t.IsHTTP() {
		return "sse"
	}
	if t.IsHTTP() {
		return "http"
	}
	return "stdio"
}

// Named reports whether t names a server at all. A usage failure can come
// before the command line named one (the demo included), and a report must
// not guess.
func (t Target) Named() bool {
	return t.URL != "" || t.Command != "" || t.Demo || t.Pipes != nil || t.Name != ""
}

// Validate reports a target that names no server, or two kinds at once, or
// still holds config-file variables inflight could not resolve.
func (t Target) Validate() error {
	kinds := 0
	if t.Command != "" || t.Demo {
		kinds++
	}
	if t.URL != "" {
		kinds++
	}
	if t.Pipes != nil && t.Command == "" && !t.Demo {
		kinds++
	}
	switch {
	case kinds == 0:
		return errors.New("no server: give -- CMD ARGS…, --url URL or --config FILE --server NAME")
	case kinds > 1:
		return errors.New("give one server: a command, a URL or a config entry, not several")
	}
	if t.URL != "" {
		u, err := url.Parse(t.URL)
		if err != nil {
			// url.Parse's error quotes the whole URL, its password and
			// query included, and a URL that does not parse cannot be
			// redacted: say what is wrong, and where, without the rest.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return fmt.Errorf("--url %q: %w", unparsedURLShape(t.URL), err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("--url %q: the scheme must be http or https", redact.New(nil, nil, t.URL).String(t.URL))
		}
		if len(t.Env) > 0 || t.Dir != "" {
			return errors.New("--env and --cwd apply to a stdio command, not to a URL")
		}
		if t.SSE && wire.IsModernVersion(t.ProtocolVersion) {
			return fmt.Errorf("--protocol-version %s with HTTP+SSE: the deprecated transport is legacy only (%s, %s)",
				t.ProtocolVersion, wire.Version20241105, strings.Join(wire.LegacyVersions, ", "))
		}
	} else if len(t.Headers) > 0 {
		return errors.New("-H applies to a --url server, not to a stdio command")
	} else if t.SSE || t.NoSSEFallback {
		return errors.New("--transport http and sse apply to a URL, not to a stdio command")
	}
	if t.ProtocolVersion == wire.Version20241105 && !t.SSE {
		return errors.New("--protocol-version 2024-11-05 is spoken over its own HTTP transport only, HTTP+SSE: give a URL with --transport sse")
	}
	if len(t.unresolved) > 0 {
		return t.unresolvedError()
	}
	return nil
}

// unresolvedError says which fields of a config entry hold ${input:…}
// variables and, for each, what can give the value: a flag for the
// environment (--env), the headers (-H) and the directory (--cwd); for the
// command, its args, the URL and the envFile, nothing on the command line
// can, since --config cannot be combined with "--" or --url — the file
// must be edited, or the server named without it.
func (t Target) unresolvedError() error {
	wheres := make([]string, 0, len(t.unresolved))
	for where := range t.unresolved {
		wheres = append(wheres, where)
	}
	sort.Strings(wheres)
	var parts, flags, fixed []string
	for _, where := range wheres {
		parts = append(parts, fmt.Sprintf("%s uses %s", where, t.unresolved[where]))
		switch {
		case strings.HasPrefix(where, "env "):
			flags = append(flags, "--env "+strings.TrimPrefix(where, "env ")+"=…")
		case strings.HasPrefix(where, "header "):
			flags = append(flags, "-H '"+strings.TrimPrefix(where, "header ")+": …'")
		case where == "cwd":
			flags = append(flags, "--cwd DIR")
		default:
			fixed = append(fixed, where)
		}
	}
	msg := "the config entry needs values only VS Code can prompt for (" + strings.Join(parts, "; ") + ")"
	if len(flags) > 0 {
		msg += "; give them with " + strings.Join(flags, " and ")
	}
	if len(fixed) > 0 {
		instead := "pass the server's command line after -- instead of --config: inflight … -- CMD ARGS…"
		if t.URL != "" {
			instead = "give the server's URL instead of --config: inflight … --url URL"
		}
		msg += fmt.Sprintf("; no flag can replace the entry's %s: edit the config file, or %s", strings.Join(fixed, ", "), instead)
	}
	return errors.New(msg)
}

// unparsedURLShape shows a URL that did not parse without what may be a
// secret in it: the user info before "@" and the query are elided, so that
// people still see which URL, and which host, is wrong.
func unparsedURLShape(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		authority = "…@" + authority[at+1:]
	}
	if q := strings.IndexAny(tail, "?#"); q >= 0 {
		tail = tail[:q+1] + "…"
	}
	if ok {
		return scheme + "://" + authority + tail
	}
	return authority + tail
}

// Override applies command-line flags over a target from a config file:
// --env entries replace the file's values of the same keys, -H headers
// replace headers of the same name, --cwd replaces cwd.
func (t *Target) Override(env []string, headers http.Header, dir string) {
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		t.Env = mcpconfig.SetEnv(t.Env, kv)
		delete(t.unresolved, "env "+k)
	}
	if len(headers) > 0 && t.Headers == nil {
		t.Headers = http.Header{}
	}
	for name, vs := range headers {
		t.Headers[http.CanonicalHeaderKey(name)] = append([]string(nil), vs...)
		delete(t.unresolved, "header "+http.CanonicalHeaderKey(name))
	}
	if dir != "" {
		t.Dir = dir
		delete(t.unresolved, "cwd")
	}
}

// ParseHeader reads a -H 'Name: value' flag.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return "", "", fmt.Errorf("header %q: want 'Name: value'", redactHeaderFlag(s))
	}
	value = strings.TrimSpace(value)
	switch http.CanonicalHeaderKey(name) {
	case "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Last-Event-Id", "Content-Type", "Accept":
		// The protocol's own: inflight sets them as the era and the
		// exchange require, and a fixed value would only fight it.
		return "", "", fmt.Errorf("header %s is set by inflight itself, as the protocol requires; it cannot be given with -H", name)
	}
	for _, r := range name {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return "", "", fmt.Errorf("header %q: %q is not a valid header name", redactHeaderFlag(s), name)
		}
	}
	if strings.ContainsFunc(value, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
		// A line break would end the header and start another: refuse it
		// here rather than when the first request is sent.
		return "", "", fmt.Errorf("header %s: its value holds a line break or control character", name)
	}
	return name, value, nil
}

// redactHeaderFlag shows a malformed -H flag in its error without its
// value, which may be a secret: only the first word is kept.
func redactHeaderFlag(s string) string {
	name, _, ok := strings.Cut(s, ":")
	if !ok {
		fields := strings.Fields(s)
		if len(fields) == 0 {
			return s
		}
		name = fields[0]
	}
	if name == s {
		return s
	}
	return strings.TrimSpace(name) + " …"
}

// ParseEnv reads a --env K=V flag.
func ParseEnv(s string) (string, error) {
	k, _, ok := strings.Cut(s, "=")
	if !ok || k == "" || strings.ContainsAny(k, " \t") {
		shown := s
		if redact.IsSecretName(k) || !ok {
			shown = k
		}
		return "", fmt.Errorf("--env %q: want KEY=VALUE", shown)
	}
	return s, nil
}

// Redactor returns the redactor for the target's secrets: its secret
// headers, secret-named environment entries and URL credentials.
func (t Target) Redactor() *redact.Redactor {
	if t.Auth == nil || t.Auth.ClientSecret == "" {
		return redact.New(t.Headers, t.Env, t.URL, t.Args...)
	}
	var b redact.Builder
	b.AddHeaders(t.Headers)
	b.AddEnv(t.Env)
	b.AddArgs(t.Args)
	b.AddURL(t.URL)
	b.AddValue(t.Auth.ClientSecret)
	return b.Build()
}

// Describe is the target in one line for people, with secrets redacted
// and nothing in it a terminal would act on: a config entry's command line
// or URL is whatever the file says. Each word of a command line is
// redacted before it is quoted (quoting can change how a secret is
// spelled), then quoted so that it pastes back into a shell
// (termsafe.CommandLine).
func (t Target) Describe() string {
	red := t.Redactor()
	var s string
	switch {
	case t.Demo:
		s = "the embedded demo server (stdio)"
	case t.URL != "":
		s = termsafe.Line(red.String(t.URL))
		if len(t.Headers) > 0 {
			var hs []string
			for name := range t.Headers {
				hs = append(hs, name)
			}
			sort.Strings(hs)
			rh := red.Header(t.Headers)
			for i, name := range hs {
				hs[i] = termsafe.Line(name + ": " + strings.Join(rh[name], ", "))
			}
			s += " (" + strings.Join(hs, "; ") + ")"
		}
	case t.Command != "":
		args := make([]string, len(t.Args))
		for i, a := range t.Args {
			args[i] = red.String(a)
		}
		s = termsafe.CommandLine(red.String(t.Command), args)
	case t.Pipes != nil:
		s = "an in-process stdio server"
	default:
		s = "no server"
	}
	if t.Name != "" {
		s = fmt.Sprintf("%q: %s", termsafe.Line(red.String(t.Name)), s)
	}
	return s
}

// ClientConfig turns the target into a client configuration. Pipes targets
// open their connection here, so call it once per connection.
func (t Target) ClientConfig(ctx context.Context) (client.Config, error) {
	if err := t.Validate(); err != nil {
		return client.Config{}, err
	}
	cfg := client.Config{ProtocolVersion: t.ProtocolVersion, HTTPClient: t.HTTPClient, ClientVersion: version.Version,
		// The round trip crossings are judged by (session/crossing.go).
		RoundTrips: client.DefaultRoundTrips}
	switch {
	case t.URL != "":
		cfg.URL = t.URL
		cfg.Headers = t.Headers.Clone()
		cfg.SSE, cfg.NoSSEFallback = t.SSE, t.NoSSEFallback
		if t.Auth != nil {
			a := *t.Auth
			cfg.Auth = &a
		}
	case t.Command != "":
		cfg.Command = t.Command
		cfg.Args = append([]string(nil), t.Args...)
		cfg.Env = append([]string(nil), t.Env...)
		cfg.Dir = t.Dir
		if cfg.Dir != "" {
			if st, err := os.Stat(cfg.Dir); err != nil || !st.IsDir() {
				return client.Config{}, fmt.Errorf("--cwd %q is not a directory", cfg.Dir)
			}
		}
	case t.Pipes != nil:
		p, err := t.Pipes(ctx)
		if err != nil {
			return client.Config{}, fmt.Errorf("connect to the in-process server: %w", err)
		}
		cfg.Pipes = p
	}
	return cfg, nil
}

// DemoTarget is the embedded demo server: inflight itself, re-executed as
// `inflight demo-server`, spoken to over stdio.
func DemoTarget() (Target, error) {
	exe, err := os.Executable()
	if err != nil {
		return Target{}, fmt.Errorf("find inflight's own executable to start the demo server: %w", err)
	}
	if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	return Target{Command: exe, Args: []string{"demo-server"}, Demo: true}, nil
}

// LoadConfigFile reads the server called name from an MCP client config file
// (see mcpconfig.LoadFile): the target of its entry. When name is "" and
// the file has exactly one server, that one is used. VS Code's ${input:…}
// variables, which inflight cannot prompt for, make Validate fail unless
// Override replaces them.
func LoadConfigFile(path, name string) (Target, error) {
	s, err := mcpconfig.LoadFile(path, name)
	if err != nil {
		return Target{}, err
	}
	return FromConfig(s), nil
}

// FromConfig is the target of a config file's server entry.
func FromConfig(s mcpconfig.Server) Target {
	t := Target{Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir, URL: s.URL, Headers: s.Headers, SSE: s.SSE,
		Name: s.Name, unresolved: s.Unresolved}
	if o := s.OAuth; o != nil && s.URL != "" {
		// The entry's OAuth client (Cursor's "auth", Claude Code's
		// "oauth"); the OAuth flags override it (authFlags.resolve).
		t.Auth = &oauth.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes}
		if o.CallbackPort != 0 {
			t.Auth.CallbackURL = fmt.Sprintf("http://localhost:%d/callback", o.CallbackPort)
		}
	}
	return t
}
