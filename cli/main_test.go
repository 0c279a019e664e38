package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/call"
	"inflight/check"
	"inflight/exitcode"
	"inflight/internal/testkit/hostile"
	"inflight/termsafe"
	"inflight/version"
)

// childEnv makes the test binary act as inflight itself: re-executed with
// this variable set, it runs its arguments through run, which is how the
// "no target" path (inflight re-executing itself as demo-server) is tested
// with a real child process.
const childEnv = "INFLIGHT_MAIN_TEST_CHILD"

func TestMain(m *testing.M) {
	// The exit-path tests re-execute this binary as a hostile server too.
	hostile.RunFromEnv()
	runTestBrowser() // $BROWSER of the auth tests (auth_test.go)
	if os.Getenv(childEnv) == "1" {
		os.Exit(Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// inflight runs the command line and returns its exit code and output.
func inflight(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func decodeReport(t *testing.T, stdout string) call.Report {
	t.Helper()
	var rep call.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("no JSON report (%v):\n%s", err, stdout)
	}
	return rep
}

// With no server named, inflight re-executes itself as demo-server and
// talks to it over stdio.
func TestNoTargetIsTheDemo(t *testing.T) {
	t.Setenv(childEnv, "1")
	code, stdout, stderr := inflight(t, "call", "--tool", "slow", "--args", `{"seconds":0.2,"steps":2}`, "--json")
	rep := decodeReport(t, stdout)
	if code != 0 || rep.State != "completed" || rep.Transport != "stdio" || rep.Server != "inflight-demo 0.1.0" || rep.Progress.Count != 2 {
		t.Fatalf("exit %d %+v\nstderr: %s", code, rep, stderr)
	}

	code, stdout, _ = inflight(t, "call", "--tool", "slow", "--args", `{"seconds":2}`, "--cancel-after", "300ms", "--late-window", "300ms", "--json")
	rep = decodeReport(t, stdout)
	if code != exitcode.Cancelled || rep.Cancel == nil || *rep.Cancel.Signal != "notifications/cancelled" {
		t.Fatalf("exit %d cancel %+v", code, rep.Cancel)
	}
}

// A stdio server after a literal "--", with --env and --cwd.
func TestDashCommand(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		code, stdout, stderr := inflight(t, "call", "tools/call", `{"name":"fail","arguments":{"rpc":true,"message":"m"}}`, "--json",
			"--protocol-version", version, "--env", childEnv+"=1", "--cwd", t.TempDir(), "--", exe, "demo-server")
		rep := decodeReport(t, stdout)
		if code != exitcode.Failed || rep.Error == nil || rep.Error.Message != "m" || rep.ProtocolVersion != version {
			t.Errorf("%s: exit %d %+v\nstderr: %s", version, code, rep, stderr)
		}
	}
}

// A server from a config file, and the error naming the servers in it.
func TestConfigTarget(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"demo":  map[string]any{"command": exe, "args": []string{"demo-server"}, "env": map[string]string{childEnv: "1"}},
		"other": map[string]any{"url": "http://127.0.0.1:1/mcp"},
	}}
	data, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	os.WriteFile(path, data, 0o600)
	code, stdout, stderr := inflight(t, "call", "tools/list", "--config", path, "--server", "demo", "--json")
	if rep := decodeReport(t, stdout); code != 0 || rep.State != "completed" {
		t.Errorf("exit %d %+v: %s", code, rep, stderr)
	}
	code, _, stderr = inflight(t, "call", "tools/list", "--config", path, "--server", "nope")
	if code != exitcode.Usage || !strings.Contains(stderr, `it has 2 servers: "demo", "other"`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// syncBuffer is a bytes.Buffer safe for the demo server's goroutines, which
// tells waitFor when something matching arrives.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{})} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return n, err
}

func (b *syncBuffer) waitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		b.mu.Lock()
		m := re.FindString(b.buf.String())
		ch := b.changed
		b.mu.Unlock()
		if m != "" {
			return m
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("nothing matched %s in:\n%s", re, b.buf.String())
		}
	}
}

