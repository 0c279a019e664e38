package redact

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization":       true,
		"authorization":       true,
		"Proxy-Authorization": true,
		"Cookie":              true,
		"X-Api-Key":           true,
		"X-API-KEY":           true,
		"GITHUB_TOKEN":        true,
		"client_secret":       true,
		"X-Auth-Token":        true,
		"Keycloak-Realm":      true, // contains "key": better safe than sorry
		"Accept":              false,
		"User-Agent":          false,
		"X-Request-Id":        false,
		"PATH":                false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func testRedactor() *Redactor {
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-live-abcdef123456")
	h.Set("X-Api-Key", `key"with\quote`)
	h.Set("Cookie", "session=s3ss10nvalue; theme=dk")
	h.Set("Accept", "application/json")
	return New(h, []string{"GITHUB_TOKEN=ghp_0123456789", "PATH=/usr/bin", "EMPTY_KEY="}, "https://user:p%40ss@example.com/mcp?api_key=qk123456&mode=fast")
}

func TestString(t *testing.T) {
	r := testRedactor()
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"Authorization: Bearer sk-live-abcdef123456", "Authorization: [redacted]"},
		{"token sk-live-abcdef123456 echoed", "token [redacted] echoed"},
		{"the cookie s3ss10nvalue leaked", "the cookie [redacted] leaked"},
		{"theme=dk stays (too short to redact alone)", "theme=dk stays (too short to redact alone)"},
		{"env ghp_0123456789", "env [redacted]"},
		{"PATH /usr/bin is not secret", "PATH /usr/bin is not secret"},
		{`raw key"with\quote`, "raw [redacted]"},
		{`json "key\"with\\quote"`, `json "[redacted]"`},
		{"query qk123456", "query [redacted]"},
		{"password p@ss and p%40ss", "password [redacted] and [redacted]"},
		{"twice sk-live-abcdef123456 sk-live-abcdef123456", "twice [redacted] [redacted]"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBytesKeepsJSONValid(t *testing.T) {
	r := testRedactor()
	msg := map[string]any{"error": map[string]any{"message": `bad key key"with\quote and Bearer sk-live-abcdef123456`}}
	raw, _ := json.Marshal(msg)
	out := r.Bytes(raw)
	if !json.Valid(out) {
		t.Fatalf("redacted JSON is invalid: %s", out)
	}
	if strings.Contains(string(out), "sk-live") || strings.Contains(string(out), "quote") {
		t.Fatalf("secret survived: %s", out)
	}
	clean := []byte(`{"ok":true}`)
	if got := r.Bytes(clean); &got[0] != &clean[0] {
		t.Error("Bytes copied a slice with nothing to redact")
	}
	if string(raw) == string(out) {
		t.Error("Bytes modified nothing")
	}
}

func TestBytesDoesNotModifyInput(t *testing.T) {
	r := testRedactor()
	in := []byte("x sk-live-abcdef123456 y")
	orig := string(in)
	_ = r.Bytes(in)
	if string(in) != orig {
		t.Fatalf("input modified: %q", in)
	}
}

func TestHeader(t *testing.T) {
	r := testRedactor()
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-live-abcdef123456")
	h.Set("X-Custom-Token", "whatever-it-is")
	h.Set("Accept", "application/json")
	h.Set("X-Echo", "saw sk-live-abcdef123456")
	got := r.Header(h)
	want := map[string]string{
		"Authorization":  Placeholder,
		"X-Custom-Token": Placeholder,
		"Accept":         "application/json",
		"X-Echo":         "saw " + Placeholder,
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("Header[%s] = %q, want %q", k, got.Get(k), v)
		}
	}
	if h.Get("Authorization") != "Bearer sk-live-abcdef123456" {
		t.Error("Header modified its input")
	}
}

func TestEnvAndError(t *testing.T) {
	r := testRedactor()
	got := r.Env([]string{"GITHUB_TOKEN=ghp_0123456789", "MY_SECRET=x", "HOME=/root"})
	want := []string{"GITHUB_TOKEN=[redacted]", "MY_SECRET=[redacted]", "HOME=/root"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Env = %v, want %v", got, want)
	}
	err := fmt.Errorf("connect: %w", errors.New("401 for Bearer sk-live-abcdef123456"))
	if got := r.Error(err); got != "connect: 401 for [redacted]" {
		t.Errorf("Error = %q", got)
	}
	if r.Error(nil) != "" {
		t.Error("Error(nil) is not empty")
	}
}

