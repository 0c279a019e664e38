package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/call"
	"inflight/check"
	"inflight/event"
	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/wire"
)

// A trace written by call replays as a table of what happened to the
// request, on every transport and era.
func TestReplayCallTrace(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		path := filepath.Join(t.TempDir(), "trace.jsonl")
		code := call.Run(context.Background(), call.Options{Target: tc.Target(t, e), Method: "tools/call",
			Params: testserver.ToolParams(t, "stubborn", `{"seconds":0.4,"steps":4}`), CancelAfter: 150 * time.Millisecond,
			LateWindow: time.Second, TracePath: path}, io.Discard, io.Discard)
		if code != exitcode.Cancelled {
			t.Fatalf("call exit %d", code)
		}
		var out, errOut bytes.Buffer
		if code := File(path, Options{}, &out, &errOut); code != 0 || errOut.Len() > 0 {
			t.Fatalf("replay exit %d: %s", code, errOut.String())
		}
		s := out.String()
		// "elapsed" as the TUI and call count it: until the fate was known.
		for _, want := range []string{"request 1: tools/call stubborn: cancelled", "state cancel_requested", "progress 1/4", "connection and server", " until cancelled; "} {
			testserver.MustContain(t, s, want)
		}
		if strings.Contains(s, "inflight-1") || strings.Contains(s, `"method":"initialize"`) {
			t.Errorf("housekeeping shown without --all:\n%s", s)
		}
		if tc.Name == "http" && e == testserver.Modern {
			testserver.MustContain(t, s, "cancel signal: stream_closed")
			testserver.MustContain(t, s, "no response after the cancel")
			return
		}
		testserver.MustContain(t, s, "notifications/cancelled 1")
		testserver.MustContain(t, s, "LATE RESPONSE")
		testserver.MustContain(t, s, "after the cancel")

		out.Reset()
		File(path, Options{All: true}, &out, &errOut)
		if e == testserver.Modern {
			testserver.MustContain(t, out.String(), "out    server/discover")
		} else {
			testserver.MustContain(t, out.String(), "out    initialize")
		}
	})
}

func TestReplayCheckTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "check.jsonl")
	code := check.Run(context.Background(), check.Options{Target: testserver.Stdio(t, testserver.Legacy), Args: []byte(`{"seconds":0.3,"steps":3}`),
		LateWindow: 300 * time.Millisecond, TracePath: path}, io.Discard, io.Discard)
	if code != 0 {
		t.Fatalf("check exit %d", code)
	}
	var out bytes.Buffer
	File(path, Options{}, &out, io.Discard)
	s := out.String()
	for _, want := range []string{"check PASS cancel.progress_stops", "notifications/cancelled \"never-issued-by-inflight-check\"",
		"notifications/cancelled (malformed)", "request 4: tools/call slow: cancelled", "a cancel went out after the request had ended"} {
		testserver.MustContain(t, s, want)
	}
}

func TestReplayBadInput(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := File(filepath.Join(t.TempDir(), "missing"), Options{}, &out, &errOut); code != exitcode.Usage {
		t.Errorf("missing file: exit %d", code)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(path, []byte("garbage\n"+`{"ms":5,"dir":"in","msg":{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi \u001b[2J"}]}}}`+"\n"), 0o600)
	errOut.Reset()
	if code := File(path, Options{}, &out, &errOut); code != 0 {
		t.Errorf("exit %d", code)
	}
	testserver.MustContain(t, errOut.String(), "line 1")
	testserver.MustContain(t, out.String(), "request 7")

	// No record at all is no trace: exit 2, and a long file of garbage
	// is named in a few lines, not one per line.
	os.WriteFile(path, []byte(strings.Repeat("garbage\n", 500)), 0o600)
	errOut.Reset()
	if code := File(path, Options{}, io.Discard, &errOut); code != exitcode.Usage {
		t.Errorf("a file of garbage: exit %d", code)
	}
	testserver.MustContain(t, errOut.String(), "skipped 490 more lines that are not trace records")
	testserver.MustContain(t, errOut.String(), "is not an inflight trace: none of its lines is a trace record")
	if n := strings.Count(errOut.String(), "\n"); n > 12 {
		t.Errorf("%d lines of warnings", n)
	}
	os.WriteFile(path, nil, 0o600)
	errOut.Reset()
	if code := File(path, Options{}, io.Discard, &errOut); code != exitcode.Usage || !strings.Contains(errOut.String(), "it is empty") {
		t.Errorf("an empty file: exit %d, %q", code, errOut.String())
	}

	// A run cut short leaves a request whose fate the trace lacks.
	os.WriteFile(path, []byte(`{"ms":1,"dir":"local","id":1,"event":"state","state":"running","from":"pending","method":"tools/call","target":"slow"}`+"\n"), 0o600)
	out.Reset()
	if code := File(path, Options{}, &out, io.Discard); code != 0 {
		t.Errorf("a cut trace: exit %d", code)
	}
	testserver.MustContain(t, out.String(), "request 1: tools/call slow: running (the trace ends before its fate)")
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("escape sequence in replay output: %q", out.String())
	}
}

