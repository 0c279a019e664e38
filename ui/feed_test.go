package ui

import (
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/trace"
	"inflight/ui/screen"
	"inflight/wire"
)

// feedRecords applies a proxy's lines to t through f, decoded as
// source.Attach decodes them, and returns the news of each.
func feedRecords(t *testing.T, f *proxyFeed, tr *session.Tracker, recs ...trace.Record) []feedNews {
	t.Helper()
	dec := source.Decoder{Start: t0, Relayed: true}
	var out []feedNews
	for i := range recs {
		it, ok := dec.Decode(&recs[i])
		if !ok {
			t.Fatalf("line %d was not decoded", i)
		}
		out = append(out, f.apply(tr, &it))
	}
	return out
}

// The feed changes the tracker itself and returns to the root what it
// must do besides: the changes (a rename among them), what to say (the
// host's faults, a disagreement), and the stream's end, when it compares
// the flags of both sides.
func TestProxyFeedNews(t *testing.T) {
	tr := session.NewTracker(session.Config{LateWindow: 5 * time.Second})
	var redacted int
	f := newProxyFeed(false, func(*event.Event) { redacted++ }, func(s string) string { return "[" + s + "]" })
	const (
		init0 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
		res0  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`
		call1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
		done1 = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	)
	news := feedRecords(t, &f, tr,
		trace.Record{MS: 0.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "legacy", ProtocolVersion: "2025-11-25"},
		hostRecord(1, trace.DirOut, "host", init0), hostRecord(2, trace.DirIn, "server", res0),
		hostRecord(3, trace.DirOut, "host", call1), hostRecord(4, trace.DirIn, "server", done1),
	)
	if r, ok := tr.Get(wire.IntID(1)); !ok || r.State != session.StateCompleted {
		t.Fatalf("the host's call in the tracker: %+v", r)
	}
	if redacted != 5 {
		t.Errorf("%d events redacted before the tracker kept them, want 5", redacted)
	}
	for i, n := range news {
		if n.say.Text != "" || n.serverGone || n.ended {
			t.Errorf("line %d: news %+v; want nothing but changes", i, n)
		}
	}
	settled := false
	for _, ch := range news[4].changes {
		settled = settled || ch.Kind == session.ChangeState && ch.ID == wire.IntID(1) && ch.To == session.StateCompleted
	}
	if !settled {
		t.Errorf("the answer's changes %+v; want #1 completed, for the status line", news[4].changes)
	}

	// The host connects again and uses ID 1 again: the finished call is
	// renamed, and the root is told to follow it.
	news = feedRecords(t, &f, tr, hostRecord(20, trace.DirOut, "host", init0), hostRecord(21, trace.DirIn, "server", res0),
		hostRecord(22, trace.DirOut, "host", call1))
	var renamed []session.Change
	for _, ch := range news[2].changes {
		if ch.Kind == session.ChangeRenamed {
			renamed = append(renamed, ch)
		}
	}
	if len(renamed) != 1 || renamed[0].Was != wire.IntID(1) || renamed[0].ID != wire.StringID("1·1") {
		t.Errorf("renames %+v; want 1 renamed 1·1", renamed)
	}

	// The host cancels an ID it never sent: flagged, and said.
	news = feedRecords(t, &f, tr, hostRecord(30, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`))
	if want := (screen.Status{Level: screen.Warn, Text: "⚑ host cancelled an unknown ID ([99])"}); news[0].say != want {
		t.Errorf("said %+v, want %+v", news[0].say, want)
	}

	// A flag the proxy raised and the view did not: a disagreement.
	one := wire.IntID(1)
	news = feedRecords(t, &f, tr, trace.Record{MS: 40, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &one, Code: session.ViolationHostDuplicateID})
	if f.disagreements != 1 || news[0].say.Level != screen.Error ||
		news[0].say.Text != "this view disagrees with the proxy: [the proxy flagged "+session.ViolationHostDuplicateID+" and this view did not]" {
		t.Errorf("disagreements %d, said %+v", f.disagreements, news[0].say)
	}

	// The end: the view flagged the unknown ID, the proxy never did.
	end := f.end()
	if !end.ended || f.disagreements != 2 || !strings.Contains(end.say.Text, "this view flagged "+session.ViolationHostCancelledUnknown+" 1 times, the proxy 0") {
		t.Errorf("end %+v, disagreements %d", end, f.disagreements)
	}
}
