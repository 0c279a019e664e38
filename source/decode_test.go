package source

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"inflight/event"
	"inflight/trace"
	"inflight/wire"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func idp(n int64) *wire.ID { id := wire.IntID(n); return &id }

// TestDecodeRelayed decodes every kind of line a proxy streams into what
// the attach view applies.
func TestDecodeRelayed(t *testing.T) {
	dec := Decoder{Start: t0, Relayed: true}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":3}}}`
	cases := []struct {
		name string
		rec  trace.Record
		want func(t *testing.T, it Item)
	}{
		{"host request", trace.Record{MS: 1.5, Dir: trace.DirOut, By: "host", ID: idp(3), Msg: json.RawMessage(call), End: 7}, func(t *testing.T, it Item) {
			ev := it.Event
			if ev.Kind != event.Sent || ev.Msg.Method != "tools/call" || ev.RequestID != wire.IntID(3) || ev.Internal || it.ByProxy || ev.StreamEnd != 7 {
				t.Errorf("%+v", it)
			}
			if !ev.Time.Equal(t0.Add(1500 * time.Microsecond)) {
				t.Errorf("time %v", ev.Time)
			}
		}},
		{"proxy's cancel upstream", trace.Record{MS: 2, Dir: trace.DirOut, By: "inflight", ID: idp(3),
			Msg: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"rule"}}`)}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Sent || !it.Event.Internal || !it.ByProxy || it.Event.RequestID != wire.IntID(3) {
				t.Errorf("%+v", it)
			}
		}},
		{"late answer", trace.Record{MS: 3, Dir: trace.DirIn, By: "server", ID: idp(3), Verdict: "late", End: 99,
			Msg: json.RawMessage(`{"jsonrpc":"2.0","id":3,"result":{}}`)}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Received || it.Verdict != "late" || it.Event.RequestID != wire.IntID(3) || it.Event.StreamEnd != 99 {
				t.Errorf("%+v", it)
			}
		}},
		{"progress", trace.Record{MS: 3, Dir: trace.DirIn, By: "server", ID: idp(3),
			Msg: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}`)}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Received || it.Event.Progress == nil || it.Event.Progress.Token != wire.IntID(3) || !it.Event.RequestID.IsZero() {
				t.Errorf("%+v", it)
			}
		}},
		{"not JSON-RPC", trace.Record{MS: 3, Dir: trace.DirIn, By: "server", Msg: json.RawMessage(`{"hello":1}`)}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Malformed || it.Event.Err == nil {
				t.Errorf("%+v", it)
			}
		}},
		{"malformed", trace.Record{MS: 3, Dir: trace.DirIn, Event: trace.EventMalformed, Raw: "junk"}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Malformed || string(it.Event.Raw) != "junk" || it.Event.Err == nil || it.Event.Err.Error() != "not a JSON-RPC message" {
				t.Errorf("%+v", it)
			}
		}},
		{"stderr", trace.Record{MS: 4, Dir: trace.DirLocal, Event: trace.EventStderr, Text: "boot"}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Stderr || it.Event.Text != "boot" || it.Info != nil {
				t.Errorf("%+v", it)
			}
		}},
		{"connected", trace.Record{MS: 5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "legacy", ProtocolVersion: "2025-11-25", Server: "demo 1.0"},
			func(t *testing.T, it Item) {
				in := it.Event.Info
				if it.Event.Kind != event.Connected || in == nil || in.Transport != event.TransportHTTP || in.Era != event.EraLegacy || in.ServerName != "demo 1.0" {
					t.Errorf("%+v", it)
				}
			}},
		{"server gone", trace.Record{MS: 6, Dir: trace.DirLocal, Event: trace.EventTransportClosed, Error: "exit status 1"}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.TransportClosed || it.Event.Err == nil || it.Event.Err.Error() != "exit status 1" {
				t.Errorf("%+v", it)
			}
		}},
		{"cancel closing the stream", trace.Record{MS: 6, Dir: trace.DirOut, By: "inflight", Event: trace.EventCancelSent, ID: idp(3), Signal: event.SignalStreamClosed.String(), Reason: "z"},
			func(t *testing.T, it Item) {
				if it.Event.Kind != event.CancelSent || it.Event.Signal != event.SignalStreamClosed || it.Event.Reason != "z" || !it.ByProxy {
					t.Errorf("%+v", it)
				}
			}},
		{"state", trace.Record{MS: 7, Dir: trace.DirLocal, Event: trace.EventState, ID: idp(3), State: "cancelled"}, func(t *testing.T, it Item) {
			if it.HasEvent() || it.Info != (TrackerState{At: t0.Add(7 * time.Millisecond), ID: wire.IntID(3), State: "cancelled"}) {
				t.Errorf("%+v", it)
			}
		}},
		{"violation", trace.Record{MS: 7, Dir: trace.DirLocal, Event: trace.EventViolation, Code: "late_response"}, func(t *testing.T, it Item) {
			if it.HasEvent() || it.Info != (TrackerViolation{At: t0.Add(7 * time.Millisecond), Code: "late_response"}) {
				t.Errorf("%+v", it)
			}
		}},
		{"host closed its stream", trace.Record{MS: 8, Dir: trace.DirLocal, Event: trace.EventStreamClosed, ID: idp(3), ByClient: true, SessionID: "s1"},
			func(t *testing.T, it Item) {
				if it.HasEvent() || it.Info != (HostClosedStream{At: t0.Add(8 * time.Millisecond), ID: wire.IntID(3), SessionID: "s1"}) {
					t.Errorf("%+v", it)
				}
			}},
		{"proxy closed the upstream stream", trace.Record{MS: 8, Dir: trace.DirLocal, By: "inflight", Event: trace.EventStreamClosed, ID: idp(3), ByClient: true},
			func(t *testing.T, it Item) {
				if it.Event.Kind != event.StreamClosed || !it.Event.ByClient || !it.ByProxy || it.Info != nil {
					t.Errorf("%+v", it)
				}
			}},
		{"injected", trace.Record{MS: 9, Dir: trace.DirLocal, Event: trace.EventInjected, ID: idp(3), Injected: "hold", Code: "holding", Text: "held"},
			func(t *testing.T, it Item) {
				if it.Event.Kind != event.Note || it.Event.Text != "injected hold: held" || it.Event.RequestID != wire.IntID(3) ||
					it.Info != (Injected{At: t0.Add(9 * time.Millisecond), ID: wire.IntID(3), Action: "hold", Phase: "holding", Text: "held"}) {
					t.Errorf("%+v", it)
				}
			}},
		{"reply", trace.Record{MS: 10, Dir: trace.DirLocal, Event: trace.EventReply, ID: idp(3), Injected: "drop", Code: "refused", Text: "why"},
			func(t *testing.T, it Item) {
				if it.HasEvent() || it.Info != (Reply{At: t0.Add(10 * time.Millisecond), ID: wire.IntID(3), Action: "drop", Outcome: "refused", Text: "why"}) {
					t.Errorf("%+v", it)
				}
			}},
		{"host gone", trace.Record{MS: 11, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteHostClosed}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Note || it.Event.Text != trace.NoteHostClosed || it.Info != (HostGone{At: t0.Add(11 * time.Millisecond)}) {
				t.Errorf("%+v", it)
			}
		}},
		{"host resumed", trace.Record{MS: 12, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteHostResumed, SessionID: "s2"}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Note || it.Info != (HostResumed{At: t0.Add(12 * time.Millisecond), SessionID: "s2"}) {
				t.Errorf("%+v", it)
			}
		}},
		{"late window over", trace.Record{MS: 13, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteLateWindowOver}, func(t *testing.T, it Item) {
			if it.HasEvent() || it.Info != (WindowOver{At: t0.Add(13 * time.Millisecond)}) {
				t.Errorf("%+v", it)
			}
		}},
		{"other note", trace.Record{MS: 14, Dir: trace.DirLocal, Event: trace.EventNote, Text: "era probe"}, func(t *testing.T, it Item) {
			if it.Event.Kind != event.Note || it.Event.Text != "era probe" || it.Info != nil {
				t.Errorf("%+v", it)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it, ok := dec.Decode(&c.rec)
			if !ok {
				t.Fatal("decoded nothing")
			}
			c.want(t, it)
			if got := it.Time(); !got.Equal(At(t0, &c.rec)) {
				t.Errorf("the item's time %v, the record's %v", got, At(t0, &c.rec))
			}
		})
	}
	// What a proxy's tracker does not follow decodes to nothing.
	for _, rec := range []trace.Record{
		{MS: 1, Dir: trace.DirIn, Event: trace.EventHTTPStatus, Status: 202},
		{MS: 1, Dir: trace.DirIn, Event: trace.EventStreamOpened, ID: idp(3)},
		{MS: 1, Dir: trace.DirIn, Event: trace.EventStreamClosed, ID: idp(3)},
	} {
		if it, ok := dec.Decode(&rec); ok {
			t.Errorf("%s decoded to %+v", rec.Event, it)
		}
	}
}