// replayHazard is server-controlled text at its worst: an OSC title, an
// SGR colour, a BEL, a one-byte C1 CSI and bidirectional overrides.
const replayHazard = "\x1b]0;PWNED-TITLE\x07\x1b[41m\u009b31m\u202eevil\u2066\u200f"

// Every field of a trace file is whatever the file says. A trace with the
// hazard in every field — the ones a server controls (a notification's
// method, a string ID, an error text) and the ones only a crafted file can
// set (state, signal, check status) — replays with none of it raw.
func TestReplaySanitisesEveryField(t *testing.T) {
	h := replayHazard
	id, _ := json.Marshal(h)
	idRaw := string(id)
	msg := func(m map[string]any) json.RawMessage {
		m["jsonrpc"] = "2.0"
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	recs := []map[string]any{
		{"ms": 1, "dir": "local", "event": "connected", "transport": h, "era": h, "protocolVersion": h, "server": h, "sessionId": h},
		{"ms": 2, "dir": "out", "msg": msg(map[string]any{"id": h, "method": h, "params": map[string]any{"name": h, "arguments": map[string]any{h: h}}})},
		{"ms": 3, "dir": "local", "id": h, "event": "state", "state": h, "from": h, "method": h, "target": h, "reason": h, "error": h},
		{"ms": 4, "dir": "in", "msg": msg(map[string]any{"method": h, "params": map[string]any{h: h}})},
		{"ms": 5, "dir": "in", "msg": msg(map[string]any{"method": "notifications/progress",
			"params": map[string]any{"progressToken": h, "progress": 1, "total": 2, "message": h}})},
		{"ms": 6, "dir": "local", "id": h, "event": "state", "state": "cancel_requested", "reason": h},
		{"ms": 7, "dir": "out", "id": h, "event": "cancel_sent", "signal": h, "reason": h},
		{"ms": 8, "dir": "in", "msg": msg(map[string]any{"method": "notifications/cancelled",
			"params": map[string]any{"requestId": h, "reason": h}})},
		{"ms": 9, "dir": "in", "text": h, "violation": h, "msg": msg(map[string]any{"id": h,
			"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": h}}}})},
		{"ms": 10, "dir": "in", "msg": msg(map[string]any{"id": h, "error": map[string]any{"code": 1, "message": h}})},
		{"ms": 11, "dir": "in", "msg": msg(map[string]any{"id": h, "result": map[string]any{h: h}})},
		{"ms": 12, "dir": "local", "id": h, "event": "finding", "code": h, "checkStatus": h, "text": h},
		{"ms": 13, "dir": "local", "id": h, "event": "violation", "code": h, "text": h},
		{"ms": 14, "dir": "local", "id": h, "event": "stream_opened", "status": 200, "contentType": h},
		{"ms": 15, "dir": "local", "id": h, "event": "request_failed", "lost": true, "error": h},
		{"ms": 16, "dir": "in", "event": "malformed", "raw": h, "error": h},
		{"ms": 17, "dir": "in", "event": "stderr", "text": h},
		{"ms": 18, "dir": "local", "event": h, "raw": h, "reason": h, "text": h, "error": h, "violation": h},
		{"ms": 19, "dir": "local", "event": "transport_closed", "error": h},
		{"ms": 20, "dir": "local", "id": h, "event": "state", "state": h},
	}
	var file bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		file.Write(b)
		file.WriteByte('\n')
	}
	var out, errOut bytes.Buffer
	if code := Reader(&file, "crafted "+h, Options{All: true}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	s := out.String()
	for i, line := range strings.Split(s, "\n") {
		if !termsafe.IsSafe(line) {
			t.Errorf("line %d is not inert: %q", i+1, line)
		}
	}
	if !termsafe.IsSafe(strings.ReplaceAll(errOut.String(), "\n", "")) {
		t.Errorf("stderr is not inert: %q", errOut.String())
	}
	// The hazards are shown, not dropped: a debugger lets people see that a
	// server sent an escape sequence.
	testserver.MustContain(t, s, "request "+termsafe.Line(idRaw)+": "+termsafe.Line(h))
	testserver.MustContain(t, s, "␛]0;PWNED-TITLE")
	if strings.Count(s, "\n") < len(recs) {
		t.Errorf("lines are missing from the replay:\n%s", s)
	}
}

