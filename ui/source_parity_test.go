package ui

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/trace"
	"inflight/ui/detail"
	"inflight/wire"
)

// liveTraffic drives a live view through a session and keeps every event
// its client delivered, stamped with the time it came.
type liveTraffic struct {
	h      *harness
	events []event.Event
	// marks are the times the screens are compared at, with the number
	// of events delivered by then.
	marks []trafficMark
}

type trafficMark struct {
	at     time.Time
	events int
	screen string
}

func (l *liveTraffic) deliver(evs ...event.Event) {
	l.h.t.Helper()
	for i := range evs {
		if evs[i].Time.IsZero() {
			evs[i].Time = l.h.now
		}
	}
	l.events = append(l.events, evs...)
	l.h.events(evs...)
}

// call sends a request from the view, as --call does, and delivers the
// bytes its client wrote.
func (l *liveTraffic) call(method, params string) wire.ID {
	l.h.t.Helper()
	l.h.run(l.h.m.send(method, json.RawMessage(params), sessionDefaults()))
	return l.sent(l.h.m.tracker.At(l.h.m.tracker.Len() - 1).ID)
}

// sent delivers the bytes the client wrote for the view's request id: its
// params with the progress token in _meta, as the client adds it.
func (l *liveTraffic) sent(id wire.ID) wire.ID {
	l.h.t.Helper()
	r, ok := l.h.m.tracker.Get(id)
	if !ok {
		l.h.t.Fatalf("request %s not begun", id)
	}
	var req *client.Request
	for i := range l.h.fake.sent {
		if l.h.fake.sent[i].ID == id {
			req = &l.h.fake.sent[i]
		}
	}
	if req == nil {
		l.h.t.Fatalf("request %s not sent", id)
	}
	params := map[string]any{}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &params); err != nil {
			l.h.t.Fatal(err)
		}
	}
	params["_meta"] = map[string]any{"progressToken": req.ProgressToken}
	b, _ := json.Marshal(params)
	raw := wire.Request(id, r.Method, b)
	msg, err := wire.Decode(raw)
	if err != nil {
		l.h.t.Fatal(err)
	}
	l.deliver(event.Event{Kind: event.Sent, RequestID: id, Raw: raw, Msg: msg})
	return id
}

func (l *liveTraffic) answer(id wire.ID, raw []byte) {
	l.h.t.Helper()
	msg, err := wire.Decode(raw)
	if err != nil {
		l.h.t.Fatal(err)
	}
	l.deliver(event.Event{Kind: event.Received, RequestID: id, Raw: raw, Msg: msg})
}

func (l *liveTraffic) progress(id wire.ID, v, total float64, message string) {
	l.h.t.Helper()
	r, _ := l.h.m.tracker.Get(id)
	params, _ := json.Marshal(map[string]any{"progressToken": r.ProgressToken, "progress": v, "total": total, "message": message})
	raw := wire.Notification(wire.NotifyProgress, params)
	msg, p, err := wire.DecodeLine(raw)
	if err != nil {
		l.h.t.Fatal(err)
	}
	l.deliver(event.Event{Kind: event.Received, Raw: raw, Msg: msg, Progress: p})
}

func (l *liveTraffic) wait(d time.Duration) { l.h.advance(d) }

func (l *liveTraffic) mark() {
	l.marks = append(l.marks, trafficMark{at: l.h.now, events: len(l.events), screen: l.h.screen()})
}

