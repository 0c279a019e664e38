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

	"inflight/event"
	"inflight/internal/testkit/npmpeer"
	"inflight/session"
	"inflight/wire"
)

// tsHTTPHost1 is a host on the TypeScript SDK 1.x's client over
// Streamable HTTP (legacy era, 2025-11-25: initialize, Mcp-Session-Id, the
// GET stream): it calls the demo's stubborn tool through the proxy with a
// request timeout (300 ms) shorter than the tool (600 ms), waits for the
// late answer to come meanwhile, and prints what it saw as JSON.
const tsHTTPHost1 = `
const sdk = process.env.SDK;
const { Client } = require(sdk + "/dist/cjs/client/index.js");
const { StreamableHTTPClientTransport } = require(sdk + "/dist/cjs/client/streamableHttp.js");
(async () => {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.URL));
  const client = new Client({ name: "ts-http-host", version: "1" });
  await client.connect(transport);
  const out = { progress: 0, protocolVersion: transport.protocolVersion, session: !!transport.sessionId };
  try {
    await client.callTool({ name: "stubborn", arguments: { seconds: 0.6, steps: 6 } }, undefined,
      { timeout: 300, onprogress: () => { out.progress++; } });
    out.stubborn = "completed";
  } catch (e) { out.stubborn = e.code; out.stubbornMessage = e.message; }
  await new Promise((r) => setTimeout(r, 700)); // the stubborn answer comes late meanwhile
  await transport.terminateSession();
  await client.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`

// tsHTTPHost2 is the same host on the TypeScript SDK 2.x's client, which
// speaks 2026-07-28 when asked to negotiate (versionNegotiation auto: it
// probes with server/discover, and falls back to initialize only when the
// server is legacy; its default is still the legacy handshake). In the
// modern era its timeout aborts the request's own POST stream — the
// cancel there — and posts no notifications/cancelled.
const tsHTTPHost2 = `
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
const transport = new StreamableHTTPClientTransport(new URL(process.env.URL));
const client = new Client({ name: "ts2-http-host", version: "1" }, { versionNegotiation: { mode: "auto" } });
await client.connect(transport);
const out = { progress: 0, protocolVersion: client.getNegotiatedProtocolVersion?.() ?? client.protocolVersion };
try {
  await client.callTool({ name: "stubborn", arguments: { seconds: 0.6, steps: 6 } },
    { timeout: 300, onprogress: () => { out.progress++; } });
  out.stubborn = "completed";
} catch (e) { out.stubborn = e.code; out.stubbornMessage = e.message; }
await new Promise((r) => setTimeout(r, 700)); // nothing more can come on the closed stream
await client.close();
console.log(JSON.stringify(out));
`

type tsHTTPOut struct {
	Progress        int    `json:"progress"`
	ProtocolVersion string `json:"protocolVersion"`
	Session         bool   `json:"session"`
	Stubborn        any    `json:"stubborn"`
	StubbornMessage string `json:"stubbornMessage"`
}

// runNode runs a host script under Node 22 and decodes what it printed.
func runNode(t *testing.T, argv []string, env ...string) tsHTTPOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the TypeScript host: %v\nstderr:\n%s", err, stderr.String())
	}
	var out tsHTTPOut
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the host printed %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	return out
}

// hostFlags are the violations the tracker raised against the host.
func (rp *runningHTTP) hostFlags() []string {
	var flags []string
	for i := 0; i < rp.tr.Violations().Len(); i++ {
		if v := rp.tr.Violations().At(i); strings.HasPrefix(v.Code, "host_") {
			flags = append(flags, v.Code+": "+v.Detail)
		}
	}
	return flags
}