// A protocol log that merged a flood's progress exports it as one line
// that counts them, and replay counts every notification it stands for.
func TestReplayCoalescedProgress(t *testing.T) {
	tr := session.NewTracker(session.Config{})
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tr.Apply(event.Event{Kind: event.Connected, Time: start, Info: &event.ConnInfo{Era: event.EraModern, Transport: event.TransportStdio}})
	r := tr.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"flood","arguments":{}}`), session.RequestOptions{}, start)
	raw := wire.Request(r.ID, wire.MethodToolsCall, json.RawMessage(`{"name":"flood","arguments":{}}`))
	msg, _ := wire.Decode(raw)
	tr.Apply(event.Event{Kind: event.Sent, Time: start, RequestID: r.ID, Raw: raw, Msg: msg})
	const n = 1000
	for i := 1; i <= n; i++ {
		params, _ := json.Marshal(map[string]any{"progressToken": r.ProgressToken, "progress": i, "total": n})
		raw := wire.Notification(wire.NotifyProgress, params)
		msg, _ := wire.Decode(raw)
		p, _ := wire.DecodeProgress(msg.Params)
		tr.Apply(event.Event{Kind: event.Received, Time: start.Add(time.Duration(i) * time.Millisecond), Raw: raw, Msg: msg, Progress: &p})
	}
	resp := wire.ResultResponse(r.ID, json.RawMessage(`{"resultType":"complete","content":[]}`))
	msg, _ = wire.Decode(resp)
	tr.Apply(event.Event{Kind: event.Received, Time: start.Add(1100 * time.Millisecond), RequestID: r.ID, Raw: resp, Msg: msg})

	var file bytes.Buffer
	if err := trace.WriteLog(&file, tr.Log(), start, redact.New(nil, nil, "")); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(file.String(), "\n"); lines > session.LogProgressPerRequest+10 {
		t.Errorf("the export has %d lines for %d progress notifications", lines, n)
	}
	if !strings.Contains(file.String(), fmt.Sprintf(`"coalesced":%d`, n-session.LogProgressPerRequest-1)) {
		t.Errorf("no coalesced line in the export:\n%s", tail(file.String(), 600))
	}
	var out bytes.Buffer
	if code := Reader(&file, "flood.jsonl", Options{}, &out, io.Discard); code != 0 {
		t.Fatalf("replay exit %d:\n%s", code, out.String())
	}
	testserver.MustContain(t, out.String(), fmt.Sprintf("%d progress notifications", n))
	testserver.MustContain(t, out.String(), fmt.Sprintf("%d progress notifications merged by the log, until +1000ms; the latest: progress %d/%d", n-session.LogProgressPerRequest, n, n))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// A flood's progress replays as its first and last lines and a count, so
// the rest of the request stays readable; the summary still counts them all.
func TestReplayGroupsAProgressFlood(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flood.jsonl")
	call.Run(context.Background(), call.Options{Target: testserver.Stdio(t, testserver.Modern), Method: wire.MethodToolsCall,
		Params: testserver.ToolParams(t, "flood", `{"count":300}`), TracePath: path, LateWindow: testserver.Late}, io.Discard, io.Discard)
	var out bytes.Buffer
	if code := File(path, Options{}, &out, io.Discard); code != 0 {
		t.Fatalf("replay exit %d", code)
	}
	s := out.String()
	testserver.MustContain(t, s, "more progress notifications")
	testserver.MustContain(t, s, "300 progress notifications")
	testserver.MustContain(t, s, `progress 300/300`)
	if n := strings.Count(s, "\n"); n > 40 {
		t.Errorf("the replay of a 300-notification flood has %d lines:\n%s", n, s)
	}
}

// replay prints the tracker's verdicts as the trace carries them and
// judges nothing itself: what crossed the cancel is said to have crossed
// it, and its late counts are call's (before, everything after a cancel
// was "LATE" in replay, whatever call had said).
func TestReplayShowsTheTrackersVerdicts(t *testing.T) {
	dir := t.TempDir()
	file := strings.Join([]string{
		`{"ms":0,"dir":"local","event":"round_trip","text":"ping"}`,
		`{"ms":1,"dir":"local","event":"connected","transport":"stdio","era":"legacy","protocolVersion":"2025-11-25"}`,
		`{"ms":2,"dir":"out","id":1,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}}`,
		`{"ms":10,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}}`,
		`{"ms":20,"dir":"local","id":1,"event":"state","state":"cancel_requested","from":"running","method":"tools/call","target":"x"}`,
		`{"ms":20,"dir":"out","id":1,"internal":true,"msg":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}}`,
		`{"ms":21,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}},"verdict":"crossed"}`,
		`{"ms":22,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3}},"verdict":"crossed"}`,
		`{"ms":40,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":4}},"verdict":"late"}`,
		`{"ms":41,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","id":1,"result":{}},"verdict":"crossed"}`,
		`{"ms":41,"dir":"local","id":1,"event":"state","state":"cancelled","from":"cancel_requested"}`,
	}, "\n")
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := File(path, Options{}, &out, io.Discard); code != 0 {
		t.Fatalf("replay exit %d", code)
	}
	s := out.String()
	for _, want := range []string{"2 progress crossed the cancel in flight", "1 progress notification after the cancel", "a response crossed the cancel in flight"} {
		testserver.MustContain(t, s, want)
	}
	if strings.Contains(s, "LATE RESPONSE") {
		t.Errorf("a response the tracker judged crossed is LATE in replay:\n%s", s)
	}
}