// TestLiveAndAttachSameScreens feeds one session's traffic through the
// live path (a client's events) and through the attach path (the same
// events as a proxy records them, read back by source), and compares the
// screens at 120×35. They differ only where the view says whose the
// traffic is, by design: the header (the target, or "attach NAME · host
// <-> COMMAND"), the ⇄ that marks a host's request, and the key bar (a
// view on a proxy sends nothing, so its keys say so). Everything else —
// the rows, their states, timers, progress and outcomes, the counts, the
// detail — is drawn from the same tracker states reached by Apply on one
// side and Observe on the other.
func TestLiveAndAttachSameScreens(t *testing.T) {
	live := &liveTraffic{h: newHarness(t, 120, 35)}
	h := live.h
	info := h.fake.info
	live.deliver(event.Event{Kind: event.Connected, Info: &info})
	list := live.sent(wire.IntID(1)) // the view asks for the tools on connecting
	live.deliver(event.Event{Kind: event.Stderr, Text: "inflight-demo: serving stdio"})
	live.answer(list, wire.ResultResponse(list, json.RawMessage(`{"resultType":"complete","tools":[{"name":"slow","inputSchema":{"type":"object"}}]}`)))
	live.wait(200 * time.Millisecond)

	done := live.call(wire.MethodToolsCall, `{"name":"slow","arguments":{"seconds":1}}`)
	live.progress(done, 1, 4, "step 1 of 4")
	live.wait(time.Second)
	live.progress(done, 4, 4, "step 4 of 4")
	live.answer(done, wire.ResultResponse(done, json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"slow finished"}]}`)))

	failed := live.call(wire.MethodToolsCall, `{"name":"fail","arguments":{}}`)
	live.wait(300 * time.Millisecond)
	live.answer(failed, wire.ErrorResponse(failed, -32603, "the demo tool failed on purpose"))

	running := live.call(wire.MethodToolsCall, `{"name":"slow","arguments":{"seconds":10}}`)
	live.wait(700 * time.Millisecond)
	live.progress(running, 3, 10, "step 3 of 10")
	live.deliver(event.Event{Kind: event.Stderr, Text: "slow: step 3"})
	live.wait(1500 * time.Millisecond)
	live.mark() // a request still running: its timer and progress

	h.key("enter")
	live.mark() // its detail
	h.key("esc", "l")
	live.mark() // the protocol log

	// The same events as a proxy streams them: the host's requests "out",
	// the server's messages "in", each with the positions the proxy keeps.
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, t0, nil)
	tw.SetSenders("host", "server")
	tw.SetPositions(true)
	for _, ev := range live.events {
		if err := tw.Judged(ev, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := trace.ReadAll(&buf)
	if err != nil || len(bad) > 0 {
		t.Fatalf("the trace: %v %v", err, bad)
	}
	dec := source.Decoder{Start: t0, Relayed: true}
	var items []source.Item
	for i := range recs {
		if it, ok := dec.Decode(&recs[i]); ok {
			items = append(items, it)
		}
	}
	if len(items) != len(live.events) {
		t.Fatalf("%d items from %d events", len(items), len(live.events))
	}

	view := newAttachHarness(t, 120, 35, attachHello{Proxy: "demo", Command: "inflight demo-server", Started: t0, LateWindow: "5s"}, t0)
	fed := 0
	for i, mk := range live.marks {
		view.now = mk.at
		view.send(eventsMsg{gen: view.m.conn.gen, items: items[fed:mk.events]})
		fed = mk.events
		switch i {
		case 1:
			view.key("enter")
		case 2:
			view.key("esc", "l")
		}
		got, want := maskWhose(view.screen()), maskWhose(mk.screen)
		if got != want {
			t.Errorf("screen %d differs:\nlive:\n%s\nattach:\n%s", i, want, got)
		}
	}
	if view.m.Disagreements() != 0 {
		t.Errorf("the view disagrees: %s", view.m.feed.lastDisagreement)
	}
	if r, ok := view.m.tracker.Get(running); !ok || r.State != session.StateRunning || !r.ByHost {
		t.Errorf("the host's request in the view: %+v", r)
	}
}

// The parts of a screen that say whose the traffic is, which differ by
// design between a live view and a view on a proxy.
var (
	// An in-flight row's TIMEOUT cell, after its spinner, state and
	// ELAPSED: the live view's countdown, "—" on a proxy (the host keeps
	// its own timeout, which no wire says).
	rowTimeout = regexp.MustCompile(`([\x{2800}-\x{28FF}] (?:pending|running) \S+) \S+`)
	// The detail's word on the timeout ("times out in 58.5s (timeout …)",
	// "timeout: the host's own").
	detailTimeout = regexp.MustCompile(`(times out in .*|` + regexp.QuoteMeta(detail.HostTimeoutText) + `)$`)
)

// maskWhose blanks what says whose the traffic is: the header's first
// line (the target, or the proxy and its command), the key bar (a view on
// a proxy offers no key that sends), the ⇄ of a host's request, and the
// timeouts. The ⇄ widens the REQUEST column by its two cells, so the
// columns are compared by their cells, with runs of spaces made one.
func maskWhose(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	lines[0], lines[len(lines)-1] = "<header>", "<keys>"
	for i, l := range lines {
		l = strings.ReplaceAll(l, "⇄ ", "")
		l = strings.Join(strings.Fields(l), " ")
		l = rowTimeout.ReplaceAllString(l, "$1 <timeout>")
		lines[i] = detailTimeout.ReplaceAllString(l, "<timeout>")
	}
	return strings.Join(lines, "\n")
}
