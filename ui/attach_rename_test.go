package ui

import (
	"strings"
	"testing"

	"inflight/trace"
	"inflight/wire"
)

// Found in review: the result summary cache is keyed by ID. A host that connects again
// reuses ID 1; the tracker renames the first call 1·1, but the summary
// cached under 1 ("first") is shown on the second call's row, and the
// second call's own result ("second") never is.
func TestAttachRenameSummaryFollowsRename(t *testing.T) {
	hello := attachHello{Proxy: "p", Command: "server", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0)
	const (
		init0 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
		res0  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`
		call1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	)
	h.feedUntil(t0, []trace.Record{
		{MS: 0.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "legacy", ProtocolVersion: "2025-11-25"},
		hostRecord(1, trace.DirOut, "host", init0), hostRecord(2, trace.DirIn, "server", res0),
		hostRecord(3, trace.DirOut, "host", call1),
		hostRecord(4, trace.DirIn, "server", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"firstanswer"}]}}`),
	}, 10)
	_ = h.screen() // the summary is cached as the row is laid out
	h.feedUntil(t0, []trace.Record{
		hostRecord(20, trace.DirOut, "host", init0), hostRecord(21, trace.DirIn, "server", res0),
		hostRecord(22, trace.DirOut, "host", call1),
		hostRecord(23, trace.DirIn, "server", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"secondanswer"}]}}`),
	}, 30)
	s := h.screen()
	if r, ok := h.m.tracker.Get(wire.IntID(1)); !ok || h.m.screens.list.Summary(r.ID) == "" || !strings.Contains(h.m.screens.list.Summary(r.ID), "secondanswer") {
		t.Errorf("request 1's summary is %q, want the second call's result\n%s", h.m.screens.list.Summary(r.ID), s)
	}
	if !strings.Contains(s, "secondanswer") {
		t.Errorf("the screen never shows the second call's result:\n%s", s)
	}
}

// Found in review: the selection and the open detail are kept by ID. With the first
// call 1 selected (following off) and its detail open, the host's next
// session reuses 1: the tracker renames the first 1·1, and the detail and
// the selection now show the new call — keys act on it.
func TestAttachRenameSelectionFollowsRename(t *testing.T) {
	hello := attachHello{Proxy: "p", Command: "server", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0)
	const (
		init0 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
		res0  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`
		call1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
		call2 = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"other","arguments":{}}}`
	)
	h.feedUntil(t0, []trace.Record{
		{MS: 0.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "legacy", ProtocolVersion: "2025-11-25"},
		hostRecord(1, trace.DirOut, "host", init0), hostRecord(2, trace.DirIn, "server", res0),
		hostRecord(3, trace.DirOut, "host", call1),
		hostRecord(4, trace.DirIn, "server", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"firstanswer"}]}}`),
		hostRecord(5, trace.DirOut, "host", call2),
	}, 10)
	h.send(keyMsg("up")) // select the first call (following stops)
	first, _ := h.m.tracker.Get(h.m.screens.list.Selected())
	if first == nil || first.Target != "echo" {
		t.Fatalf("selected %v", h.m.screens.list.Selected())
	}
	h.send(keyMsg("enter"))
	h.feedUntil(t0, []trace.Record{
		hostRecord(20, trace.DirOut, "host", init0), hostRecord(21, trace.DirIn, "server", res0),
		hostRecord(22, trace.DirOut, "host", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"newcall","arguments":{}}}`),
	}, 30)
	if r, _ := h.m.tracker.Get(h.m.screens.list.Selected()); r != first {
		t.Errorf("the selection moved to %s (%s) from the first call, now %s", h.m.screens.list.Selected(), r.Target, first.ID)
	}
	if r, _ := h.m.tracker.Get(h.m.screens.detail.ID()); r != first {
		t.Errorf("the open detail shows %s (%s), not the first call (now %s)\n%s", h.m.screens.detail.ID(), r.Target, first.ID, h.screen())
	}
}
