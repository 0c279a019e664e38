package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/exitcode"
	"inflight/internal/testkit/testbin"
	"inflight/mcpconfig"
	"inflight/proxy"
)

// TestProxyWrapRunsThroughInflight: --wrap --write rewrites a Claude
// Desktop config (backup kept, secret not shown), and the entry as
// written is a working command line: a host that runs it talks to the
// server through the proxy, whose --rule (carried into the entry) acts.
func TestProxyWrapRunsThroughInflight(t *testing.T) {
	demo := testbin.Build(t, "inflight")
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	orig := `{
  "mcpServers": {
    // the demo, for trying inflight
    "demo": {
      "command": "` + demo + `",
      "args": ["demo-server"],
      "env": {"DEMO_TOKEN": "sekrit-token-123"}
    }
  }
}
`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := inflight(t, "proxy", "--wrap", "--config", path, "--server", "demo", "--write",
		"--rule", "tools/call slow: cancel 50ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "sekrit") || !strings.Contains(stdout, `"DEMO_TOKEN": "[redacted]"`) {
		t.Errorf("the printed entry shows the secret, or no env:\n%s", stdout)
	}
	if b, _ := os.ReadFile(path + ".inflight-backup"); string(b) != orig {
		t.Errorf("the backup is not the original")
	}
	if !strings.Contains(stderr, "wrote "+path) || !strings.Contains(stderr, "inflight attach demo") {
		t.Errorf("stderr: %s", stderr)
	}
	written, _ := os.ReadFile(path)
	if !strings.Contains(string(written), "// the demo, for trying inflight") || !strings.Contains(string(written), "sekrit-token-123") {
		t.Errorf("the file lost its comment or its env:\n%s", written)
	}
	srv, err := mcpconfig.Parse(written, path, "demo")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	want := []string{"proxy", "--name", "demo", "--rule", "tools/call slow: cancel 50ms", "--", demo, "demo-server"}
	if srv.Command != exe || strings.Join(srv.Args, "|") != strings.Join(want, "|") {
		t.Fatalf("wrapped entry: %s %q", srv.Command, srv.Args)
	}

	// Run the entry as a host would (this test binary is inflight when
	// childEnv is set).
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), srv.Env...)
	cmd.Dir = dir
	errBuf := newSyncBuffer()
	cmd.Stderr = errBuf
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 2, "steps": 2}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != proxy.CodeCancelledByProxy {
		t.Errorf("the call through the wrapped entry ended with %v, want the rule's cancel", err)
	}
	_ = cs.Close()
	errBuf.waitFor(t, regexp.MustCompile(`inflight proxy demo: injected cancel 50ms: sent the server notifications/cancelled for tools/call slow`))
}

func TestProxyUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--rule", "tools/call slow: wait", "--", "true"}, `--rule "tools/call slow: wait": unknown action "wait"`},
		{[]string{"proxy", "--rule", "initialize: cancel", "--", "true"}, "initialize must never be cancelled"},
		{[]string{"proxy", "--wrap"}, "--wrap needs --config FILE"},
		{[]string{"proxy", "--wrap", "--config", "x.json", "--", "node", "s.js"}, "--wrap takes the server from --config"},
		{[]string{"proxy", "--config", "x.json", "--", "node"}, "--config, --server and --write go with --wrap"},
		{[]string{"proxy", "--wrap", "--config", filepath.Join("..", "mcpconfig", "testdata", "wrap", "vscode_mcp.json"), "--server", "github", "--rule", "*: wait"}, `unknown action "wait"`},
		{[]string{"proxy", "--url", "http://127.0.0.1:1/mcp", "--rule", "tools/call: later"}, `unknown action "later"`},
		{[]string{"proxy", "--url", "http://127.0.0.1:1/mcp", "--listen", "0.0.0.0:0"}, "serves only on a loopback address"},
		{[]string{"proxy", "--listen", "127.0.0.1:0", "--", "true"}, "--listen goes with --url"},
	} {
		code, _, stderr := inflight(t, tc.args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want usage and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestProxyWrapHTTP: --wrap on an HTTP entry prints it with the proxy's
// local URL and the command that runs the proxy in front of the original.
func TestProxyWrapHTTP(t *testing.T) {
	path := filepath.Join("..", "mcpconfig", "testdata", "wrap", "vscode_mcp.json")
	code, stdout, stderr := inflight(t, "proxy", "--wrap", "--config", path, "--server", "github", "--listen", "127.0.0.1:7002")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"url": "http://127.0.0.1:7002/mcp/"`,
		"run the proxy (before the host connects): inflight proxy --name github --listen 127.0.0.1:7002 --url https://api.githubcopilot.com/mcp/"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "is unchanged") {
		t.Errorf("stderr: %s", stderr)
	}
	// --rule goes along to the proxy's command.
	code, stdout, stderr = inflight(t, "proxy", "--wrap", "--config", path, "--server", "github", "--listen", "127.0.0.1:7002", "--rule", "tools/call: delay 5s")
	if want := "inflight proxy --name github --rule 'tools/call: delay 5s' --listen 127.0.0.1:7002 --url"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, stdout lacks %q:\n%s%s", code, want, stdout, stderr)
	}
	// So does --read-only, on an HTTP entry and a stdio one.
	code, stdout, stderr = inflight(t, "proxy", "--wrap", "--config", path, "--server", "github", "--listen", "127.0.0.1:7002", "--read-only")
	if want := "inflight proxy --name github --read-only --listen 127.0.0.1:7002 --url"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, stdout lacks %q:\n%s%s", code, want, stdout, stderr)
	}
	stdio := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(stdio, []byte(`{"mcpServers": {"demo": {"command": "demo-server"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = inflight(t, "proxy", "--wrap", "--config", stdio, "--server", "demo", "--read-only")
	if code != 0 || !strings.Contains(stdout, `"--read-only"`) {
		t.Errorf("exit %d, the wrapped stdio entry lacks --read-only:\n%s%s", code, stdout, stderr)
	}
}

// A --rule that does not parse is refused before anything starts, with
// what is wrong and the grammar, on the stdio proxy and the HTTP one alike.
func TestProxyBadRuleIsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"proxy", "--rule", "tools/call slow: linger 3s", "--", "true"},
		{"proxy", "--no-tui", "--url", "http://127.0.0.1:9/mcp", "--rule", "tools/call slow: linger 3s"},
	} {
		code, _, stderr := inflight(t, args...)
		if code != exitcode.Usage || !strings.Contains(stderr, "inflight proxy: --") || !strings.Contains(stderr, "a rule is:") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}

// TestProxyWrapSeveralServers: --wrap rewrites every --server named, and
// with none every server of the config (an entry already wrapped is left
// as it is, and said), in one write with one backup; each proxy is named
// after its entry, and --trace becomes one file per proxy.
func TestProxyWrapSeveralServers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wrap.json")
	orig := `{
  "mcpServers": {
    "demo-stdio": {"command": "inflight-demo", "args": ["demo-server"]},
    "everything": {"command": "node", "args": ["se.js", "stdio"]},
    "remote": {"type": "http", "url": "https://example.com/mcp"}
  }
}
`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	entry := func(t *testing.T, data []byte, name string) mcpconfig.Server {
		t.Helper()
		srv, err := mcpconfig.Parse(data, path, name)
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}

	// Two named: both printed, the file unchanged without --write.
	code, stdout, stderr := inflight(t, "proxy", "--wrap", "--config", path, "--server", "demo-stdio", "--server", "everything")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"demo-stdio": `, `"everything": `, `"--name", "demo-stdio"`, `"--name", "everything"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, `"remote"`) || !strings.Contains(stderr, "is unchanged") {
		t.Errorf("a server not named was wrapped, or the file said changed:\n%s%s", stdout, stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Errorf("the file changed without --write:\n%s", b)
	}

	// Two named, written: one backup, both entries through the proxy,
	// the third as it was.
	code, _, stderr = inflight(t, "proxy", "--wrap", "--config", path, "--server", "demo-stdio", "--server", "everything", "--write", "--trace", filepath.Join(dir, "t.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(path + ".inflight-backup"); string(b) != orig {
		t.Errorf("the backup is not the original:\n%s", b)
	}
	if backups, _ := filepath.Glob(path + ".inflight-backup*"); len(backups) != 1 {
		t.Errorf("backups %q, want one for the one write", backups)
	}
	if want := `restart the host to run "demo-stdio", "everything" through inflight, and watch them with: inflight attach --all`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	written, _ := os.ReadFile(path)
	for _, tc := range []struct{ name, trace, cmd string }{
		{"demo-stdio", filepath.Join(dir, "t-demo-stdio.jsonl"), "inflight-demo"},
		{"everything", filepath.Join(dir, "t-everything.jsonl"), "node"},
	} {
		srv := entry(t, written, tc.name)
		want := []string{"proxy", "--name", tc.name, "--trace", tc.trace, "--", tc.cmd}
		if srv.Command != exe || len(srv.Args) < len(want) || strings.Join(srv.Args[:len(want)], "|") != strings.Join(want, "|") {
			t.Errorf("%s: wrapped entry %s %q, want %s %q…", tc.name, srv.Command, srv.Args, exe, want)
		}
	}
	if srv := entry(t, written, "remote"); srv.URL != "https://example.com/mcp" {
		t.Errorf("the server not named changed: %+v", srv)
	}

	// None named: every server, the two wrapped already left as they are
	// and said; the HTTP one gets its proxy's command.
	code, stdout, stderr = inflight(t, "proxy", "--wrap", "--config", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "left as it is:"); n != 2 || !strings.Contains(stderr, "already runs through inflight proxy") {
		t.Errorf("stderr says %d entries left as they are, want the 2 wrapped already:\n%s", n, stderr)
	}
	if !strings.Contains(stdout, `"remote": `) || !strings.Contains(stdout, "run the proxy (before the host connects): inflight proxy --name remote --listen 127.0.0.1:") {
		t.Errorf("every server was not wrapped:\n%s", stdout)
	}

	// Written, then every server again: the HTTP entry now points at its
	// proxy on this machine, and is left as it is rather than wrapped a
	// second time.
	if code, _, stderr = inflight(t, "proxy", "--wrap", "--config", path, "--server", "remote", "--write"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = inflight(t, "proxy", "--wrap", "--config", path)
	if code != exitcode.Usage || strings.Count(stderr, "left as it is:") != 3 || !strings.Contains(stderr, `server "remote": its URL is on this machine (127.0.0.1:`) ||
		!strings.Contains(stderr, "no server left to wrap") {
		t.Errorf("exit %d: want every entry left as it is, the HTTP one for its loopback URL:\n%s", code, stderr)
	}

	// Named, one wrapped already: refused, the file as it was.
	before, _ := os.ReadFile(path)
	code, _, stderr = inflight(t, "proxy", "--wrap", "--config", path, "--server", "remote", "--server", "everything", "--write")
	if code != exitcode.Usage || !strings.Contains(stderr, `server "everything": it already runs through inflight proxy`) {
		t.Errorf("exit %d, stderr %q: want the wrapped entry named refused", code, stderr)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("a refused --wrap changed the file")
	}
	// One --name or --listen cannot serve several proxies.
	for _, extra := range [][]string{{"--name", "x"}, {"--listen", "127.0.0.1:7002"}} {
		args := append([]string{"proxy", "--wrap", "--config", filepath.Join("..", "mcpconfig", "testdata", "wrap", "vscode_mcp.json")}, extra...)
		if code, _, stderr := inflight(t, args...); code != exitcode.Usage || !strings.Contains(stderr, "with several servers") {
			t.Errorf("%q: exit %d, stderr %q: want it refused with several servers", extra, code, stderr)
		}
	}
}
