package target

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestTargetValidateAndConfig(t *testing.T) {
	h := http.Header{}
	h.Set("X-Api-Key", "abc12345")
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{Target{}, "no server"},
		{Target{Command: "x", URL: "http://a"}, "give one server"},
		{Target{URL: "ftp://a"}, "scheme must be http or https"},
		{Target{URL: "http://a", Env: []string{"A=1"}}, "--env and --cwd apply to a stdio command"},
		{Target{Command: "x", Headers: h}, "-H applies to a --url server"},
	} {
		if err := tc.t.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.t, err, tc.want)
		}
	}
	cfg, err := Target{URL: "http://127.0.0.1/mcp", Headers: h, ProtocolVersion: "2025-11-25"}.ClientConfig(context.Background())
	if err != nil || cfg.URL != "http://127.0.0.1/mcp" || cfg.Headers.Get("X-Api-Key") != "abc12345" || cfg.ProtocolVersion != "2025-11-25" {
		t.Errorf("http config %+v %v", cfg, err)
	}
	cfg, err = Target{Command: "srv", Args: []string{"-v"}, Env: []string{"A=1"}, Dir: t.TempDir()}.ClientConfig(context.Background())
	if err != nil || cfg.Command != "srv" || cfg.Args[0] != "-v" || cfg.Env[0] != "A=1" || cfg.Dir == "" {
		t.Errorf("stdio config %+v %v", cfg, err)
	}
	if _, err := (Target{Command: "srv", Dir: "/no/such/dir"}).ClientConfig(context.Background()); err == nil {
		t.Error("missing --cwd accepted")
	}
	d := Target{URL: "http://u:pw-secret@h/mcp?token=qtok12345&x=1", Headers: h}.Describe()
	if strings.Contains(d, "pw-secret") || strings.Contains(d, "qtok12345") || strings.Contains(d, "abc12345") {
		t.Errorf("Describe leaks: %s", d)
	}
}

func TestParseHeaderAndEnv(t *testing.T) {
	if n, v, err := ParseHeader("Authorization:  Bearer x "); err != nil || n != "Authorization" || v != "Bearer x" {
		t.Errorf("%q %q %v", n, v, err)
	}
	if _, _, err := ParseHeader("Authorization Bearer sekrit"); err == nil || strings.Contains(err.Error(), "sekrit") {
		t.Errorf("malformed header: %v", err)
	}
	if _, err := ParseEnv("NOEQUALS"); err == nil {
		t.Error("env without = accepted")
	}
	if _, err := ParseEnv("A=b=c"); err != nil {
		t.Error(err)
	}
}

// url.Parse's error quotes the whole URL, and a URL that does not parse
// cannot be redacted; Validate says what is wrong without the user info or
// the query.
func TestValidateUnparseableURLHidesSecrets(t *testing.T) {
	err := Target{URL: "http://user:hunter2secret@exa mple.com/mcp?token=abcdefgh"}.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	if strings.Contains(msg, "hunter2secret") || strings.Contains(msg, "abcdefgh") || strings.Contains(msg, "user") {
		t.Errorf("secret in %q", msg)
	}
	for _, want := range []string{`invalid character " " in host name`, `"http://…@exa mple.com/mcp?…"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}
