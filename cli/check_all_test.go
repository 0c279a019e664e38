package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"inflight/check"
	"inflight/exitcode"
	"inflight/internal/testkit/formats"
)

// check --all runs the battery on every server of a config: the demo over
// stdio, the demo over Streamable HTTP, and a server that cannot start,
// which is reported as such without stopping the others.
func TestCheckAllServersOfConfig(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr := newSyncBuffer()
	served := make(chan int, 1)
	go func() {
		served <- Execute(ctx, []string{"demo-server", "--http", "127.0.0.1:0"}, &bytes.Buffer{}, stderr)
	}()
	url := stderr.waitFor(t, regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`))
	defer func() {
		cancel()
		<-served
	}()
	cfg := map[string]any{"mcpServers": map[string]any{
		"demo-stdio": map[string]any{"command": exe, "args": []string{"demo-server"}, "env": map[string]string{childEnv: "1"}},
		"demo-http":  map[string]any{"url": url},
		"broken":     map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")},
	}}
	data, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	quick := []string{"--args", `{"seconds":0.3,"steps":3}`, "--late-window", "300ms", "--no-tasks"}

	junitPath := filepath.Join(t.TempDir(), "check.xml")
	code, stdout, errOut := inflight(t, append([]string{"check", "--config", path, "--all", "--json", "--junit", junitPath}, quick...)...)
	var reps []check.Report
	if err := json.Unmarshal([]byte(stdout), &reps); err != nil {
		t.Fatalf("not a JSON array (%v):\n%s", err, stdout)
	}
	if code != exitcode.Usage || len(reps) != 3 {
		t.Fatalf("exit %d, %d reports: %s", code, len(reps), errOut)
	}
	byName := map[string]check.Report{}
	for i, want := range []string{"broken", "demo-http", "demo-stdio"} {
		if reps[i].Name != want {
			t.Errorf("report %d is %q, want %q (the file's servers, sorted)", i, reps[i].Name, want)
		}
		byName[reps[i].Name] = reps[i]
	}
	if b := byName["broken"]; b.ExitCode != exitcode.Usage || b.Error == "" || len(b.Findings) != 0 {
		t.Errorf("broken: %+v", b)
	}
	for name, transport := range map[string]string{"demo-http": "http", "demo-stdio": "stdio"} {
		r := byName[name]
		if r.ExitCode != 0 || r.Transport != transport || r.Summary.Pass == 0 || r.Summary.Fail+r.Summary.Error > 0 {
			t.Errorf("%s: exit %d, transport %s, %+v, error %q", name, r.ExitCode, r.Transport, r.Summary, r.Error)
		}
	}
	// One JUnit file, a testsuite per server by its name in the config.
	doc, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	formats.JUnit(t, doc)
	var ju check.JUnit
	if err := xml.Unmarshal(doc, &ju); err != nil {
		t.Fatal(err)
	}
	if len(ju.Suites) != 3 {
		t.Fatalf("%d testsuites, want one per server:\n%s", len(ju.Suites), doc)
	}
	for i, want := range []string{"broken", "demo-http", "demo-stdio"} {
		if ju.Suites[i].Name != want {
			t.Errorf("testsuite %d is %q, want %q", i, ju.Suites[i].Name, want)
		}
	}
	if ju.Suites[0].Errors != 1 || ju.Suites[1].Tests == 0 || ju.Suites[1].Failures != 0 {
		t.Errorf("suites %+v", ju.Suites)
	}
	if !strings.Contains(errOut, "inflight check broken: connect") {
		t.Errorf("stderr does not say which server failed: %s", errOut)
	}

	// The table form, on the servers named: a report each, then the summary.
	code, stdout, errOut = inflight(t, append([]string{"check", "--config", path, "--all", "--server", "demo-stdio", "--server", "broken"}, quick...)...)
	if code != exitcode.Usage {
		t.Errorf("exit %d: %s", code, errOut)
	}
	summary := stdout[strings.LastIndex(stdout, "SERVER"):]
	for _, re := range []string{`(?m)^demo-stdio\s+stdio\s+\w+\s+\d+\s+0\s+0\s+passed`, `(?m)^broken\s+.*not run: `} {
		if !regexp.MustCompile(re).MatchString(summary) {
			t.Errorf("summary lacks %s:\n%s", re, summary)
		}
	}
	if strings.Index(stdout, "━━ demo-stdio ━━") > strings.Index(stdout, "━━ broken ━━") {
		t.Errorf("servers not in the order given:\n%s", stdout)
	}
	if strings.Count(stdout, "inflight check: ") != 1 {
		t.Errorf("want one battery's report (the broken server's never began):\n%s", stdout)
	}

	code, _, errOut = inflight(t, "check", "--config", path, "--all", "--server", "nope")
	if code != exitcode.Usage || !strings.Contains(errOut, `no server "nope"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = inflight(t, "call", "tools/list", "--config", path, "--server", "demo-stdio", "--server", "broken")
	if code != exitcode.Usage || !strings.Contains(errOut, "give one --server") {
		t.Errorf("call with two servers: exit %d: %s", code, errOut)
	}
}
