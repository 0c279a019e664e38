// Package redact keeps the secrets a user configured (Authorization and
// Cookie headers, any header, environment variable or URL query parameter
// whose name contains "token", "secret" or "key") out of everything inflight
// prints or writes: error messages, trace files, --json output, log panes.
//
// A Redactor is built once from the configured target. It knows the secret
// values themselves, so it can replace them wherever they turn up — a server
// that echoes an Authorization header back in an error message is caught as
// surely as the header itself.
package redact

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Placeholder replaces every secret value.
const Placeholder = "[redacted]"

// minFragment is the shortest piece of a secret (the credential of an
// Authorization header, one cookie's value) replaced on its own. Shorter
// pieces would blank out ordinary words; the whole value is always replaced
// whatever its length.
const minFragment = 4

// IsSecretName reports whether a header, environment variable or query
// parameter with this name holds a secret: Authorization, Proxy-Authorization,
// Cookie, Set-Cookie, or any name containing "token", "secret" or "key"
// (case-insensitive, so X-Api-Key, GITHUB_TOKEN and client_secret all are).
func IsSecretName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return strings.Contains(n, "token") || strings.Contains(n, "secret") || strings.Contains(n, "key")
}

// Redactor replaces known secret values. The zero value and nil redact
// nothing, so callers never need to check for one. A Redactor is immutable
// once built and safe for concurrent use.
type Redactor struct {
	// secrets is every value to replace, longest first, so that a secret
	// containing another is replaced whole.
	secrets  []string
	replacer *strings.Replacer
}

// Builder collects secrets; Build turns them into a Redactor.
type Builder struct {
	set map[string]bool
}

// AddValue marks a value as secret. Empty values are ignored. The value's
// JSON-escaped form is added too, so the secret is also caught inside JSON
// text (a trace line, a server's echo of it in a string).
func (b *Builder) AddValue(v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	if b.set == nil {
		b.set = map[string]bool{}
	}
	b.set[v] = true
	if enc, err := json.Marshal(v); err == nil {
		if s := string(enc[1 : len(enc)-1]); s != v {
			b.set[s] = true
		}
	}
}

// addFragment marks part of a secret value when it is long enough to be
// replaced on its own.
func (b *Builder) addFragment(v string) {
	if len(strings.TrimSpace(v)) >= minFragment {
		b.AddValue(v)
	}
}

// AddHeader marks the value of a header as secret when its name says it
// is one. For Authorization the credential after the scheme ("Bearer xyz" →
// "xyz") is secret on its own too, and for Cookie each cookie's value, since
// servers echo those pieces rather than the whole header.
func (b *Builder) AddHeader(name, value string) {
	if !IsSecretName(name) {
		return
	}
	b.AddValue(value)
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "authorization", "proxy-authorization":
		if _, cred, ok := strings.Cut(strings.TrimSpace(value), " "); ok {
			b.addFragment(strings.TrimSpace(cred))
		}
	case "cookie", "set-cookie":
		for _, part := range strings.Split(value, ";") {
			if _, v, ok := strings.Cut(part, "="); ok {
				b.addFragment(strings.Trim(strings.TrimSpace(v), `"`))
			}
		}
	}
}

// AddHeaders marks the secret values of every header in h.
func (b *Builder) AddHeaders(h http.Header) {
	for name, vs := range h {
		for _, v := range vs {
			b.AddHeader(name, v)
		}
	}
}

// AddEnv marks the values of KEY=VALUE environment entries whose key names a
// secret (API_KEY, GITHUB_TOKEN, CLIENT_SECRET…): config files pass
// credentials to stdio servers that way.
func (b *Builder) AddEnv(env []string) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && IsSecretName(k) {
			b.AddValue(v)
		}
	}
}

// AddArgs marks the secrets a command line carries: the value of a
// NAME=value argument whose name says it is secret (GITHUB_TOKEN=…, as
// `env` takes them), and of a flag whose name does, given as --api-key=…
// or as --api-key … (the next argument).
func (b *Builder) AddArgs(args []string) {
	for i, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		flag := strings.HasPrefix(name, "-")
		name = strings.TrimLeft(name, "-")
		if name == "" || !IsSecretName(name) {
			continue
		}
		switch {
		case hasValue:
		case flag && secretFlag(name) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			// The next argument is the value only of a flag that names a
			// secret (--api-key), not of a switch that merely mentions
			// one (--skip-keychain).
			value = args[i+1]
		default:
			continue
		}
		// A command line names things loosely (--max-keys 10): a short
		// value is more likely a number than a secret, and hiding it
		// would blank every "10" in the output.
		if len(strings.TrimSpace(value)) >= minArgSecret {
			b.AddValue(value)
		}
	}
}