// A proxy's finding of the host is no protocol violation of the server's:
// replay labels and counts it apart.
func TestReplayHostFindingsApart(t *testing.T) {
	dir := t.TempDir()
	file := strings.Join([]string{
		`{"ms":1,"dir":"local","event":"connected","transport":"stdio","era":"legacy","protocolVersion":"2025-11-25"}`,
		`{"ms":2,"dir":"out","id":1,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}}`,
		`{"ms":500,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}}`,
		`{"ms":1000,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}}`,
		`{"ms":1100,"dir":"out","msg":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"stop"}}}`,
		`{"ms":1100,"dir":"local","id":1,"event":"violation","code":"host_cancelled_while_progressing","text":"the host cancelled tools/call slow (id 1) (reason “stop”) after 2 progress notifications"}`,
		`{"ms":1200,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3}},"verdict":"late","violation":"progress_not_increasing"}`,
		`{"ms":1200,"dir":"local","id":1,"event":"violation","code":"progress_not_increasing"}`,
		`{"ms":1300,"dir":"local","id":1,"event":"state","state":"cancelled","from":"cancel_requested"}`,
	}, "\n")
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := File(path, Options{}, &out, io.Discard); code != 0 {
		t.Fatalf("replay exit %d", code)
	}
	s := out.String()
	for _, want := range []string{"host finding host_cancelled_while_progressing: the host cancelled tools/call slow", "VIOLATION progress_not_increasing",
		"[VIOLATION progress_not_increasing]", "; 1 VIOLATION; 1 host finding"} {
		testserver.MustContain(t, s, want)
	}
	if strings.Contains(s, "VIOLATION host_") || strings.Contains(s, "2 VIOLATIONS") {
		t.Errorf("a finding of the host is labelled or counted as a violation:\n%s", s)
	}
}