func TestNilAndEmpty(t *testing.T) {
	var r *Redactor
	if r.String("a") != "a" || string(r.Bytes([]byte("b"))) != "b" || !r.Empty() {
		t.Error("nil Redactor changed something")
	}
	e := New(nil, nil, "")
	if !e.Empty() || e.String("Bearer x") != "Bearer x" {
		t.Error("empty Redactor changed something")
	}
	if r.Header(nil) != nil {
		t.Error("Header(nil) is not nil")
	}
}

// A secret that contains another must be replaced whole, not leave the
// rest of the longer one behind.
func TestLongestFirst(t *testing.T) {
	var b Builder
	b.AddValue("abcd")
	b.AddValue("abcdefgh")
	r := b.Build()
	if got := r.String("x abcdefgh y abcd"); got != "x [redacted] y [redacted]" {
		t.Errorf("got %q", got)
	}
}

// A URL that does not parse still has its password and secret parameters
// redacted: the error about it is where it is likeliest to be printed.
func TestUnparseableURL(t *testing.T) {
	for _, raw := range []string{
		"http://user:hunter2secret@exa mple.com/mcp?token=abcdefgh",
		"http://user:hunter2secret@host:port/mcp?a=1&api_key=abcdefgh#frag",
		"http://user:hunter2secret@exa%zzmple.com/?x=1;client_secret=abcdefgh",
	} {
		r := New(nil, nil, raw)
		got := r.String(`parse "` + raw + `": invalid`)
		if strings.Contains(got, "hunter2secret") || strings.Contains(got, "abcdefgh") {
			t.Errorf("%q: secret left in %q", raw, got)
		}
		if !strings.Contains(got, "user:"+Placeholder+"@") {
			t.Errorf("%q: redacted too much or too little: %q", raw, got)
		}
	}
	// The password escaped as typed is caught unescaped too.
	r := New(nil, nil, "http://u:p%40ssw0rd@a b/")
	if got := r.String("p@ssw0rd and p%40ssw0rd"); got != Placeholder+" and "+Placeholder {
		t.Errorf("got %q", got)
	}
}

// Secrets on a stdio server's command line: NAME=value (as env takes them)
// and --secret-flag value / --secret-flag=value; short values under such
// names are left alone, since a command line names things loosely.
func TestArgsSecrets(t *testing.T) {
	r := New(nil, nil, "", "env", "GITHUB_TOKEN=ghp_abcdef123", "server", "--api-key", "sk-live-999999", "--client-secret=hunter2hunter2", "--max-keys", "10", "--skip-keychain", "my_server.py", "--verbose")
	got := r.String("env GITHUB_TOKEN=ghp_abcdef123 server --api-key sk-live-999999 --client-secret=hunter2hunter2 --max-keys 10 --skip-keychain my_server.py --verbose")
	want := "env GITHUB_TOKEN=" + Placeholder + " server --api-key " + Placeholder + " --client-secret=" + Placeholder + " --max-keys 10 --skip-keychain my_server.py --verbose"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A secret learnt at run time (an OAuth token) is masked by every
// Redactor, also those built before it.
func TestRuntimeSecretsReachEveryRedactor(t *testing.T) {
	before := New(nil, nil, "")
	AddRuntime("tok-learnt-at-run-time-1234")
	after := New(nil, []string{"API_KEY=abc12345678"}, "")
	for _, r := range []*Redactor{before, after, nil} {
		if got := r.String(`{"echo":"tok-learnt-at-run-time-1234"}`); strings.Contains(got, "tok-learnt") {
			t.Errorf("String kept the runtime secret: %s", got)
		}
		if got := string(r.Bytes([]byte(`Bearer tok-learnt-at-run-time-1234`))); strings.Contains(got, "tok-learnt") {
			t.Errorf("Bytes kept the runtime secret: %s", got)
		}
	}
	if got := after.String("abc12345678"); strings.Contains(got, "abc12345678") {
		t.Errorf("a Redactor's own secrets are no longer masked: %s", got)
	}
}