// secretFlag reports whether a flag's name ends in a word that names a
// secret, so that the argument after it is its value.
func secretFlag(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"token", "secret", "key", "password", "passwd", "credentials"} {
		if strings.HasSuffix(n, w) {
			return true
		}
	}
	return false
}

// minArgSecret is the shortest command-line value AddArgs takes for a
// secret.
const minArgSecret = 6

// AddURL marks the password of a URL's user info and the values of query
// parameters whose names say they are secret (?api_key=…, ?token=…).
func (b *Builder) AddURL(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		b.addUnparsedURL(raw)
		return
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			b.AddValue(p)
			b.AddValue(url.QueryEscape(p))
		}
	}
	for k, vs := range u.Query() {
		if !IsSecretName(k) {
			continue
		}
		for _, v := range vs {
			b.AddValue(v)
			b.AddValue(url.QueryEscape(v))
		}
	}
}

// addUnparsedURL is AddURL for a URL that does not parse (a space in the
// host, a bad escape). Such a URL still holds its secrets where people
// typed them, and the error about it is the likeliest place for them to be
// printed, so they are found by the URL's shape alone: the password between
// "user:" and the last "@" of the authority, and secret-named parameters
// after "?", each as typed and unescaped.
func (b *Builder) addUnparsedURL(raw string) {
	rest := raw
	if _, r, ok := strings.Cut(raw, "://"); ok {
		rest = r
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		if _, pass, ok := strings.Cut(authority[:at], ":"); ok {
			b.AddValue(pass)
			if p, err := url.PathUnescape(pass); err == nil {
				b.AddValue(p)
			}
		}
	}
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return
	}
	query, _, _ = strings.Cut(query, "#")
	for _, kv := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if !IsSecretName(k) {
			continue
		}
		b.AddValue(v)
		if uv, err := url.QueryUnescape(v); err == nil {
			b.AddValue(uv)
		}
	}
}

// Build returns a Redactor for the secrets collected so far.
func (b *Builder) Build() *Redactor {
	if len(b.set) == 0 {
		return &Redactor{}
	}
	secrets := make([]string, 0, len(b.set))
	for s := range b.set {
		secrets = append(secrets, s)
	}
	// Longest first: strings.Replacer tries its pairs in order at each
	// position, so a secret that contains another is replaced whole.
	sort.Slice(secrets, func(i, j int) bool {
		if len(secrets[i]) != len(secrets[j]) {
			return len(secrets[i]) > len(secrets[j])
		}
		return secrets[i] < secrets[j]
	})
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, Placeholder)
	}
	return &Redactor{secrets: secrets, replacer: strings.NewReplacer(pairs...)}
}

// New returns a Redactor for the secret headers, environment entries and
// URL of a target, and the secrets in its command line (args).
func New(headers http.Header, env []string, rawURL string, args ...string) *Redactor {
	var b Builder
	b.AddHeaders(headers)
	b.AddEnv(env)
	b.AddArgs(args)
	if rawURL != "" {
		b.AddURL(rawURL)
	}
	return b.Build()
}

// Empty reports whether the Redactor knows no secrets.
func (r *Redactor) Empty() bool { return r == nil || r.replacer == nil }

// String returns s with every secret value replaced by Placeholder.
func (r *Redactor) String(s string) string {
	if r.Empty() || !r.mayContain(s) {
		return s
	}
	return r.replacer.Replace(s)
}

// Bytes returns b with every secret value replaced by Placeholder. It
// returns b itself when nothing needs replacing, and a new slice otherwise:
// the caller's bytes are never modified.
func (r *Redactor) Bytes(b []byte) []byte {
	if r.Empty() {
		return b
	}
	found := false
	for _, s := range r.secrets {
		if bytes.Contains(b, []byte(s)) {
			found = true
			break
		}
	}
	if !found {
		return b
	}
	return []byte(r.replacer.Replace(string(b)))
}

// Header returns a copy of h fit to print: values of secret headers are
// Placeholder, and secrets appearing in other values are replaced too.
func (r *Redactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vs := range h {
		cp := make([]string, len(vs))
		for i, v := range vs {
			if IsSecretName(name) {
				cp[i] = Placeholder
			} else {
				cp[i] = r.String(v)
			}
		}
		out[name] = cp
	}
	return out
}

// Env returns a copy of KEY=VALUE entries fit to print, with the values of
// secret-named keys replaced.
func (r *Redactor) Env(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok && IsSecretName(k) {
			out[i] = k + "=" + Placeholder
			continue
		}
		out[i] = r.String(kv)
	}
	return out
}

// Error returns err's message with secrets replaced ("" for nil).
func (r *Redactor) Error(err error) string {
	if err == nil {
		return ""
	}
	return r.String(err.Error())
}

// mayContain is a cheap pre-check so the common case (no secret in s)
// allocates nothing.
func (r *Redactor) mayContain(s string) bool {
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}
