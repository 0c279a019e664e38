package check

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testdata(t *testing.T, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"testdata", "config"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigClaudeDesktop(t *testing.T) {
	path := testdata(t, "claude_desktop_config.json")
	tg, err := LoadConfigFile(path, "github")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Command != "docker" || len(tg.Args) != 6 || tg.Args[5] != "ghcr.io/github/github-mcp-server" || tg.Name != "github" {
		t.Errorf("target %+v", tg)
	}
	if fmt.Sprint(tg.Env) != "[GITHUB_PERSONAL_ACCESS_TOKEN=ghp_exampleexampleexample]" {
		t.Errorf("env %v", tg.Env)
	}
	// The token in env is a secret: it never shows.
	if d := tg.Describe(); strings.Contains(d, "ghp_") {
		t.Errorf("Describe leaks: %s", d)
	}
	if got := tg.Redactor().String("echo ghp_exampleexampleexample"); got != "echo [redacted]" {
		t.Errorf("redactor: %s", got)
	}

	_, err = LoadConfigFile(path, "nope")
	if err == nil || !strings.Contains(err.Error(), `has no server "nope"; it has 3 servers: "filesystem", "github", "sqlite"`) {
		t.Errorf("missing name: %v", err)
	}
	_, err = LoadConfigFile(path, "")
	if err == nil || !strings.Contains(err.Error(), `3 servers: "filesystem", "github", "sqlite"; choose one with --server NAME`) {
		t.Errorf("no name: %v", err)
	}
}

func TestConfigCursor(t *testing.T) {
	t.Setenv("INFLIGHT_TEST_CURSOR_TOKEN", "cur-tok-987")
	path := testdata(t, "cursor", ".cursor", "mcp.json")
	remote, err := LoadConfigFile(path, "remote-server")
	if err != nil {
		t.Fatal(err)
	}
	if remote.URL != "http://localhost:3000/mcp" || remote.Headers.Get("Api_key") != "value" || remote.Headers.Get("Authorization") != "Bearer cur-tok-987" {
		t.Errorf("remote %+v", remote)
	}
	if d := remote.Describe(); strings.Contains(d, "cur-tok") || strings.Contains(d, "value") {
		t.Errorf("Describe leaks: %s", d)
	}
	py, err := LoadConfigFile(path, "python-server")
	if err != nil {
		t.Fatal(err)
	}
	ws := testdata(t, "cursor")
	if py.Command != "python" || py.Args[0] != ws+"/mcp-server.py" {
		t.Errorf("python %+v", py)
	}
	if fmt.Sprint(py.Env) != "[DATABASE_URL=postgres://localhost/db API_KEY=from-env-file]" {
		t.Errorf("env from envFile: %v", py.Env)
	}
}

func TestConfigVSCode(t *testing.T) {
	t.Setenv("INFLIGHT_TEST_GH_TOKEN", "gh-tok-555")
	path := testdata(t, "vscode", ".vscode", "mcp.json")
	gh, err := LoadConfigFile(path, "github")
	if err != nil {
		t.Fatal(err)
	}
	if gh.URL != "https://api.githubcopilot.com/mcp/" || gh.Headers.Get("Authorization") != "Bearer gh-tok-555" || gh.Validate() != nil {
		t.Errorf("github %+v (%v)", gh, gh.Validate())
	}
	fetch, err := LoadConfigFile(path, "fetch")
	if err != nil || fetch.Command != "uvx" || fmt.Sprint(fetch.Args) != "[mcp-server-fetch]" {
		t.Errorf("fetch %+v %v", fetch, err)
	}
	ws := testdata(t, "vscode")
	local, err := LoadConfigFile(path, "local")
	if err != nil || local.Dir != ws || local.Args[0] != ws+"/server.js" || local.Args[1] != "--url=http://x//y" {
		t.Errorf("local %+v %v", local, err)
	}

	// ${input:…} is VS Code's prompt: inflight reports it, unless a flag
	// gives the value.
	pp, err := LoadConfigFile(path, "Perplexity")
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Validate(); err == nil || !strings.Contains(err.Error(), "env PERPLEXITY_API_KEY uses ${input:perplexity-key}") {
		t.Errorf("unresolved input: %v", err)
	}
	pp.Override([]string{"PERPLEXITY_API_KEY=pk-1"}, nil, "")
	if err := pp.Validate(); err != nil || fmt.Sprint(pp.Env) != "[PERPLEXITY_API_KEY=pk-1]" {
		t.Errorf("after override: %v %v", err, pp.Env)
	}
}

func TestConfigVSCodeSettings(t *testing.T) {
	tg, err := LoadConfigFile(testdata(t, "vscode_settings.json"), "")
	if err != nil || tg.Command != "npx" || tg.Name != "memory" {
		t.Errorf("%+v %v", tg, err)
	}
}

func TestConfigClaudeCode(t *testing.T) {
	t.Setenv("INFLIGHT_TEST_API_KEY", "ak-1")
	path := testdata(t, "claude_code_mcp.json")
	api, err := LoadConfigFile(path, "api-server")
	if err != nil || api.URL != "https://api.example.com/mcp" || api.Headers.Get("Authorization") != "Bearer ak-1" {
		t.Errorf("api %+v %v", api, err)
	}
	t.Setenv("INFLIGHT_TEST_API_BASE", "http://127.0.0.1:9")
	api, _ = LoadConfigFile(path, "api-server")
	if api.URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("${VAR:-default} with VAR set: %s", api.URL)
	}
	if _, err := LoadConfigFile(path, "old-sse"); err == nil || !strings.Contains(err.Error(), "deprecated HTTP+SSE") {
		t.Errorf("sse: %v", err)
	}
	if _, err := LoadConfigFile(path, "broken"); err == nil || !strings.Contains(err.Error(), `both "command" and "url"`) {
		t.Errorf("broken: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ body, want string }{
		{`{"other":{}}`, `no "mcpServers"`},
		{`{"mcpServers":{}}`, "no servers"},
		{`{"mcpServers":{"a":{}}}`, `neither "command" nor "url"`},
		{`{"mcpServers":{"a":{"type":"ws","url":"x"}}}`, `unknown "type"`},
		{`{"mcpServers":{"a":{"command":"x","args":[{"k":1}]}}}`, "args[0]"},
		{`{"mcpServers":`, "unexpected end"},
	} {
		_, err := LoadConfigFile(write("c.json", tc.body), "a")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
	if _, err := LoadConfigFile(filepath.Join(dir, "missing.json"), "a"); err == nil {
		t.Error("missing file: no error")
	}
}

func TestStripJSONC(t *testing.T) {
	in := "{\n // c\n \"a\": \"x // not a comment /* nor this */\", /* block\n */ \"b\": [1, 2,],\n \"c\": \"\\\"\",\n}"
	want := "{\n \n \"a\": \"x // not a comment /* nor this */\",  \"b\": [1, 2],\n \"c\": \"\\\"\"\n}"
	if got := string(stripJSONC([]byte(in))); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

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