// A task's polls replay in its request's table, a run of polls that said
// the same as one line with a count; its tasks/cancel is the signal.
func TestReplayTaskPollsCompactly(t *testing.T) {
	tr := session.NewTracker(session.Config{PollInterval: 100 * time.Millisecond})
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	tr.Apply(event.Event{Kind: event.Connected, Time: start, Info: &event.ConnInfo{Era: event.EraModern, Transport: event.TransportStdio}})
	apply := func(kind event.Event, raw []byte, ms int) {
		msg, _ := wire.Decode(raw)
		kind.Raw, kind.Msg, kind.Time = raw, msg, at(ms)
		if msg.IsResponse() {
			kind.RequestID = msg.ID
		}
		tr.Apply(kind)
	}
	params := json.RawMessage(`{"name":"job","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`)
	r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, start)
	apply(event.Event{Kind: event.Sent, RequestID: r.ID}, wire.Request(r.ID, wire.MethodToolsCall, params), 0)
	task := func(status string) string {
		return `"taskId":"t-1","status":"` + status + `","statusMessage":"step","createdAt":"x","lastUpdatedAt":"y","ttlMs":60000,"pollIntervalMs":100`
	}
	apply(event.Event{Kind: event.Received}, wire.ResultResponse(r.ID, json.RawMessage(`{"resultType":"task",`+task("working")+`}`)), 5)
	ms := 5
	poll := func(status, extra string) {
		ms += 102
		for _, c := range tr.Due(at(ms)).Requests {
			apply(event.Event{Kind: event.Sent, RequestID: c.ID}, wire.Request(c.ID, c.Method, wire.TaskParams("t-1")), ms)
			if c.Method == wire.MethodTasksGet {
				apply(event.Event{Kind: event.Received}, wire.ResultResponse(c.ID, json.RawMessage(`{"resultType":"complete",`+task(status)+extra+`}`)), ms+1)
			} else {
				apply(event.Event{Kind: event.Received}, wire.ResultResponse(c.ID, json.RawMessage(`{"resultType":"complete"}`)), ms+1)
			}
		}
	}
	for range 5 {
		poll("working", "")
	}
	tr.RequestCancel(r.ID, "user", session.CauseUser, at(ms+10))
	poll("working", "")
	poll("cancelled", "")

	var file bytes.Buffer
	if err := trace.WriteLog(&file, tr.Log(), start, redact.New(nil, nil, "")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := Reader(&file, "task.jsonl", Options{}, &out, io.Discard); code != 0 {
		t.Fatalf("replay exit %d:\n%s", code, out.String())
	}
	got := out.String()
	testserver.MustContain(t, got, "1 request")
	testserver.MustContain(t, got, `poll: working "step" ×5, until`)
	testserver.MustContain(t, got, "tasks/cancel t-1")
	testserver.MustContain(t, got, `poll: cancelled "step"`)
	testserver.MustContain(t, got, `task "t-1": 7 polls, last status cancelled`)
	if strings.Contains(got, "request 2:") {
		t.Errorf("a task's poll replayed as a request of its own:\n%s", got)
	}
}

// A legacy tasks/cancel result carries the task's status: the summary's
// last status is that one (cancelled), not the poll's before it.
func TestReplayTaskLastStatusFromCancelResult(t *testing.T) {
	tr := session.NewTracker(session.Config{PollInterval: 100 * time.Millisecond})
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	tr.Apply(event.Event{Kind: event.Connected, Time: start, Info: &event.ConnInfo{Era: event.EraLegacy, Transport: event.TransportStdio}})
	apply := func(kind event.Event, raw []byte, ms int) {
		msg, _ := wire.Decode(raw)
		kind.Raw, kind.Msg, kind.Time = raw, msg, at(ms)
		if msg.IsResponse() {
			kind.RequestID = msg.ID
		}
		tr.Apply(kind)
	}
	params := json.RawMessage(`{"name":"job","arguments":{},"task":{"ttl":60000}}`)
	r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, start)
	apply(event.Event{Kind: event.Sent, RequestID: r.ID}, wire.Request(r.ID, wire.MethodToolsCall, params), 0)
	task := func(status string) string {
		return `{"taskId":"t-1","status":"` + status + `","statusMessage":"step","createdAt":"x","lastUpdatedAt":"y","ttl":60000,"pollInterval":100}`
	}
	apply(event.Event{Kind: event.Received}, wire.ResultResponse(r.ID, json.RawMessage(`{"task":`+task("working")+`}`)), 5)
	ms := 5
	var afterCancel bool
	step := func() {
		ms += 102
		for _, c := range tr.Due(at(ms)).Requests {
			apply(event.Event{Kind: event.Sent, RequestID: c.ID}, wire.Request(c.ID, c.Method, wire.TaskParams("t-1")), ms)
			status := "working"
			if c.Method == wire.MethodTasksCancel {
				status = "cancelled"
			} else if afterCancel {
				continue // the poll sent with the cancel is never answered
			}
			apply(event.Event{Kind: event.Received}, wire.ResultResponse(c.ID, json.RawMessage(task(status))), ms+1)
		}
	}
	step()
	tr.RequestCancel(r.ID, "user", session.CauseUser, at(ms+10))
	afterCancel = true
	step()

	var file bytes.Buffer
	if err := trace.WriteLog(&file, tr.Log(), start, redact.New(nil, nil, "")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := Reader(&file, "task.jsonl", Options{}, &out, io.Discard); code != 0 && code != 4 {
		t.Fatalf("replay exit %d:\n%s", code, out.String())
	}
	got := out.String()
	testserver.MustContain(t, got, `task t-1 cancelled "step"`)
	testserver.MustContain(t, got, `last status cancelled`)
	if strings.Contains(got, "last status working") {
		t.Errorf("a task cancelled by its tasks/cancel result reads as working:\n%s", got)
	}
}