// TestDecodeOwn: in inflight's own trace the "internal" mark is the
// line's, the HTTP exchanges are events, and a stream inflight closed is
// its own closing, not a host's.
func TestDecodeOwn(t *testing.T) {
	dec := Decoder{Start: t0}
	probe := trace.Record{MS: 1, Dir: trace.DirOut, Internal: true, Msg: json.RawMessage(`{"jsonrpc":"2.0","id":"inflight-probe","method":"server/discover"}`)}
	if it, _ := dec.Decode(&probe); !it.Event.Internal || it.ByProxy {
		t.Errorf("probe: %+v", it)
	}
	// Its answer is the client's housekeeping too: taken for an answer to
	// a request of the user's it would be flagged as an unknown ID (seen
	// replaying a TUI session: "4 violations" the live run never had).
	answer := trace.Record{MS: 1.5, Dir: trace.DirIn, Internal: true, Msg: json.RawMessage(`{"jsonrpc":"2.0","id":"inflight-probe","result":{}}`)}
	if it, _ := dec.Decode(&answer); !it.Event.Internal {
		t.Errorf("the probe's answer is not internal: %+v", it)
	}
	closed := trace.Record{MS: 2, Dir: trace.DirIn, Event: trace.EventStreamClosed, ID: idp(4), ByClient: true}
	if it, ok := dec.Decode(&closed); !ok || it.Event.Kind != event.StreamClosed || !it.Event.ByClient || it.Info != nil {
		t.Errorf("stream closed: %+v", it)
	}
	failed := trace.Record{MS: 3, Dir: trace.DirLocal, Event: trace.EventRequestFailed, ID: idp(4), Lost: true, Error: "unreachable"}
	if it, ok := dec.Decode(&failed); !ok || it.Event.Kind != event.RequestFailed || !it.Event.LostConnection || it.Event.Err == nil {
		t.Errorf("request failed: %+v", it)
	}
	status := trace.Record{MS: 4, Dir: trace.DirIn, Event: trace.EventHTTPStatus, Status: 202, Text: "Accepted"}
	if it, ok := dec.Decode(&status); !ok || it.Event.Kind != event.HTTPStatus || it.Event.Status != 202 || it.Event.Err != nil {
		t.Errorf("http status: %+v", it)
	}
	finding := trace.Record{MS: 5, Dir: trace.DirLocal, Event: trace.EventFinding, Code: "C1"}
	if it, ok := dec.Decode(&finding); ok {
		t.Errorf("a finding decoded to %+v", it)
	}
	// Another host's note words mean nothing of their own here.
	note := trace.Record{MS: 6, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteLateWindowOver}
	if it, ok := dec.Decode(&note); !ok || it.Event.Kind != event.Note || it.Info != nil {
		t.Errorf("note: %+v", it)
	}
}

