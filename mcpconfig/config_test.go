package mcpconfig_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inflight/mcpconfig"
	"inflight/target"
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
	tg, err := target.LoadConfigFile(path, "github")
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

	_, err = target.LoadConfigFile(path, "nope")
	if err == nil || !strings.Contains(err.Error(), `has no server "nope"; it has 3 servers: "filesystem", "github", "sqlite"`) {
		t.Errorf("missing name: %v", err)
	}
	_, err = target.LoadConfigFile(path, "")
	if err == nil || !strings.Contains(err.Error(), `3 servers: "filesystem", "github", "sqlite"; choose one with --server NAME`) {
		t.Errorf("no name: %v", err)
	}
}

func TestConfigCursor(t *testing.T) {
	t.Setenv("INFLIGHT_TEST_CURSOR_TOKEN", "cur-tok-987")
	path := testdata(t, "cursor", ".cursor", "mcp.json")
	remote, err := target.LoadConfigFile(path, "remote-server")
	if err != nil {
		t.Fatal(err)
	}
	if remote.URL != "http://localhost:3000/mcp" || remote.Headers.Get("Api_key") != "value" || remote.Headers.Get("Authorization") != "Bearer cur-tok-987" {
		t.Errorf("remote %+v", remote)
	}
	if d := remote.Describe(); strings.Contains(d, "cur-tok") || strings.Contains(d, "value") {
		t.Errorf("Describe leaks: %s", d)
	}
	py, err := target.LoadConfigFile(path, "python-server")
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
	gh, err := target.LoadConfigFile(path, "github")
	if err != nil {
		t.Fatal(err)
	}
	if gh.URL != "https://api.githubcopilot.com/mcp/" || gh.Headers.Get("Authorization") != "Bearer gh-tok-555" || gh.Validate() != nil {
		t.Errorf("github %+v (%v)", gh, gh.Validate())
	}
	fetch, err := target.LoadConfigFile(path, "fetch")
	if err != nil || fetch.Command != "uvx" || fmt.Sprint(fetch.Args) != "[mcp-server-fetch]" {
		t.Errorf("fetch %+v %v", fetch, err)
	}
	ws := testdata(t, "vscode")
	local, err := target.LoadConfigFile(path, "local")
	if err != nil || local.Dir != ws || local.Args[0] != ws+"/server.js" || local.Args[1] != "--url=http://x//y" {
		t.Errorf("local %+v %v", local, err)
	}

	// ${input:…} is VS Code's prompt: inflight reports it, unless a flag
	// gives the value.
	pp, err := target.LoadConfigFile(path, "Perplexity")
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
	tg, err := target.LoadConfigFile(testdata(t, "vscode_settings.json"), "")
	if err != nil || tg.Command != "npx" || tg.Name != "memory" {
		t.Errorf("%+v %v", tg, err)
	}
}

func TestConfigClaudeCode(t *testing.T) {
	t.Setenv("INFLIGHT_TEST_API_KEY", "ak-1")
	path := testdata(t, "claude_code_mcp.json")
	api, err := target.LoadConfigFile(path, "api-server")
	if err != nil || api.URL != "https://api.example.com/mcp" || api.Headers.Get("Authorization") != "Bearer ak-1" {
		t.Errorf("api %+v %v", api, err)
	}
	t.Setenv("INFLIGHT_TEST_API_BASE", "http://127.0.0.1:9")
	api, _ = target.LoadConfigFile(path, "api-server")
	if api.URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("${VAR:-default} with VAR set: %s", api.URL)
	}
	if sse, err := target.LoadConfigFile(path, "old-sse"); err != nil || !sse.SSE || sse.URL != "https://mcp.example.com/sse" || sse.Transport() != "sse" {
		t.Errorf("sse: %+v %v", sse, err)
	}
	if _, err := target.LoadConfigFile(path, "broken"); err == nil || !strings.Contains(err.Error(), `both "command" and "url"`) {
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
		_, err := target.LoadConfigFile(write("c.json", tc.body), "a")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
	if _, err := target.LoadConfigFile(filepath.Join(dir, "missing.json"), "a"); err == nil {
		t.Error("missing file: no error")
	}
}

// Comments and trailing commas, which VS Code's JSON-with-comments files
// allow, are read (by hujson); what looks like a comment inside a string is
// left alone.
func TestConfigJSONC(t *testing.T) {
	in := "{\n // c\n \"servers\": {\"a\": {\"command\": \"x // not a comment /* nor this */\", /* block\n */ \"args\": [\"1\", \"\\\"\",],},},\n}"
	s, err := mcpconfig.Parse([]byte(in), "mcp.json", "a")
	if err != nil {
		t.Fatal(err)
	}
	if s.Command != "x // not a comment /* nor this */" || fmt.Sprint(s.Args) != `[1 "]` {
		t.Errorf("server %+v", s)
	}
}

// A file that is not JSON with comments says which file and where.
func TestConfigErrorSaysWhere(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}", "config file bad.json: line 3, column 21"},
		{"{\"mcpServers\": \"not an object\"}", "config file bad.json: line 1, column"},
	} {
		_, err := mcpconfig.Parse([]byte(tc.body), "bad.json", "a")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.body, err, tc.want)
		}
	}
}
