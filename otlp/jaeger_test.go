package otlp_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/jaeger"
	"inflight/internal/testkit/testbin"
)

// otelFree is the environment without the OTEL_ variables of whoever runs
// the tests, and with those given.
func otelFree(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// The spans reach a real Jaeger over OTLP/HTTP and read back from its
// query API as sent: `inflight call` cancelling the demo's stubborn tool
// (a client span with the cancel, its signal and the late response as
// events), a proxy session in which the host cancels the same tool, and
// the call's --trace file sent again with `inflight export --otlp`.
func TestJaegerReceivesTheSpans(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Jaeger; not in -short")
	}
	j := jaeger.Start(t)
	bin := testbin.Build(t, "inflight")
	tracePath := filepath.Join(t.TempDir(), "call.jsonl")
	call := exec.Command(bin, "call", "--otlp", j.OTLP, "--trace", tracePath, "--tool", "stubborn",
		"--args", `{"seconds":1,"steps":4}`, "--cancel-after", "400ms", "--late-window", "5s")
	call.Env = otelFree()
	out, err := call.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 4 {
		t.Fatalf("inflight call: %v (want exit 4, cancelled)\n%s", err, out)
	}
	name := "otlp-jaeger-" + strings.ReplaceAll(filepath.Base(t.TempDir()), "_", "")
	proxySession(t, bin, j.OTLP, name)

	traces := waitTraces(t, j, "inflight", func(ts []jaeger.Trace) bool {
		return hasSpan(ts, "inflight call") && hasSpan(ts, "inflight proxy "+name)
	})
	checkCallTrace(t, traceOf(t, traces, "inflight call"))
	checkProxyTrace(t, traceOf(t, traces, "inflight proxy "+name))

	export := exec.Command(bin, "export", "--otlp", j.OTLP, "--late-window", "5s", tracePath)
	export.Env = otelFree("OTEL_SERVICE_NAME=inflight-export")
	if out, err := export.CombinedOutput(); err != nil {
		t.Fatalf("inflight export: %v\n%s", err, out)
	}
	exported := waitTraces(t, j, "inflight-export", func(ts []jaeger.Trace) bool { return hasSpan(ts, "tools/call stubborn") })
	checkCallTrace(t, traceOf(t, exported, "inflight trace call.jsonl"))
}

// proxySession runs `inflight proxy` over the demo as a host would: the
// handshake, a stubborn tools/call cancelled at its first progress, its
// late answer read, and the end of stdin.
func proxySession(t *testing.T, bin, endpoint, name string) {
	t.Helper()
	sockets, err := os.MkdirTemp("", "ij")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockets) })
	cmd := exec.Command(bin, "proxy", "--otlp", endpoint, "--name", name, "--late-window", "5s", "--", bin, "demo-server")
	cmd.Env = otelFree("XDG_RUNTIME_DIR=" + sockets)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	send := func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write to the proxy: %v\n%s", err, stderr.String())
		}
	}
	await := func(what string, match func(m map[string]any) bool) {
		for m := range lines {
			if match(m) {
				return
			}
		}
		t.Fatalf("the proxy's stdout ended before %s\n%s", what, stderr.String())
	}
	isID := func(id float64) func(m map[string]any) bool {
		return func(m map[string]any) bool { v, ok := m["id"].(float64); return ok && v == id }
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"otlp-test","version":"1"}}}`)
	await("initialize's answer", isID(1))
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stubborn","arguments":{"seconds":1,"steps":4},"_meta":{"progressToken":"p2"}}}`)
	await("the first progress", func(m map[string]any) bool { return m["method"] == "notifications/progress" })
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the host gave up"}}`)
	await("the late answer", isID(2))
	stdin.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("inflight proxy: %v\n%s", err, stderr.String())
	}
}

