package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/internal/testkit/npmpeer"
	"inflight/internal/testkit/testbin"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// The MCP Inspector as a host for one plain call. `npx
// @modelcontextprotocol/inspector --cli` is the launcher of the inspector
// package (2.x; the separate inspector-cli package is the older 1.x CLI);
// the tests run that launcher's file under Node 22 from the npmpeer cache,
// not npx, which would ask the registry whether a newer version exists
// and pick the machine's node. Its CLI (2.12, on the TypeScript SDK 2.3's
// client) speaks the legacy era, 2025-11-25, on both transports: it
// initializes, sets the log level to debug, lists the tools, and calls.

// inspectorCLI runs `inspector --cli ARGS…` and returns its stdout.
func inspectorCLI(t *testing.T, in npmpeer.Install, home string, args ...string) string {
	t.Helper()
	launcher := filepath.Join(in.Module("@modelcontextprotocol/inspector"), "clients", "launcher", "build", "index.js")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.NodePath(), append([]string{launcher, "--cli"}, args...)...)
	// Its own files (a catalog, should it write one) and the proxy's
	// attach socket go under a home of the test's: the Inspector passes
	// a stdio server only a default environment (HOME, PATH, …).
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR=", "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Inspector's CLI: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if strings.Contains(stderr.String(), "⚑") {
		t.Errorf("the proxy flagged something (its stderr, passed through by the Inspector):\n%s", stderr.String())
	}
	return stdout.String()
}

// callText is the text of the one content item the Inspector printed as
// the tool's result.
func callText(t *testing.T, out string) string {
	t.Helper()
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("the Inspector printed %q (%v): want the call's result", out, err)
	}
	return res.Content[0].Text
}

var inspectorCall = []string{"--method", "tools/call", "--tool-name", "slow", "--tool-arg", "seconds=0", "steps=1"}

// slowDone begins the tool's answer (the time it took follows).
const slowDone = "slow finished 1 steps in "

// TestInspectorCLIHostStdio: the Inspector launches `inflight proxy --
// inflight demo-server` as its server and calls slow. The result reaches
// it, and the proxy's trace has the Inspector's requests, each completed,
// and no violation.
func TestInspectorCLIHostStdio(t *testing.T) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Inspector)
	inflight := testbin.Build(t, "inflight")
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "insp.trace")
	args := append([]string{inflight, "proxy", "--name", "insp", "--trace", tracePath, "--", inflight, "demo-server"}, inspectorCall...)
	if got := callText(t, inspectorCLI(t, in, dir, args...)); !strings.HasPrefix(got, slowDone) {
		t.Errorf("the Inspector got %q, want %q…", got, slowDone)
	}
	f, err := os.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	states := map[string]string{} // method (target) → last state
	var client string
	var conn trace.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var rec trace.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		switch {
		case rec.Event == trace.EventViolation:
			t.Errorf("violation recorded: %s %s", rec.Code, rec.Text)
		case rec.Event == "state":
			states[strings.TrimSpace(rec.Method+" "+rec.Target)] = rec.State
		case rec.Event == "connected":
			conn = rec
		case rec.By == "host" && strings.Contains(string(rec.Msg), `"clientInfo"`):
			var m struct {
				Params struct {
					ClientInfo struct{ Name string } `json:"clientInfo"`
				} `json:"params"`
			}
			_ = json.Unmarshal(rec.Msg, &m)
			client = m.Params.ClientInfo.Name
		}
	}
	if client != "inspector-cli" {
		t.Errorf("the host said it is %q, want inspector-cli", client)
	}
	if conn.Era != "legacy" || conn.ProtocolVersion != "2025-11-25" {
		t.Errorf("connection %+v: want the legacy era, 2025-11-25", conn)
	}
	for _, m := range []string{"initialize", "tools/list", "tools/call slow"} {
		if states[m] != "completed" {
			t.Errorf("%s: last state %q, want completed (all: %v)", m, states[m], states)
		}
	}
}

// TestInspectorCLIHostHTTP: the Inspector calls slow over Streamable HTTP
// through the reverse proxy to the demo's HTTP server. The result reaches
// it; the tracker has the host's tools/call completed, and no flag.
func TestInspectorCLIHostHTTP(t *testing.T) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Inspector)
	rp := startHTTPProxy(t, demoHTTP(t))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the proxy's stderr:\n%s\nits trace:\n%s", rp.stderr.String(), rp.trace.String())
		}
	})
	if got := callText(t, inspectorCLI(t, in, t.TempDir(), append([]string{rp.url}, inspectorCall...)...)); !strings.HasPrefix(got, slowDone) {
		t.Errorf("the Inspector got %q, want %q…", got, slowDone)
	}
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if info, _ := rp.tr.Conn(); info.Era != event.EraLegacy || info.Transport != event.TransportHTTP {
		t.Errorf("connection %+v: want legacy HTTP", info)
	}
	call := rp.request(wire.MethodToolsCall)
	if call == nil || !call.ByHost || call.State != session.StateCompleted || call.Target != "slow" {
		t.Fatalf("tools/call: %+v; want the host's call of slow, completed", call)
	}
	if n := rp.tr.Violations().Len(); n != 0 {
		for i := range n {
			v := rp.tr.Violations().At(i)
			t.Errorf("violation: %s %s", v.Code, v.Detail)
		}
	}
	if st := rp.stderr.String(); strings.Contains(st, "⚑") {
		t.Errorf("the proxy flagged something:\n%s", st)
	}
}
