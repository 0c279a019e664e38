package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// TestAttachHostFindingsApart: on a proxy the server's violations and the
// host's findings are different parties' faults. The header counts them
// apart ("⚠ 1 violation · ⚑ 2 host findings", at 80 columns "⚠ 1 server ·
// ⚑ 2 host"), a host's row flags its
// finding in a cell of its own (not "⚠ 1 violation"), and the detail
// gives its words under a title of its own. The view works the findings
// out from the proxy's lines itself, and agrees with the proxy.
func TestAttachHostFindingsApart(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			hello := attachHello{Proxy: "judge", Command: "server", Started: t0, LateWindow: "5s"}
			h := newAttachHarness(t, size.w, size.h, hello, t0.Add(time.Second))
			progressing, gone, stray := wire.IntID(1), wire.IntID(2), wire.IntID(55)
			progress := func(ms float64, n int) trace.Record {
				return hostRecord(ms, trace.DirIn, "server", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":%d,"total":10}}`, n))
			}
			h.sendRecords(attachMsg{recs: []trace.Record{
				{MS: 1, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "stdio", Era: "legacy", ProtocolVersion: "2025-11-25"},
				hostRecord(2, trace.DirOut, "host", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}}`),
				progress(100, 1), progress(300, 2), progress(500, 3),
				hostRecord(600, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"Request timed out"}}`),
				{MS: 600, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &progressing, Code: session.ViolationHostCancelledWhileProgressing},
				hostRecord(650, trace.DirOut, "host", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stubborn","arguments":{}}}`),
				hostRecord(700, trace.DirIn, "server", `{"jsonrpc":"2.0","id":55,"result":{}}`),
				{MS: 700, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &stray, Code: session.ViolationUnknownResponseID},
				{MS: 900, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteHostClosed},
				{MS: 900, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &gone, Code: session.ViolationHostAbandoned},
			}})
			if n := h.m.Disagreements(); n != 0 {
				t.Fatalf("disagreements %d: %s", n, h.m.feed.lastDisagreement)
			}
			s := h.screen()
			if !strings.Contains(s, "⚠ 1 violation · ⚑ 2 host findings") && !strings.Contains(s, "⚠ 1 server · ⚑ 2 host") {
				t.Errorf("the header does not count the server's violations and the host's findings apart:\n%s", s)
			}
			row := lineWith(s, "1 ⇄ slow")
			if !strings.Contains(row, "⚑ host cancelled while progress flowed") && !strings.Contains(row, "⚑ cancelled mid-progress") {
				t.Errorf("the host's row does not flag its finding:\n%s", row)
			}
			if strings.Contains(row, "violation") || strings.Contains(lineWith(s, "2 ⇄ stubborn"), "violation") {
				t.Errorf("a host's row counts the host's finding among violations:\n%s", s)
			}
			h.golden()

			h.key("up", "enter") // the host's cancel while progress flowed
			h.key("end")         // the findings close the detail
			// The detail wraps its lines anywhere: compared without spaces.
			squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
			d := squeeze(h.screen())
			for _, want := range []string{"THE HOST'S FINDINGS", "⚑ host_cancelled_while_progressing", "the host gave up on tools/call slow (id 1) (reason “Request timed out”) after 3 progress notifications, 0.2s apart"} {
				if !strings.Contains(d, squeeze(want)) {
					t.Errorf("the detail lacks %q:\n%s", want, h.screen())
				}
			}
			if strings.Contains(d, "VIOLATIONS") {
				t.Errorf("the detail files the host's finding among the server's violations:\n%s", h.screen())
			}
		})
	}
}

// lineWith is the screen's line that holds label.
func lineWith(s, label string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, label) {
			return l
		}
	}
	return ""
}

// TestAttachTiesQuestionByOwner: over HTTP the proxy's line of a server's
// question names the request whose stream carried it (owner); the view
// ties the question to it as the proxy did though two calls are in
// flight, and finds the host's giving up on it while it waits.
func TestAttachTiesQuestionByOwner(t *testing.T) {
	hello := attachHello{Proxy: "owner", Command: "http://127.0.0.1:1/mcp", Transport: "http", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0.Add(time.Second))
	confirm := wire.IntID(2)
	ask := hostRecord(200, trace.DirIn, "server", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}`)
	ask.Owner = &confirm
	h.sendRecords(attachMsg{recs: []trace.Record{
		{MS: 1, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "legacy", ProtocolVersion: "2025-11-25"},
		hostRecord(10, trace.DirOut, "host", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`),
		hostRecord(20, trace.DirOut, "host", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{}}}`),
		ask,
		hostRecord(500, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"Request timed out"}}`),
		{MS: 500, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &confirm, Code: session.ViolationHostTimeoutDuringQuestion},
	}})
	if n := h.m.Disagreements(); n != 0 {
		t.Fatalf("disagreements %d: %s", n, h.m.feed.lastDisagreement)
	}
	vs := h.m.tracker.Violations().ForRequest(confirm)
	if len(vs) != 1 || vs[0].Code != session.ViolationHostTimeoutDuringQuestion ||
		!strings.Contains(vs[0].Detail, "while the server's elicitation/create (id 1) tied to it had waited 0.3s") {
		t.Fatalf("the view's findings of the confirm call: %+v", vs)
	}
	if s := lineWith(h.screen(), "2 ⇄ confirm"); !strings.Contains(s, "⚑ host gave up while the server's question waited") && !strings.Contains(s, "⚑ gave up mid-question") {
		t.Errorf("the row does not flag it:\n%s", h.screen())
	}
}