// demo-server --http serves Streamable HTTP; call, check and replay work
// against it by URL.
func TestDemoServerHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stderr := newSyncBuffer()
	served := make(chan int, 1)
	go func() {
		served <- Execute(ctx, []string{"demo-server", "--http", "127.0.0.1:0"}, &bytes.Buffer{}, stderr)
	}()
	url := stderr.waitFor(t, regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`))
	defer func() {
		cancel()
		if code := <-served; code != 0 {
			t.Errorf("demo-server exit %d", code)
		}
	}()

	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	code, stdout, errOut := inflight(t, "call", "--url", url, "--tool", "slow", "--args", `{"seconds":2}`, "--cancel-after", "200ms",
		"--json", "--trace", tracePath, "-H", "Authorization: Bearer tok-abcdef")
	rep := decodeReport(t, stdout)
	if code != exitcode.Cancelled || rep.Transport != "http" || rep.Era != "modern" || *rep.Cancel.Signal != "stream_closed" {
		t.Fatalf("exit %d %+v: %s", code, rep, errOut)
	}
	code, stdout, _ = inflight(t, "replay", tracePath)
	if code != 0 || !strings.Contains(stdout, "cancel signal: stream_closed") {
		t.Errorf("replay exit %d:\n%s", code, stdout)
	}

	// A bare URL, as the TUI takes it, works for check too.
	code, stdout, errOut = inflight(t, "check", url, "--protocol-version", "2025-11-25", "--args", `{"seconds":0.3,"steps":3}`,
		"--late-window", "300ms", "--json")
	var crep check.Report
	if err := json.Unmarshal([]byte(stdout), &crep); err != nil || code != 0 || crep.Summary.Pass == 0 || crep.Summary.Fail+crep.Summary.Warn > 0 {
		var notPassed []string
		for _, f := range crep.Findings {
			if f.Status != check.StatusPass {
				notPassed = append(notPassed, f.Status+" "+f.ID+": "+f.Detail)
			}
		}
		t.Errorf("check exit %d %+v (%v): %s\n%s", code, crep.Summary, err, errOut, strings.Join(notPassed, "\n"))
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call"}, "give a METHOD"},
		{[]string{"call", "--bogus"}, "unknown flag"},
		{[]string{"call", "a", "b", "c"}, "at most METHOD and PARAMS_JSON"},
		{[]string{"call", "tools/list", "http://127.0.0.1:1/mcp"}, "a server URL goes first or with --url"},
		// A URL first is the server, as for the TUI and check.
		{[]string{"call", "http://127.0.0.1:1/mcp", "tools/list", "--url", "http://127.0.0.1:2/mcp"}, "give the URL once"},
		{[]string{"call", "tools/list", "--server", "x"}, "--server NAME needs --config FILE"},
		{[]string{"call", "tools/list", "--url", "http://a", "--", "x"}, "give one server"},
		{[]string{"call", "tools/list", "--url", "http://a", "-H", "Authorization sekrit"}, "want 'Name: value'"},
		{[]string{"call", "tools/list", "--url", "http://a", "-H", "X-Token: sekrit\r\nX-Other: 1"}, "value holds a line break"},
		{[]string{"call", "tools/list", "--url", "http://a", "-H", "X(y: 1"}, "is not a valid header name"},
		{[]string{"call", "tools/list", "--url", "http://a", "-H", "mcp-session-id: abc"}, "header mcp-session-id is set by inflight itself"},
		{[]string{"call", "tools/list", "--url", "http://a", "--env", "A=1"}, "--env and --cwd apply to a stdio command"},
		{[]string{"call", "tools/list", "-H", "A: b", "--", "srv"}, "-H applies to a --url server"},
		{[]string{"call", "tools/list", "--protocol-version", "1999-01-01"}, "inflight speaks 2026-07-28"},
		// Later than the modern version is not modern: a usage error, not a
		// failure at connect (wire.IsModernVersion compares strings).
		{[]string{"call", "tools/list", "--protocol-version", "9999"}, "inflight speaks 2026-07-28"},
		{[]string{"check", "--protocol-version", "2026-07-29"}, "inflight speaks 2026-07-28"},
		{[]string{"--protocol-version", "2024-11-05"}, "spoken over its own HTTP transport only, HTTP+SSE: give a URL with --transport sse"},
		{[]string{"--protocol-version", "2024-11-06"}, "inflight speaks 2026-07-28"},
		{[]string{"--url", "http://127.0.0.1:1/sse", "--transport", "websocket"}, `--transport "websocket"`},
		{[]string{"call", "tools/list", "--config", "/no/such/file.json"}, "config file"},
		{[]string{"call", "x", "--args", "{}"}, "--args goes with --tool"},
		{[]string{"call", "--tool", "slow", "--args", "[1]"}, "--args must be a JSON object ({…}), not an array"},
		{[]string{"call", "--tool", "slow", "--args", "{bad"}, "--args is not valid JSON (at byte 2"},
		{[]string{"--call", "slow={bad"}, "--call slow: the text after '=' is not valid JSON"},
		{[]string{"call", "resources/list", "--tool", "slow"}, "--tool is tools/call"},
		{[]string{"call", "tools/list", "--url", "ftp://x"}, "scheme must be http or https"},
		{[]string{"call", "tools/list", "--timeout", "soon"}, "invalid argument"},
		{[]string{"call", "tools/list", "--timeout", "0"}, `"0" for "--timeout" flag: must be longer than zero`},
		{[]string{"call", "tools/list", "--max-timeout", "-1s"}, `"-1s" for "--max-timeout" flag: must not be negative`},
		{[]string{"call", "tools/list", "--late-window", "0s"}, `"--late-window" flag: must be longer than zero`},
		{[]string{"call", "tools/list", "--cancel-after", "-1s"}, `"--cancel-after" flag: must not be negative`},
		{[]string{"check", "--grace", "-1ms"}, `"--grace" flag: must not be negative`},
		{[]string{"check", "--cancel-after", "0"}, `"--cancel-after" flag: must be longer than zero`},
		{[]string{"--timeout", "0"}, `"--timeout" flag: must be longer than zero`},
		{[]string{"npx", "server"}, "put it after --"},
		{[]string{"--call", "={}"}, "want TOOL"},
		{[]string{"replay"}, "accepts 1 arg"},
		{[]string{"check", "not-a-url"}, "at most a server URL"},
		{[]string{"demo-server", "extra"}, "unknown command"},
	} {
		code, _, stderr := inflight(t, tc.args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
		if strings.Contains(stderr, "sekrit") {
			t.Errorf("%q: secret in the error: %s", tc.args, stderr)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, stdout, _ := inflight(t, "--version")
	if code != 0 || stdout != "inflight "+version.Version+"\n" {
		t.Errorf("--version: %d %q", code, stdout)
	}
	code, stdout, _ = inflight(t, "call", "--help")
	for _, flag := range []string{"--tool", "--args", "--timeout", "--reset-on-progress", "--max-timeout", "--cancel-after",
		"--late-window", "--json", "--trace", "--env", "--cwd", "--url", "--header", "--config", "--server", "--protocol-version"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("call --help lacks %s", flag)
		}
	}
	if code != 0 {
		t.Errorf("--help exit %d", code)
	}
}

func TestParseCallFlag(t *testing.T) {
	tool, params, err := ParseCallFlag(`slow={"seconds":3}`)
	if err != nil || tool != "slow" || string(params) != `{"arguments":{"seconds":3},"name":"slow"}` {
		t.Errorf("%s %s %v", tool, params, err)
	}
	if tool, params, err = ParseCallFlag("silent"); err != nil || tool != "silent" || string(params) != `{"name":"silent"}` {
		t.Errorf("%s %s %v", tool, params, err)
	}
	for _, bad := range []string{"", "=x", `slow={"a":`, "slow=[]"} {
		if _, _, err := ParseCallFlag(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A usage error quotes what was typed — url.Parse quotes the whole URL, a
// usage message may quote a bare URL, pflag an unknown flag — so it is
// printed with the command line's secrets redacted and made inert.
func TestUsageErrorsRedactedAndInert(t *testing.T) {
	const password, token = "hunter2secret", "abcdefgh"
	bad := "http://user:" + password + "@exa mple.com/mcp?token=" + token
	good := "http://user:" + password + "@example.com/mcp?token=" + token
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "tools/list", "--url", bad}, `invalid character " " in host name`},
		{[]string{"call", "tools/list", "--url", bad, "--json"}, `invalid character " " in host name`},
		{[]string{"check", bad}, `invalid character " " in host name`},
		{[]string{"check", "http://a/", good}, "at most a server URL"},
		{[]string{"check", "--url", good, "http://a/"}, "give the URL once"},
		{[]string{"call", "tools/list", "-H", "X-Api-Key: " + password, "--", "\x1b]0;T\x07"}, "-H applies to a --url server"},
		{[]string{"call", "--\x1b]0;PWNED\x07\x1b[41m\u009b\u202e"}, "unknown flag"},
	} {
		code, stdout, stderr := inflight(t, tc.args...)
		if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
		for _, out := range []string{stdout, stderr} {
			if strings.Contains(out, password) || strings.Contains(out, token) {
				t.Errorf("%q: a secret is in the output: %q", tc.args, out)
			}
		}
		for _, line := range strings.Split(stderr, "\n") {
			if !termsafe.IsSafe(line) {
				t.Errorf("%q: stderr line is not inert: %q", tc.args, line)
			}
		}
	}
}

// With --json, a usage failure prints the command's JSON object too —
// exactly one, on stdout — and still exits 2.
func TestUsageErrorsJSON(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "--json"}, "give a METHOD"},
		{[]string{"call", "tools/list", "--json", "--url", "ftp://x"}, "scheme must be http or https"},
		{[]string{"call", "--json", "--tool", "slow", "--args", "[1]"}, "must be a JSON object"},
		{[]string{"call", "--json", "--timeout", "soon"}, "invalid argument"},
		{[]string{"call", "tools/list", "--json", "--protocol-version", "1999-01-01"}, "inflight speaks"},
	} {
		code, stdout, stderr := inflight(t, tc.args...)
		rep := decodeOne[call.Report](t, tc.args, stdout)
		if code != exitcode.Usage || rep.ExitCode != exitcode.Usage || rep.State != "not_sent" || rep.ID != nil ||
			rep.Error == nil || !rep.Error.Local || !strings.Contains(rep.Error.Message, tc.want) {
			t.Errorf("%q: exit %d, report %+v (error %+v); stderr %q", tc.args, code, rep, rep.Error, stderr)
		}
	}
	if _, stdout, _ := inflight(t, "call", "tools/list", "--json", "--url", "ftp://x"); !strings.Contains(stdout, `"transport": "http"`) {
		t.Errorf("a --url target is not reported as http:\n%s", stdout)
	}

	for _, args := range [][]string{
		{"check", "--json", "--url", "ftp://x"},
		{"check", "--json", "not-a-url"},
		{"check", "--json", "--server", "x"},
	} {
		code, stdout, stderr := inflight(t, args...)
		rep := decodeOne[check.Report](t, args, stdout)
		if code != exitcode.Usage || rep.ExitCode != exitcode.Usage || rep.Error == "" || len(rep.Findings) != 0 {
			t.Errorf("%q: exit %d, report %+v; stderr %q", args, code, rep, stderr)
		}
	}

	// A usage failure before any server was named does not guess one.
	if _, stdout, _ := inflight(t, "check", "--json", "--bogus"); !strings.Contains(stdout, `"target": "unknown"`) || !strings.Contains(stdout, `"transport": "unknown"`) {
		t.Errorf("check --json --bogus names a target or transport:\n%s", stdout)
	}
	if _, stdout, _ := inflight(t, "check", "--json", "--url", "ftp://x"); !strings.Contains(stdout, `"target": "ftp://x"`) {
		t.Errorf("check --json --url ftp://x does not name the URL it refused:\n%s", stdout)
	}
	if _, stdout, _ := inflight(t, "call", "--json", "--timeout", "soon"); !strings.Contains(stdout, `"transport": "unknown"`) {
		t.Errorf("call --json --timeout soon guesses a transport:\n%s", stdout)
	}

	// Without --json, stdout stays empty.
	if _, stdout, _ := inflight(t, "call"); stdout != "" {
		t.Errorf("stdout without --json: %q", stdout)
	}
}

// decodeOne decodes stdout as exactly one JSON object of type T.
func decodeOne[T any](t *testing.T, args []string, stdout string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%q: stdout is not a JSON object (%v): %q", args, err, stdout)
		return v
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Errorf("%q: more than one JSON value on stdout: %q", args, stdout)
	}
	return v
}
