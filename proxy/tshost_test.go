package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/npmpeer"
	"inflight/internal/testkit/testbin"
	"inflight/replay"
)

// tsHost is a host on the TypeScript SDK's client (1.x): it launches
// inflight proxy as its server, as Claude Desktop would, calls the demo's
// stubborn tool with a request timeout (150 ms) shorter than the tool
// (600 ms), so that its own timeout cancel goes through the proxy, then
// a call a rule cancels upstream, waits for the stubborn answer to come
// late, and prints what it saw as JSON.
const tsHost = `
const sdk = process.env.SDK;
const { Client } = require(sdk + "/dist/cjs/client/index.js");
const { StdioClientTransport } = require(sdk + "/dist/cjs/client/stdio.js");
(async () => {
  const transport = new StdioClientTransport({
    command: process.env.INFLIGHT, args: JSON.parse(process.env.ARGS),
    env: { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR }, stderr: "inherit",
  });
  const client = new Client({ name: "ts-host", version: "1" });
  await client.connect(transport);
  const out = { progress: 0 };
  try {
    await client.callTool({ name: "stubborn", arguments: { seconds: 0.6, steps: 6 } }, undefined,
      { timeout: 150, onprogress: () => { out.progress++; } });
    out.stubborn = "completed";
  } catch (e) { out.stubborn = e.code; out.stubbornMessage = e.message; }
  try {
    await client.callTool({ name: "slow", arguments: { seconds: 2, steps: 2 } }, undefined, { timeout: 5000 });
    out.slow = "completed";
  } catch (e) { out.slow = e.code; out.slowMessage = e.message; }
  await new Promise((r) => setTimeout(r, 700)); // the stubborn answer comes late meanwhile
  await client.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`

// TestTypeScriptHostTimesOut: the TypeScript SDK's client as the host, in
// its own process, with inflight proxy as the process it launched. Its
// timeout cancel is judged (the right signal, no flag), the server's
// answer after it is forwarded and flagged late, and a --rule's cancel
// answers it with -32800, which it reports as the call's error.
func TestTypeScriptHostTimesOut(t *testing.T) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.SDK1)
	inflight := testbin.Build(t, "inflight")
	dir := t.TempDir()
	script := filepath.Join(dir, "host.cjs")
	if err := os.WriteFile(script, []byte(tsHost), 0o600); err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(dir, "ts.trace")
	args, _ := json.Marshal([]string{"proxy", "--name", "ts", "--trace", tracePath, "--rule", "tools/call slow: cancel 100ms",
		"--", inflight, "demo-server"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.NodePath(), script)
	cmd.Env = append(os.Environ(), "SDK="+in.Module("@modelcontextprotocol/sdk"), "INFLIGHT="+inflight,
		"ARGS="+string(args), "XDG_RUNTIME_DIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the TypeScript host: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct {
		Stubborn        any    `json:"stubborn"`
		StubbornMessage string `json:"stubbornMessage"`
		Slow            any    `json:"slow"`
		SlowMessage     string `json:"slowMessage"`
		Progress        int    `json:"progress"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the host printed %q: %v", stdout.String(), err)
	}
	// -32001 is the SDK's RequestTimeout: its own timeout, not an answer.
	if out.Stubborn != float64(-32001) || out.Progress == 0 {
		t.Errorf("stubborn: %v %q after %d progress; want the host's own timeout (-32001) after some progress", out.Stubborn, out.StubbornMessage, out.Progress)
	}
	if out.Slow != float64(CodeCancelledByProxy) || !strings.Contains(out.SlowMessage, "cancelled by inflight proxy") {
		t.Errorf("slow: %v %q; want the rule's -32800", out.Slow, out.SlowMessage)
	}
	st := stderr.String()
	for _, want := range []string{
		"inflight proxy ts: ⚑ late response to tools/call stubborn",
		"inflight proxy ts: injected cancel 100ms: sent the server notifications/cancelled for tools/call slow",
	} {
		if !strings.Contains(st, want) {
			t.Errorf("the proxy's stderr lacks %q:\n%s", want, st)
		}
	}
	if strings.Contains(st, "⚑ host") {
		t.Errorf("the TypeScript host is flagged:\n%s", st)
	}
	f, err := os.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rep, repErr bytes.Buffer
	if code := replay.Reader(f, "ts", replay.Options{}, &rep, &repErr); code != 0 {
		t.Fatalf("replay exit %d: %s", code, repErr.String())
	}
	for _, want := range []string{"tools/call stubborn: cancelled", `notifications/cancelled`, "Request timed out", "LATE RESPONSE",
		"tools/call slow: cancelled", "[injected cancel 100ms]"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("replay lacks %q:\n%s", want, rep.String())
		}
	}
	t.Logf("replay of the TypeScript host's trace:\n%s", rep.String())
}
