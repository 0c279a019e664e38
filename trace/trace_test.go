package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func received(ms int, raw string, owner wire.ID) event.Event {
	m, err := wire.Decode([]byte(raw))
	if err != nil {
		panic(err)
	}
	return event.Event{Kind: event.Received, Time: at(ms), Raw: []byte(raw), Msg: m, RequestID: owner}
}

// withOwner is ev read on owner's HTTP response stream.
func withOwner(ev event.Event, owner wire.ID) event.Event {
	ev.Owner = owner
	return ev
}

func sent(ms int, raw string, internal bool) event.Event {
	m, err := wire.Decode([]byte(raw))
	if err != nil {
		panic(err)
	}
	ev := event.Event{Kind: event.Sent, Time: at(ms), Raw: []byte(raw), Msg: m, Internal: internal}
	if m.Kind == wire.KindRequest {
		ev.RequestID = m.ID
	}
	return ev
}

// decodeLines parses every line a Writer produced, checking each is one
// JSON object.
func decodeLines(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
		out = append(out, m)
	}
	return out
}

func TestFromEvent(t *testing.T) {
	one := wire.IntID(1)
	info := &event.ConnInfo{Transport: event.TransportHTTP, Era: event.EraLegacy, ProtocolVersion: "2025-11-25",
		ServerName: "demo", ServerVersion: "1.0", SessionID: "s-1"}
	cases := []struct {
		name string
		ev   event.Event
		want string // the record as JSON
	}{
		{"request", sent(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`, false),
			`{"ms":1,"dir":"out","id":1,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}}`},
		{"stdio progress takes its token as id", received(2, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, wire.ID{}),
			`{"ms":2,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}}`},
		{"response", received(3, `{"jsonrpc":"2.0","id":1,"result":{}}`, one),
			`{"ms":3,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","id":1,"result":{}}}`},
		{"server request has no inflight id", received(4, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, wire.ID{}),
			`{"ms":4,"dir":"in","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`},
		{"multi-line SSE data is compacted", received(5, "{\"jsonrpc\":\"2.0\",\n\"id\":1,\n\"result\":{}}", one),
			`{"ms":5,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","id":1,"result":{}},"compacted":true}`},
		{"malformed", event.Event{Kind: event.Malformed, Time: at(6), Raw: []byte("hello"), Err: errors.New("not JSON")},
			`{"ms":6,"dir":"in","event":"malformed","raw":"hello","error":"not JSON"}`},
		{"cancel sent", event.Event{Kind: event.CancelSent, Time: at(7), RequestID: one, Signal: event.SignalStreamClosed, Reason: "user"},
			`{"ms":7,"dir":"out","id":1,"event":"cancel_sent","signal":"stream_closed","reason":"user"}`},
		{"stream opened", event.Event{Kind: event.StreamOpened, Time: at(8), RequestID: one, Status: 200, ContentType: "text/event-stream"},
			`{"ms":8,"dir":"local","id":1,"event":"stream_opened","status":200,"contentType":"text/event-stream"}`},
		{"stream closed", event.Event{Kind: event.StreamClosed, Time: at(9), RequestID: one, ByClient: true},
			`{"ms":9,"dir":"local","id":1,"event":"stream_closed","byClient":true}`},
		{"stderr", event.Event{Kind: event.Stderr, Time: at(10), Text: "log line", Truncated: 1},
			`{"ms":10,"dir":"in","event":"stderr","text":"log line"}`},
		{"request failed", event.Event{Kind: event.RequestFailed, Time: at(11), RequestID: one, Err: errors.New("HTTP 500"), LostConnection: true},
			`{"ms":11,"dir":"local","id":1,"event":"request_failed","lost":true,"error":"HTTP 500"}`},
		{"connected", event.Event{Kind: event.Connected, Time: at(12), Info: info},
			`{"ms":12,"dir":"local","event":"connected","transport":"http","era":"legacy","protocolVersion":"2025-11-25","server":"demo 1.0","sessionId":"s-1"}`},
		{"http status of a probe is internal", event.Event{Kind: event.HTTPStatus, Time: at(13), RequestID: wire.StringID("inflight-1"), Status: 400, Text: "400 Bad Request"},
			`{"ms":13,"dir":"local","id":"inflight-1","event":"http_status","internal":true,"text":"400 Bad Request","status":400}`},
		{"transport closed", event.Event{Kind: event.TransportClosed, Time: at(14), Err: errors.New("exit 1")},
			`{"ms":14,"dir":"local","event":"transport_closed","error":"exit 1"}`},
		{"HTTP stream's progress names the stream", withOwner(received(15, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}`, one), one),
			`{"ms":15,"dir":"in","id":1,"owner":1,"msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}}`},
		{"another request's answer on a stream", withOwner(received(16, `{"jsonrpc":"2.0","id":2,"result":{}}`, wire.IntID(2)), one),
			`{"ms":16,"dir":"in","id":2,"owner":1,"msg":{"jsonrpc":"2.0","id":2,"result":{}}}`},
		{"server request on a stream", withOwner(received(17, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, wire.ID{}), one),
			`{"ms":17,"dir":"in","owner":1,"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`},
		{"cancel leaving", event.Event{Kind: event.CancelLeaving, Time: at(19), RequestID: one, Signal: event.SignalNotification},
			`{"ms":19,"dir":"local","id":1,"event":"cancel_leaving","signal":"notifications/cancelled"}`},
		{"round trip", event.Event{Kind: event.RoundTrip, Time: at(20), RTT: 1234567 * time.Nanosecond, Text: "ping"},
			`{"ms":20,"dir":"local","event":"round_trip","rttMs":1.234,"text":"ping"}`},
		{"stream resumed", event.Event{Kind: event.StreamOpened, Time: at(18), RequestID: one, Status: 200, ContentType: "text/event-stream",
			Text: "resumed with Last-Event-ID 7", Resumed: true},
			`{"ms":18,"dir":"local","id":1,"event":"stream_opened","resumed":true,"text":"resumed with Last-Event-ID 7","status":200,"contentType":"text/event-stream"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, t0, nil)
			if err := w.Event(tc.ev); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			got := decodeLines(t, buf.Bytes())[0]
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Errorf("got  %s\nwant %s", gb, wb)
			}
		})
	}
}

// A message is written byte for byte as it was on the wire.
func TestMessageKeptExactly(t *testing.T) {
	raw := `{"id":1, "jsonrpc":"2.0" ,"result":{"b":1,"a":[ 1.0 ]}}`
	var buf bytes.Buffer
	w := NewWriter(&buf, t0, nil)
	w.Event(received(1, raw, wire.IntID(1)))
	w.Flush()
	if !strings.Contains(buf.String(), `"msg":`+raw) {
		t.Errorf("message not kept exactly:\n%s", buf.String())
	}
}

func TestRedaction(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer tok-SECRET-123")
	h.Set("X-Api-Key", "k3y-value")
	red := redact.New(h, nil, "")
	var buf bytes.Buffer
	w := NewWriter(&buf, t0, red)
	w.Event(received(1, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"bad token tok-SECRET-123"}}`, wire.IntID(1)))
	w.Event(event.Event{Kind: event.Stderr, Time: at(2), Text: "auth header Bearer tok-SECRET-123"})
	w.Event(event.Event{Kind: event.RequestFailed, Time: at(3), RequestID: wire.IntID(2), Err: errors.New("HTTP 401: key k3y-value refused")})
	w.Event(event.Event{Kind: event.Malformed, Time: at(4), Raw: []byte("k3y-value{")})
	// A secret outside any JSON string: the message is kept as raw text.
	w.Event(received(5, `{"jsonrpc":"2.0","id":3,"result":{"n":123456789}}`, wire.IntID(3)))
	w.Flush()
	out := buf.String()
	if strings.Contains(out, "tok-SECRET") || strings.Contains(out, "k3y-value") {
		t.Fatalf("secret in trace:\n%s", out)
	}
	lines := decodeLines(t, buf.Bytes())
	if msg, ok := lines[0]["msg"].(map[string]any); !ok || !strings.Contains(msg["error"].(map[string]any)["message"].(string), redact.Placeholder) {
		t.Errorf("redacted message: %v", lines[0])
	}
	if !strings.Contains(lines[2]["error"].(string), redact.Placeholder) {
		t.Errorf("redacted error: %v", lines[2])
	}

	var b redact.Builder
	b.AddValue("123456789")
	buf.Reset()
	w = NewWriter(&buf, t0, b.Build())
	w.Event(received(5, `{"jsonrpc":"2.0","id":3,"result":{"n":123456789}}`, wire.IntID(3)))
	w.Flush()
	rec := decodeLines(t, buf.Bytes())[0]
	if rec["msg"] != nil || rec["event"] != "message" || !strings.Contains(rec["raw"].(string), redact.Placeholder) {
		t.Errorf("secret outside a string: %v", rec)
	}
}

func TestStateAndViolation(t *testing.T) {
	tr := session.NewTracker(session.Config{})
	r := tr.Begin("tools/call", json.RawMessage(`{"name":"slow"}`), session.RequestOptions{}, t0)
	var buf bytes.Buffer
	w := NewWriter(&buf, t0, nil)
	w.State(t0, r, r.State, r.State)
	tr.RequestCancel(r.ID, "user asked", session.CauseUser, at(5))
	w.State(at(5), r, session.StatePending, r.State)
	w.Violation(session.Violation{Code: "duplicate_response", Detail: "again", RequestID: r.ID, Time: at(6)})
	w.Flush()
	lines := decodeLines(t, buf.Bytes())
	if lines[0]["state"] != "pending" || lines[0]["from"] != nil || lines[0]["method"] != "tools/call" || lines[0]["target"] != "slow" {
		t.Errorf("first state: %v", lines[0])
	}
	if lines[1]["state"] != "cancel_requested" || lines[1]["from"] != "pending" || lines[1]["reason"] != "user asked" || lines[1]["ms"] != 5.0 {
		t.Errorf("cancel state: %v", lines[1])
	}
	if lines[2]["event"] != "violation" || lines[2]["code"] != "duplicate_response" || lines[2]["id"] != 1.0 {
		t.Errorf("violation: %v", lines[2])
	}
}

// WriteLog exports a tracker's protocol log, which is how the TUI saves a
// session; it reads back as the same events.
func TestWriteLogRoundTrip(t *testing.T) {
	tr := session.NewTracker(session.Config{LogEntryBytes: 200})
	tr.Apply(event.Event{Kind: event.Connected, Time: at(1), Info: &event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ProtocolVersion: wire.VersionModern}})
	r := tr.Begin("tools/call", json.RawMessage(`{"name":"slow"}`), session.RequestOptions{}, at(2))
	tr.Apply(sent(2, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`, false))
	tr.Apply(received(3, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`, wire.ID{}))
	tr.Apply(received(4, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, wire.ID{}))
	tr.Apply(event.Event{Kind: event.RoundTrip, Time: at(4), RTT: 1500 * time.Microsecond, Text: "ping"})
	tr.RequestCancel(r.ID, "user", session.CauseUser, at(5))
	tr.Apply(sent(5, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`, true))
	tr.Apply(event.Event{Kind: event.CancelSent, Time: at(5), RequestID: r.ID, Signal: event.SignalNotification, Reason: "user"})
	big := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 300) + `"}}`
	tr.Apply(received(6, big, wire.IntID(1)))

	var buf bytes.Buffer
	if err := WriteLog(&buf, tr.Log(), t0, nil); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := ReadAll(&buf)
	if err != nil || len(bad) > 0 {
		t.Fatalf("read back: %v %v", err, bad)
	}
	if len(recs) != tr.Log().Len() {
		t.Fatalf("%d records for %d log entries", len(recs), tr.Log().Len())
	}
	// The tracker's state changes are in the log too, as "state" records.
	var states []string
	all := recs
	recs = nil
	for _, rec := range all {
		if rec.Event == EventState {
			states = append(states, rec.From+"→"+rec.State)
			continue
		}
		recs = append(recs, rec)
	}
	if got := strings.Join(states, " "); got != "pending→running running→cancel_requested cancel_requested→cancelled" {
		t.Errorf("state records: %s", got)
	}
	if recs[0].Event != EventConnected || recs[0].MS != 1 {
		t.Errorf("first: %+v", recs[0])
	}
	if id, ok := recs[2].RequestID(); !ok || id != wire.IntID(1) {
		t.Errorf("progress not attributed to request 1: %+v", recs[2])
	}
	if recs[3].Violation != session.ViolationProgressNotIncreasing {
		t.Errorf("violation not marked: %+v", recs[3])
	}
	if recs[4].Event != EventRoundTrip || recs[4].RTT != 1.5 || recs[4].Text != "ping" {
		t.Errorf("round trip: %+v", recs[4])
	}
	if recs[5].Dir != DirOut || recs[5].Internal {
		t.Errorf("cancel notification: %+v", recs[5])
	}
	if recs[6].Event != EventCancelSent || recs[6].Signal != "notifications/cancelled" || recs[6].Reason != "user" {
		t.Errorf("cancel sent: %+v", recs[6])
	}
	last := recs[len(recs)-1]
	if last.Msg != nil || last.Raw == "" || last.Truncated == 0 || last.Event != "received" {
		t.Errorf("clipped message: %+v", last)
	}
}

func TestReaderSkipsBadLines(t *testing.T) {
	in := strings.Join([]string{
		`{"ms":1,"dir":"out","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`,
		``,
		`not json`,
		`{"ms":2,"dir":"sideways","event":"note"}`,
		`{"ms":3,"dir":"local"}`,
		`{"ms":4,"dir":"local","event":"note","text":"ok","future":"field"}`,
	}, "\n")
	recs, bad, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Text != "ok" {
		t.Errorf("records: %+v", recs)
	}
	if len(bad) != 3 || bad[0].Line != 3 || bad[1].Line != 4 || bad[2].Line != 5 {
		t.Errorf("bad lines: %v", bad)
	}
}

func FuzzReadAll(f *testing.F) {
	f.Add([]byte(`{"ms":1,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}}`))
	f.Add([]byte(`{"ms":2,"dir":"out","msg":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}}` + "\n{\"ms\":3}"))
	f.Add([]byte("\x00\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, _, _ := ReadAll(bytes.NewReader(data))
		for i := range recs {
			recs[i].RequestID()
			recs[i].Message()
		}
	})
}

// WriteEntries, the TUI export's writer, notes first that the log had
// dropped older entries, as WriteLog does: a trace must not read as the
// whole story when it is not.
func TestWriteEntriesNotesDropped(t *testing.T) {
	entries := []session.LogEntry{
		{Time: at(10), Dir: session.DirIn, Kind: event.Stderr, Text: "hello"},
		{Time: at(12), Dir: session.DirIn, Kind: event.Stderr, Text: "again"},
	}
	var buf bytes.Buffer
	if err := WriteEntries(&buf, entries, 7, t0, nil); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := ReadAll(&buf)
	if err != nil || len(bad) > 0 {
		t.Fatalf("read back: %v %v", err, bad)
	}
	if len(recs) != 3 || recs[0].Event != EventNote || !strings.Contains(recs[0].Text, "dropped its 7 oldest entries") || recs[0].MS != 10 {
		t.Fatalf("no note of the dropped entries first: %+v", recs)
	}
	if recs[1].Text != "hello" || recs[1].MS != 10 || recs[2].Text != "again" || recs[2].MS != 12 {
		t.Errorf("entries: %+v", recs[1:])
	}

	buf.Reset()
	if err := WriteEntries(&buf, entries, 0, t0, nil); err != nil {
		t.Fatal(err)
	}
	if recs, _, _ := ReadAll(&buf); len(recs) != 2 || recs[0].Event == EventNote {
		t.Errorf("a note with nothing dropped: %+v", recs)
	}
}
