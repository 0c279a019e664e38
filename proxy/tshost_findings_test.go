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
	"inflight/session"
)

// tsProgressHost is a host on the TypeScript SDK's client (1.x) with its
// default timeout handling: an onprogress handler but no
// resetTimeoutOnProgress, so progress does not reset the timeout. It
// calls the demo's slow (2 s, a step every 200 ms) with a 700 ms timeout
// through inflight proxy, so its timeout cancels a call whose progress
// flows. With KILL set it instead prints "progress" at the first
// notification and waits to be killed.
const tsProgressHost = `
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
  const kill = !!process.env.KILL;
  try {
    await client.callTool({ name: "slow", arguments: { seconds: kill ? 30 : 2, steps: kill ? 150 : 10 } }, undefined,
      { timeout: kill ? 60000 : 700, onprogress: () => { out.progress++; if (kill && out.progress === 1) console.log("progress"); } });
    out.slow = "completed";
  } catch (e) { out.slow = e.code; out.slowMessage = e.message; }
  await client.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`

// tsFindingHost runs tsProgressHost (kill: killed at its first progress)
// and returns the host's stdout and the proxy's trace once the proxy
// wrote want into it.
func tsFindingHost(t *testing.T, kill bool, want string) (stdout, tr string) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.SDK1)
	inflight := testbin.Build(t, "inflight")
	dir := t.TempDir()
	script := filepath.Join(dir, "host.cjs")
	if err := os.WriteFile(script, []byte(tsProgressHost), 0o600); err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(dir, "ts.trace")
	args, _ := json.Marshal([]string{"proxy", "--name", "tsf", "--trace", tracePath, "--", inflight, "demo-server"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.NodePath(), script)
	cmd.Env = append(os.Environ(), "SDK="+in.Module("@modelcontextprotocol/sdk"), "INFLIGHT="+inflight,
		"ARGS="+string(args), "XDG_RUNTIME_DIR="+dir)
	if kill {
		cmd.Env = append(cmd.Env, "KILL=1")
	}
	var out, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if kill {
		for !strings.Contains(out.String(), "progress") && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	} else if err := cmd.Wait(); err != nil {
		t.Fatalf("the TypeScript host: %v\nstderr:\n%s", err, stderr.String())
	}
	// The proxy ends on its own once its stdin closes (the host gone).
	for ctx.Err() == nil {
		b, _ := os.ReadFile(tracePath)
		if tr = string(b); strings.Contains(tr, want) {
			return out.String(), tr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the trace never said %q:\n%s\nthe host's stderr:\n%s", want, tr, stderr.String())
	return "", ""
}

// TestTypeScriptHostCancelledWhileProgressing: the TypeScript SDK 1.x
// host's timeout, not reset by the progress it receives, cancels the
// call while progress flows: the proxy finds
// host_cancelled_while_progressing, with the progress it saw and, since
// the cancel's reason says timeout, that progress did not reset it.
func TestTypeScriptHostCancelledWhileProgressing(t *testing.T) {
	stdout, tr := tsFindingHost(t, false, session.ViolationHostCancelledWhileProgressing)
	var out struct {
		Slow     any `json:"slow"`
		Progress int `json:"progress"`
	}
	if err := json.Unmarshal(bytes.TrimSpace([]byte(stdout)), &out); err != nil {
		t.Fatalf("the host printed %q: %v", stdout, err)
	}
	if out.Slow != float64(-32001) || out.Progress < 2 {
		t.Fatalf("slow: %v after %d progress; want the host's own timeout (-32001) after progress", out.Slow, out.Progress)
	}
	var line string
	for _, l := range strings.Split(tr, "\n") {
		if strings.Contains(l, `"code":"`+session.ViolationHostCancelledWhileProgressing+`"`) {
			line = l
		}
	}
	// The proxy's summary at its end counts it.
	if !strings.Contains(tr, "of the host: "+session.ViolationHostCancelledWhileProgressing+" 1") {
		t.Errorf("the summary does not count the finding:\n%s", tr)
	}
	for _, want := range []string{"the host gave up on tools/call slow", "progress notifications", "apart", "before it",
		"its timeout was not reset by progress", "Request timed out"} {
		if !strings.Contains(line, want) {
			t.Errorf("the finding %s lacks %q", line, want)
		}
	}
}

// TestTypeScriptHostKilledAbandons: the host killed mid-call leaves the
// call in flight without a cancel: host_abandoned.
func TestTypeScriptHostKilledAbandons(t *testing.T) {
	_, tr := tsFindingHost(t, true, session.ViolationHostAbandoned)
	if !strings.Contains(tr, "the host went away with tools/call") {
		t.Errorf("the finding does not say the host went away with the call:\n%s", tr)
	}
}