// TestDecodeOwnStreams: the events the client reports of a request's own
// HTTP stream — which request's stream carried a message, and a stream
// resumed with Last-Event-ID — come back from their trace lines as the
// client reported them; a line written before traces said so (no
// "owner") decodes as it always did.
func TestDecodeOwnStreams(t *testing.T) {
	dec := Decoder{Start: t0}
	one, two := wire.IntID(1), wire.IntID(2)
	received := func(raw string, id, owner wire.ID) event.Event {
		msg, p, err := wire.DecodeLine([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return event.Event{Kind: event.Received, Time: t0.Add(time.Millisecond), Raw: []byte(raw), Msg: msg, Progress: p, RequestID: id, Owner: owner}
	}
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}`
	for _, ev := range []event.Event{
		received(progress, one, one),                                             // token 2's progress on request 1's stream
		received(`{"jsonrpc":"2.0","id":2,"result":{}}`, two, one),               // request 2's answer on request 1's stream
		received(`{"jsonrpc":"2.0","id":9,"method":"ping"}`, wire.IntID(9), one), // the server's request, asked on it
		received(progress, wire.ID{}, wire.ID{}),                                 // stdio: no stream of its own
		{Kind: event.StreamOpened, Time: t0.Add(time.Millisecond), RequestID: one, Status: 200, Text: "resumed with Last-Event-ID 3", Resumed: true},
		{Kind: event.Malformed, Time: t0.Add(time.Millisecond), RequestID: one, Raw: []byte("junk"), Err: errors.New("not JSON")},
	} {
		rec := trace.FromEvent(ev, 1)
		it, ok := dec.Decode(&rec)
		if !ok {
			t.Fatalf("%+v decoded to nothing", rec)
		}
		got := it.Event
		if got.Kind != ev.Kind || got.RequestID != ev.RequestID || got.Owner != ev.Owner || got.Resumed != ev.Resumed {
			t.Errorf("%s %s: decoded kind %v id %v owner %v resumed %v, want %v %v %v %v", ev.Kind, ev.Raw,
				got.Kind, got.RequestID, got.Owner, got.Resumed, ev.Kind, ev.RequestID, ev.Owner, ev.Resumed)
		}
	}
	// Before "owner": an HTTP stream's progress says its stream in "id",
	// which a stdio trace fills with the token; it is read as stdio's.
	old := trace.Record{MS: 1, Dir: trace.DirIn, ID: idp(1), Msg: json.RawMessage(progress)}
	if it, ok := dec.Decode(&old); !ok || !it.Event.RequestID.IsZero() || !it.Event.Owner.IsZero() || it.Event.Progress == nil {
		t.Errorf("a line without owner: %+v", it)
	}
	opened := trace.Record{MS: 1, Dir: trace.DirLocal, ID: idp(1), Event: trace.EventStreamOpened, Status: 200}
	if it, ok := dec.Decode(&opened); !ok || it.Event.Kind != event.StreamOpened || it.Event.Resumed {
		t.Errorf("a stream opened without resumed: %+v", it)
	}
}

// TestDecodeCancelTiming: what a cancel's crossings are judged by — when
// its signal left, which signal, and the connection's round trips — comes
// back from the trace as the client reported it. A line written before
// round trips had their time decodes to nothing (a round trip of zero
// would shut the crossing window).
func TestDecodeCancelTiming(t *testing.T) {
	dec := Decoder{Start: t0}
	one := wire.IntID(1)
	for _, ev := range []event.Event{
		{Kind: event.CancelLeaving, Time: t0.Add(time.Millisecond), RequestID: one, Signal: event.SignalNotification},
		{Kind: event.RoundTrip, Time: t0.Add(time.Millisecond), RTT: 1234 * time.Microsecond, Text: "ping"},
		{Kind: event.CancelSent, Time: t0.Add(time.Millisecond), RequestID: one, Signal: event.SignalTaskCancel, Reason: "user"},
		{Kind: event.CancelSent, Time: t0.Add(time.Millisecond), RequestID: one, Signal: event.SignalNone, Reason: "user", Err: errors.New("broken pipe")},
		{Kind: event.CancelSent, Time: t0.Add(time.Millisecond), RequestID: one, Signal: event.SignalStreamClosed},
	} {
		rec := trace.FromEvent(ev, 1)
		it, ok := dec.Decode(&rec)
		got := it.Event
		if !ok || got.Kind != ev.Kind || got.RequestID != ev.RequestID || got.Signal != ev.Signal || got.RTT != ev.RTT || got.Text != ev.Text ||
			got.Reason != ev.Reason || (got.Err == nil) != (ev.Err == nil) {
			t.Errorf("%s: decoded %+v (ok %v), want %+v", ev.Kind, got, ok, ev)
		}
	}
	old := trace.Record{MS: 1, Dir: trace.DirLocal, Event: trace.EventRoundTrip, Text: "ping"}
	if it, ok := dec.Decode(&old); ok {
		t.Errorf("a round trip without its time decoded to %+v", it)
	}
	unnamed := trace.Record{MS: 1, Dir: trace.DirOut, Event: trace.EventCancelSent, ID: idp(1)}
	if it, ok := dec.Decode(&unnamed); !ok || it.Event.Signal != event.SignalNotification {
		t.Errorf("a cancel naming no signal: %+v", it)
	}
}

func TestErrorOf(t *testing.T) {
	if errorOf("", "") != nil {
		t.Error("no error made one")
	}
	if err := errorOf("", "x"); err == nil || err.Error() != "x" {
		t.Error(err)
	}
	if err := errorOf("y", "x"); !errors.Is(err, err) || err.Error() != "y" {
		t.Error(err)
	}
}