// TestTypeScriptHTTPHostLegacyTimesOut: the TypeScript SDK 1.32's client
// as a Streamable HTTP host through the reverse proxy to the demo's HTTP
// server. Its own timeout posts notifications/cancelled, which the proxy
// judges the right signal for legacy HTTP. The SDK leaves the request's
// POST stream open after that cancel (1.x aborts streams only when the
// transport closes), so the server's answer 450 ms later arrives on it: the
// proxy forwards it and the tracker calls it late. Nothing of the host is
// flagged; its stream was never closed before it ended.
func TestTypeScriptHTTPHostLegacyTimesOut(t *testing.T) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.SDK1)
	rp := startHTTPProxy(t, demoHTTP(t))
	script := filepath.Join(t.TempDir(), "host.cjs")
	if err := os.WriteFile(script, []byte(tsHTTPHost1), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runNode(t, []string{in.NodePath(), script}, "SDK="+in.Module("@modelcontextprotocol/sdk"), "URL="+rp.url)
	if out.Stubborn != float64(-32001) || out.Progress == 0 {
		t.Errorf("stubborn: %v %q after %d progress; want the host's own timeout (-32001) after some progress", out.Stubborn, out.StubbornMessage, out.Progress)
	}
	if out.ProtocolVersion != "2025-11-25" || !out.Session {
		t.Errorf("the host spoke %q (session %v); want a legacy 2025-11-25 session", out.ProtocolVersion, out.Session)
	}
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if info, _ := rp.tr.Conn(); info.Era != event.EraLegacy || info.Transport != event.TransportHTTP || info.ProtocolVersion != "2025-11-25" {
		t.Errorf("connection %+v: want legacy HTTP 2025-11-25", info)
	}
	call := rp.request(wire.MethodToolsCall)
	if call == nil {
		t.Fatal("the host's tools/call was not tracked")
	}
	if !call.ByHost || call.State != session.StateCancelled || call.Cancel == nil || call.Cancel.Cause != session.CauseHost ||
		call.Cancel.Signal != event.SignalNotification || !strings.Contains(call.Cancel.Reason, "Request timed out") {
		t.Errorf("tools/call: state %s, cancel %+v; want cancelled by the host's notifications/cancelled (its timeout)", call.State, call.Cancel)
	}
	if !call.Late.Response || call.Late.Crossed || call.Progress.Count == 0 {
		t.Errorf("tools/call: late %+v, progress %d; want progress before the cancel and a late (not crossed) answer", call.Late, call.Progress.Count)
	}
	// Its timeout is not reset by progress (the SDK resets it only with
	// resetTimeoutOnProgress): the one finding, in those words.
	if f := rp.hostFlags(); len(f) != 1 || !strings.HasPrefix(f[0], session.ViolationHostCancelledWhileProgressing+": ") ||
		!strings.Contains(f[0], "its timeout was not reset by progress") {
		t.Errorf("the TypeScript SDK 1.x's legacy host: findings %q, want only that it cancelled while progress flowed, on its timeout", f)
	}
	if tr := rp.trace.String(); strings.Contains(tr, `"event":"stream_closed"`) {
		t.Errorf("a stream closure by the host was recorded; the SDK keeps the POST stream open after its cancel:\n%s", tr)
	}
	st := rp.stderr.String()
	if !strings.Contains(st, "⚑ late response to tools/call stubborn") || strings.Count(st, "⚑ host") != 1 || !strings.Contains(st, "⚑ host gave up on tools/call stubborn (id 1) (reason “") {
		t.Errorf("the proxy's stderr: want the late response flagged and, of the host, only its cancel while progress flowed:\n%s", st)
	}
}

// TestTypeScriptHTTPHostModernTimesOut: the TypeScript SDK 2.4's client
// (@modelcontextprotocol/client), negotiating, speaks 2026-07-28 over
// Streamable HTTP with the demo through the proxy: no initialize, no
// session, the protocol version in every request's _meta. Its timeout
// aborts the call's own POST stream, the modern cancel, with no
// notification; the proxy sees the stream closed by the host, the tracker
// counts it as the host's cancel and settles the request at once — the
// server's late answer cannot come on a closed stream, and none does.
// Nothing of the host is flagged.
func TestTypeScriptHTTPHostModernTimesOut(t *testing.T) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.SDK2Client)
	rp := startHTTPProxy(t, demoHTTP(t))
	out := runNode(t, in.Script(t, "host.mjs", tsHTTPHost2), "URL="+rp.url)
	if out.Stubborn != "REQUEST_TIMEOUT" || out.Progress == 0 {
		t.Errorf("stubborn: %v %q after %d progress; want the host's own timeout (REQUEST_TIMEOUT) after some progress", out.Stubborn, out.StubbornMessage, out.Progress)
	}
	time.Sleep(CancelGrace + 100*time.Millisecond) // the closure is told CancelGrace late
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if info, _ := rp.tr.Conn(); info.Era != event.EraModern || info.Transport != event.TransportHTTP || info.ProtocolVersion != "2026-07-28" {
		t.Errorf("connection %+v: want modern HTTP 2026-07-28", info)
	}
	if r := rp.request(wire.MethodInitialize); r != nil {
		t.Errorf("the modern host sent initialize: %+v", r)
	}
	call := rp.request(wire.MethodToolsCall)
	if call == nil {
		t.Fatal("the host's tools/call was not tracked")
	}
	if !call.ByHost || call.State != session.StateCancelled || call.Cancel == nil || call.Cancel.Cause != session.CauseHost ||
		call.Cancel.Signal != event.SignalStreamClosed {
		t.Errorf("tools/call: state %s, cancel %+v; want cancelled by the host closing its stream", call.State, call.Cancel)
	}
	if call.Late.Response || call.Progress.Count == 0 {
		t.Errorf("tools/call: late %+v, progress %d; want progress before the cancel and no answer after it", call.Late, call.Progress.Count)
	}
	// Its closure came while progress flowed: the one finding (no reason
	// is said on a closed stream, so no timeout either).
	if f := rp.hostFlags(); len(f) != 1 || !strings.HasPrefix(f[0], session.ViolationHostCancelledWhileProgressing+": ") ||
		strings.Contains(f[0], "timeout") {
		t.Errorf("the TypeScript SDK 2.x's modern host: findings %q, want only that it closed the stream while progress flowed", f)
	}
	if tr := rp.trace.String(); strings.Contains(tr, `"method":"notifications/cancelled"`) {
		t.Errorf("the modern host posted notifications/cancelled; closing the stream is the cancel there")
	}
	if st := rp.stderr.String(); strings.Count(st, "⚑") != 1 || !strings.Contains(st, "⚑ host closed the stream of tools/call stubborn (id 0) after ") {
		t.Errorf("the proxy flagged more, or other, than the host's cancel while progress flowed:\n%s", st)
	}
}