// waitTraces reads service's traces from Jaeger until done holds (the
// collector stores what it received after its batch).
func waitTraces(t *testing.T, j *jaeger.Server, service string, done func([]jaeger.Trace) bool) []jaeger.Trace {
	t.Helper()
	var last []jaeger.Trace
	for range 600 {
		ts, err := j.Traces(service)
		if err == nil && done(ts) {
			return ts
		}
		last = ts
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("jaeger never held the spans awaited; it holds %d traces of %s\n%s", len(last), service, j.Logs())
	return nil
}

func hasSpan(ts []jaeger.Trace, name string) bool {
	for _, tr := range ts {
		for _, sp := range tr.Spans {
			if sp.OperationName == name {
				return true
			}
		}
	}
	return false
}

// traceOf is the trace whose span name is.
func traceOf(t *testing.T, ts []jaeger.Trace, name string) jaeger.Trace {
	t.Helper()
	for _, tr := range ts {
		for _, sp := range tr.Spans {
			if sp.OperationName == name {
				return tr
			}
		}
	}
	t.Fatalf("no trace has a span %q", name)
	return jaeger.Trace{}
}

func spanOf(t *testing.T, tr jaeger.Trace, name string) jaeger.Span {
	t.Helper()
	for _, sp := range tr.Spans {
		if sp.OperationName == name {
			return sp
		}
	}
	var names []string
	for _, sp := range tr.Spans {
		names = append(names, sp.OperationName)
	}
	t.Fatalf("trace %s has no span %q among %q", tr.TraceID, name, names)
	return jaeger.Span{}
}

func wantTags(t *testing.T, sp jaeger.Span, want map[string]string) {
	t.Helper()
	for key, v := range want {
		if got, ok := jaeger.Tag(sp.Tags, key); !ok || got != v {
			t.Errorf("span %q: tag %s = %q (set: %v), want %q", sp.OperationName, key, got, ok, v)
		}
	}
}

func wantEvent(t *testing.T, sp jaeger.Span, name string, fields map[string]string) jaeger.Log {
	t.Helper()
	l, ok := sp.Event(name)
	if !ok {
		t.Errorf("span %q has no event %q", sp.OperationName, name)
		return l
	}
	for key, v := range fields {
		got, ok := jaeger.Tag(l.Fields, key)
		if !ok || (v != "" && got != v) {
			t.Errorf("span %q, event %q: %s = %q (set: %v), want %q", sp.OperationName, name, key, got, ok, v)
		}
	}
	return l
}

// childOf reports whether sp's parent is parent.
func childOf(sp, parent jaeger.Span) bool {
	for _, r := range sp.References {
		if r.RefType == "CHILD_OF" && r.SpanID == parent.SpanID {
			return true
		}
	}
	return false
}

func checkCallTrace(t *testing.T, tr jaeger.Trace) {
	t.Helper()
	sp := spanOf(t, tr, "tools/call stubborn")
	if p := tr.Processes[sp.ProcessID]; p.ServiceName == "" {
		t.Errorf("no service for the span")
	}
	wantTags(t, sp, map[string]string{"span.kind": "client", "mcp.method.name": "tools/call", "jsonrpc.request.id": "1",
		"gen_ai.tool.name": "stubborn", "network.transport": "pipe", "error.type": "cancelled", "inflight.state": "cancelled"})
	if _, ok := jaeger.Tag(sp.Tags, "mcp.protocol.version"); !ok {
		t.Errorf("no mcp.protocol.version on %q", sp.OperationName)
	}
	cancel := wantEvent(t, sp, "inflight.cancel", map[string]string{"inflight.cancel.cause": "user", "inflight.late_window_ms": "5000"})
	sent := wantEvent(t, sp, "inflight.cancel.sent", map[string]string{"inflight.cancel.signal": "notifications/cancelled"})
	late := wantEvent(t, sp, "inflight.late.response", map[string]string{"inflight.after_cancel_ms": "", "inflight.round_trip_ms": ""})
	if !(cancel.Timestamp <= sent.Timestamp && sent.Timestamp < late.Timestamp) {
		t.Errorf("the cancel (%d), its signal (%d) and the late response (%d) are out of order", cancel.Timestamp, sent.Timestamp, late.Timestamp)
	}
	if root := spanOf(t, tr, rootName(tr)); !childOf(sp, root) {
		t.Errorf("the request's span is not a child of the run's")
	}
}

// rootName is the name of the trace's span without a parent.
func rootName(tr jaeger.Trace) string {
	for _, sp := range tr.Spans {
		if len(sp.References) == 0 {
			return sp.OperationName
		}
	}
	return ""
}

func checkProxyTrace(t *testing.T, tr jaeger.Trace) {
	t.Helper()
	spanOf(t, tr, "initialize")
	sp := spanOf(t, tr, "tools/call stubborn")
	wantTags(t, sp, map[string]string{"span.kind": "client", "mcp.method.name": "tools/call", "jsonrpc.request.id": "2",
		"gen_ai.tool.name": "stubborn", "network.transport": "pipe", "inflight.by_host": "true", "error.type": "cancelled",
		"mcp.protocol.version": "2025-11-25"})
	wantEvent(t, sp, "inflight.cancel", map[string]string{"inflight.cancel.cause": "host", "inflight.cancel.reason": "the host gave up"})
	wantEvent(t, sp, "inflight.cancel.sent", map[string]string{"inflight.cancel.signal": "notifications/cancelled"})
	wantEvent(t, sp, "inflight.late.response", map[string]string{"inflight.after_cancel_ms": ""})
	wantEvent(t, sp, "inflight.progress", map[string]string{"inflight.progress.n": "1"})
}
