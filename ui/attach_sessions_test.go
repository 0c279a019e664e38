package ui

import (
	"testing"
	"time"

	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

func sessRecord(ms float64, dir, by, sess, msg string) trace.Record {
	r := hostRecord(ms, dir, by, msg)
	r.SessionID = sess
	return r
}

// Two legacy hosts, each with a request 2 in flight: the proxy's trace
// stamps every line with its session, and the proxy does not give B's
// answer to A's call. The view must not either.
func TestAttachSessionsAttachServerLinesKeepSession(t *testing.T) {
	hello := attachHello{Proxy: "p", Command: "server", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0)
	const (
		init0 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
		res0  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`
		callA = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slowA"}}`
		listB = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		ansB  = `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`
	)
	h.feedUntil(t0, []trace.Record{
		{MS: 0.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "legacy", ProtocolVersion: "2025-11-25"},
		sessRecord(1, trace.DirOut, "host", "post 1", init0), sessRecord(2, trace.DirIn, "server", "post 1", res0),
		sessRecord(3, trace.DirOut, "host", "post 2", init0), sessRecord(4, trace.DirIn, "server", "post 2", res0),
		sessRecord(20, trace.DirOut, "host", "sA", callA),
		sessRecord(30, trace.DirOut, "host", "sB", listB),
		sessRecord(40, trace.DirIn, "server", "sB", ansB),
	}, 50)
	if r, _ := h.m.tracker.Get(wire.IntID(2)); r == nil || r.State.IsFinal() {
		t.Errorf("A's call 2 is %v in the view: B's answer (sessionId sB in the trace) was taken for it", r.State)
	}
}

// A legacy host resumes (GET with Last-Event-ID) before its closure's line
// comes (the proxy reports closures 250ms late): the proxy does not wait
// (HostResumedIn with the note's session), nor must the view.
func TestAttachSessionsAttachResumeNoteKeepsSession(t *testing.T) {
	hello := attachHello{Proxy: "p", Command: "server", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0)
	const (
		init0 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
		res0  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`
		call1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`
	)
	h.feedUntil(t0, []trace.Record{
		{MS: 0.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "legacy", ProtocolVersion: "2025-11-25"},
		sessRecord(1, trace.DirOut, "host", "post 1", init0), sessRecord(2, trace.DirIn, "server", "post 1", res0),
		sessRecord(10, trace.DirOut, "host", "sA", call1),
		{MS: 150, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteHostResumed, SessionID: "sA"},
		{MS: 50, Dir: trace.DirLocal, Event: trace.EventStreamClosed, ID: ptrID(wire.IntID(1)), ByClient: true, By: "host", SessionID: "sA"},
		{MS: 8000, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteLateWindowOver},
	}, 9000)
	for i := 0; i < h.m.tracker.Violations().Len(); i++ {
		if v := h.m.tracker.Violations().At(i); v.Code == session.ViolationHostClosedStreamLegacy {
			t.Errorf("the view flagged %s; the proxy, which saw the host resume at 150ms, did not", v.Code)
		}
	}
	_ = time.Second
}

func ptrID(id wire.ID) *wire.ID { return &id }
