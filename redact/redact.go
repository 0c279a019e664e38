// Package redact keeps the secrets a user configured out of everything
// inflight prints or writes: error messages, trace files, --json output, log
// panes. Secrets are the values of Authorization and Cookie headers and of any
// header, environment variable, query parameter or command-line flag whose
// name says it holds one (see IsSecretName), and the password of any URL
// given as a value (a DATABASE_URL-style scheme://user:pass@host).
//
// A Redactor is built once from the configured target. It knows the secret
// values themselves, so it can replace them wherever they turn up — a server
// that echoes an Authorization header back in an error message is caught as
// surely as the header itself, whichever way the server escaped it in JSON.
package redact

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Placeholder replaces every secret value.
const Placeholder = "[redacted]"

// minFragment is the shortest piece of a secret (the credential of an
// Authorization header, one cookie's value) replaced on its own. Shorter
// pieces would blank out ordinary words; the whole value is always replaced
// whatever its length.
const minFragment = 4

// IsSecretName reports whether a header, environment variable, query
// parameter or flag with this name holds a secret (case-insensitive):
// Authorization, Proxy-Authorization, Cookie, Set-Cookie; any name containing
// "token", "secret", "key", "password", "passwd", "credential" or
// "signature"; a word starting with "auth" (X-Auth, AUTH_HEADER, basicAuth,
// but not author or authority); and the words "pwd" (DB_PWD, MYSQL_PWD) and
// "sig" (?sig=, X-Amz-Sig). The shell's PWD and OLDPWD, the working
// directory, are not secrets.
func IsSecretName(name string) bool {
	name = strings.TrimSpace(name)
	if name == "PWD" || name == "OLDPWD" {
		return false
	}
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, part := range []string{"token", "secret", "key", "password", "passwd", "credential", "signature"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	for _, w := range nameWords(name) {
		switch {
		case w == "pwd", w == "sig":
			return true
		case strings.HasPrefix(w, "auth") && !strings.HasPrefix(w, "author"):
			// author, authors, authority, authorized… name people and
			// places, not credentials; authorization is matched above.
			return true
		}
	}
	return false
}

// nameWords splits a name into its lower-case words at punctuation and at
// camelCase humps: "X-Auth-Sig" and "basicAuthSig" both give [x auth sig] and
// [basic auth sig].
func nameWords(name string) []string {
	var words []string
	start := -1
	rs := []rune(name)
	for i, r := range rs {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		hump := i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1])
		if start >= 0 && (!alnum || hump) {
			words = append(words, strings.ToLower(string(rs[start:i])))
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, strings.ToLower(string(rs[start:])))
	}
	return words
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
// servers echo those pieces rather than the whole header. Whatever the name,
// the password of a URL in the value is secret (see AddURLsIn).
func (b *Builder) AddHeader(name, value string) {
	if !IsSecretName(name) {
		b.AddURLsIn(value)
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
// secret (API_KEY, GITHUB_TOKEN, DB_PASSWORD, PGPASSWORD…): config files pass
// credentials to stdio servers that way. Whatever the key, the password of a
// URL in the value is secret (DATABASE_URL=postgres://user:pass@host/db).
func (b *Builder) AddEnv(env []string) {
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if IsSecretName(k) {
			b.AddValue(v)
		}
		b.AddURLsIn(v)
	}
}

// AddArgs marks the secrets a command line carries: the value of a
// NAME=value argument whose name says it is secret (GITHUB_TOKEN=…, as
// `env` takes them), of a flag whose name does, given as --db-password=…
// or as --password … (the next argument), and the password of any URL in
// an argument (--db postgres://user:pass@host/db).
func (b *Builder) AddArgs(args []string) {
	for i, a := range args {
		b.AddURLsIn(a)
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

// AddURLsIn marks the secrets of every URL inside s (a word containing
// "://", from its scheme on): its password and its secret-named query
// parameters, as AddURL does. Values that merely hold a URL — an
// environment entry, a flag, a header — are where connection strings with
// passwords live.
func (b *Builder) AddURLsIn(s string) {
	for rest := s; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return
		}
		start := i
		for start > 0 && isSchemeByte(rest[start-1]) {
			start--
		}
		end := i + 3
		for end < len(rest) && !isURLStop(rest[end]) {
			end++
		}
		if start < i {
			b.AddURL(rest[start:end])
		}
		rest = rest[end:]
	}
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// isURLStop ends a URL found inside a longer value.
func isURLStop(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`'
}

// secretFlag reports whether a flag's name ends in a word that names a
// secret, so that the argument after it is its value.
func secretFlag(name string) bool {
	n := strings.ToLower(name)
	for _, neg := range []string{"no-", "no_", "skip-", "disable-", "without-"} {
		if strings.HasPrefix(n, neg) {
			return false // a switch that turns something off: --no-auth
		}
	}
	for _, w := range []string{"token", "secret", "key", "password", "passwd", "pwd", "credential", "credentials", "auth", "sig", "signature"} {
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

// Empty reports whether the Redactor knows no secrets (its own, or the
// run's, see AddRuntime).
func (r *Redactor) Empty() bool { return r.ownEmpty() && runtimeEmpty() }

func (r *Redactor) ownEmpty() bool { return r == nil || r.replacer == nil }

// String returns s with every secret value replaced by Placeholder,
// however it is spelled in JSON (see Bytes), the run's secrets included.
func (r *Redactor) String(s string) string {
	return runtimeString(r.ownString(s))
}

func (r *Redactor) ownString(s string) string {
	if r.ownEmpty() {
		return s
	}
	if r.mayContain(s) {
		s = r.replacer.Replace(s)
	}
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	return r.redactEscaped(s)
}

// Bytes returns b with every secret value replaced by Placeholder. It
// returns b itself when nothing needs replacing, and a new slice otherwise:
// the caller's bytes are never modified.
//
// A secret is found as written, as Go's JSON encoder escapes it, and however
// else JSON may spell it: a server may escape "/" as "\/" (as PHP does), any
// character as \u0041, non-ASCII as \u00e4 or a surrogate pair. Text with a
// backslash in it is therefore compared decoded: its JSON escapes are read
// (wherever they are — the text need not be JSON), and each span that
// decodes to a secret is replaced. Only the secret's own bytes change, so
// JSON stays valid and the rest of a message stays byte for byte what the
// server sent. Text with neither a backslash nor a secret in it, which is
// nearly every message, costs a scan and is returned as it is.
func (r *Redactor) Bytes(b []byte) []byte {
	return runtimeBytes(r.ownBytes(b))
}

func (r *Redactor) ownBytes(b []byte) []byte {
	if r.ownEmpty() {
		return b
	}
	literal := false
	for _, s := range r.secrets {
		if bytes.Contains(b, []byte(s)) {
			literal = true
			break
		}
	}
	escaped := bytes.IndexByte(b, '\\') >= 0
	if !literal && !escaped {
		return b
	}
	if !literal {
		// Only escapes to look through: read b in place, and copy only
		// when a secret was found (redactEscaped returns its argument
		// otherwise). b is not modified, and nothing keeps the view.
		in := unsafe.String(unsafe.SliceData(b), len(b))
		if out := r.redactEscaped(in); unsafe.StringData(out) != unsafe.StringData(in) || len(out) != len(in) {
			return []byte(out)
		}
		return b
	}
	s := r.replacer.Replace(string(b))
	if escaped {
		s = r.redactEscaped(s)
	}
	return []byte(s)
}

// redactEscaped replaces the spans of s whose JSON-decoded text is a
// secret. It returns s itself when nothing matched.
func (r *Redactor) redactEscaped(s string) string {
	return redactEscapedWith(s, r.findDecoded)
}

// findDecoded returns where r's secrets are in dec, longest secrets first,
// none inside a longer one already found.
func (r *Redactor) findDecoded(dec string) [][2]int {
	var covered [][2]int
	for _, sec := range r.secrets {
	search:
		for off := 0; ; {
			i := strings.Index(dec[off:], sec)
			if i < 0 {
				break
			}
			i += off
			j := i + len(sec)
			off = j
			for _, c := range covered {
				if i < c[1] && j > c[0] {
					continue search // inside a longer secret already replaced
				}
			}
			covered = append(covered, [2]int{i, j})
		}
	}
	return covered
}

// redactEscapedWith replaces the spans of s whose JSON-decoded text find
// says is a secret. s is decoded once, remembering which span of s each
// decoded run came from; a match in the decoded text is mapped back to the
// span of s that spells it. It returns s itself when nothing matched.
func redactEscapedWith(s string, find func(dec string) [][2]int) string {
	dec, runs := decodeEscapes(s)
	if len(runs) == 0 {
		return s // no escape was read: the literal pass saw it all
	}
	found := find(dec)
	if len(found) == 0 {
		return s
	}
	// spans are the [start, end) byte ranges of s to replace.
	spans := make([][2]int, len(found))
	for k, f := range found {
		spans[k] = [2]int{sourceStart(runs, f[0]), sourceEnd(runs, f[1])}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	return replaceSpans(s, spans)
}

// escapeRun is one escape of the source text and what it decoded to: the
// decoded bytes [dec, dec+decLen) came from s[src:src+srcLen]. Between two
// runs, decoded and source bytes correspond one to one.
type escapeRun struct {
	dec, decLen, src, srcLen int
}

// decodeEscapes reads the JSON escapes in s (\", \\, \/, \b, \f, \n, \r,
// \t, \uXXXX and surrogate pairs) wherever they are, leaving every other
// byte as it is, and returns the decoded text with the escapes it read, in
// order. It allocates in proportion to the escapes, plus one copy of s when
// there is any: a 32 MiB message with one escape costs one copy, not a table
// of offsets eight times its size.
func decodeEscapes(s string) (dec string, runs []escapeRun) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	for i >= 0 && i < len(s) {
		text, n := readEscape(s, i)
		if n > 0 {
			if b.Cap() == 0 {
				b.Grow(len(s))
			}
			// The literal bytes since the previous escape, then this one.
			prevEnd := 0
			if len(runs) > 0 {
				last := runs[len(runs)-1]
				prevEnd = last.src + last.srcLen
			}
			b.WriteString(s[prevEnd:i])
			runs = append(runs, escapeRun{dec: b.Len(), decLen: len(text), src: i, srcLen: n})
			b.WriteString(text)
			i += n
		} else {
			i++
		}
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 {
			break
		}
		i += j
	}
	if len(runs) == 0 {
		return s, nil
	}
	last := runs[len(runs)-1]
	b.WriteString(s[last.src+last.srcLen:])
	return b.String(), runs
}

// readEscape reads the escape at s[i] (a backslash) and returns what it
// decodes to and its length; n is 0 when it is not a JSON escape.
func readEscape(s string, i int) (text string, n int) {
	if i+1 >= len(s) {
		return "", 0
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/':
		return s[i+1 : i+2], 2
	case 'b', 'f', 'n', 'r', 't':
		k := strings.IndexByte("bfnrt", c)
		return "\b\f\n\r\t"[k : k+1], 2
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return "", 0
		}
		n = 6
		if utf16.IsSurrogate(r) && i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if r2, ok := hex4(s, i+8); ok {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					r, n = pair, 12
				}
			}
		}
		return string(r), n
	}
	return "", 0
}

// sourceStart is where in the source the decoded byte at i began: the
// start of its escape, or its own place between escapes.
func sourceStart(runs []escapeRun, i int) int {
	k := sort.Search(len(runs), func(k int) bool { return runs[k].dec+runs[k].decLen > i })
	if k < len(runs) && runs[k].dec <= i {
		return runs[k].src // inside escape k
	}
	return literalSource(runs, k, i)
}

// sourceEnd is where in the source the decoded bytes before j ended.
func sourceEnd(runs []escapeRun, j int) int {
	if j == 0 {
		return 0
	}
	i := j - 1
	k := sort.Search(len(runs), func(k int) bool { return runs[k].dec+runs[k].decLen > i })
	if k < len(runs) && runs[k].dec <= i {
		return runs[k].src + runs[k].srcLen // inside escape k
	}
	return literalSource(runs, k, i) + 1
}

// literalSource maps the decoded byte i, which lies between escape k-1 and
// escape k, to its source offset.
func literalSource(runs []escapeRun, k, i int) int {
	if k == 0 {
		return i
	}
	prev := runs[k-1]
	return prev.src + prev.srcLen + (i - (prev.dec + prev.decLen))
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
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
