package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/source"
	"inflight/trace"
	"inflight/ui/list"
	"inflight/ui/look"
	"inflight/wire"
)

// sentAct is a command the view handed Attach.Act.
type sentAct struct {
	act   string
	id    wire.ID
	after time.Duration
}

// newActHarness is newAttachHarness on a proxy that takes commands: what
// the view asks is kept in *sent (the proxy's side, its socket and its
// replies, is the real proxy's in cli's TestAttachKeysActOnRealProxy).
func newActHarness(t *testing.T, w, hgt int, sent *[]sentAct) *harness {
	t.Helper()
	return newActHarnessOf(t, w, hgt, sent, false)
}

// newActHarnessOf is newActHarness, in the proxy's own process or not.
func newActHarnessOf(t *testing.T, w, hgt int, sent *[]sentAct, inProcess bool) *harness {
	t.Helper()
	return newActHarnessWith(t, w, hgt, sent, inProcess, session.Config{LateWindow: 5 * time.Second})
}

// newActHarnessWith is newActHarnessOf with the view's tracker configured.
func newActHarnessWith(t *testing.T, w, hgt int, sent *[]sentAct, inProcess bool, cfg session.Config) *harness {
	t.Helper()
	hs := &harness{t: t, now: t0.Add(time.Second)}
	m, err := New(Options{
		Target:    "attach demo · host <-> inflight demo-server",
		Transport: "stdio",
		Source:    streamEnded{},
		Attach: &Attach{Proxy: source.Proxy{Name: "demo", Command: "inflight demo-server", Start: t0}, InProcess: inProcess,
			Act: func(act string, id wire.ID, after time.Duration) error {
				*sent = append(*sent, sentAct{act, id, after})
				return nil
			}},
		Tracker: cfg,
		Now:     func() time.Time { return hs.now },
		Dark:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd { return nil }
	m.conn.waitItems = func(<-chan source.Item, int) tea.Cmd { return nil }
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: hgt})
	return hs
}

// injectedRecord is a proxy's injected line.
func injectedRecord(ms float64, id int64, action, phase, text string) trace.Record {
	i := wire.IntID(id)
	return trace.Record{MS: ms, Dir: trace.DirLocal, Event: trace.EventInjected, ID: &i, Injected: action, Code: phase, Text: text}
}

func replyRecord(ms float64, id int64, act, code, text string) trace.Record {
	i := wire.IntID(id)
	return trace.Record{MS: ms, Dir: trace.DirLocal, Event: trace.EventReply, ID: &i, Injected: act, Code: code, Text: text}
}

// actStart feeds a host's two calls, the second still running.
func actStart(h *harness) {
	h.sendRecords(attachMsg{recs: []trace.Record{
		hostRecord(1, trace.DirOut, "host", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`),
		hostRecord(1.5, trace.DirIn, "server", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}`),
		{MS: 1.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "stdio", Era: "legacy", ProtocolVersion: "2025-11-25", Server: "demo 1"},
		hostRecord(1.6, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		hostRecord(2, trace.DirOut, "host", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		hostRecord(3, trace.DirIn, "server", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`),
		hostRecord(10, trace.DirOut, "host", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":8}}}`),
	}})
}

// TestAttachActKeys: on the host's call in flight, h asks the proxy to
// hold it; the row then says what the proxy streamed it did (acting,
// holding with the time held, released after); d opens the delay prompt
// (30s by default, a bad duration said and kept); keys on a row no longer
// in flight, or release with nothing held, are refused saying why, and
// send nothing; a refusal from the proxy is said. The footer and help
// list the keys (goldens at 80x24 and 120x35).
func TestAttachActKeys(t *testing.T) {
	for _, size := range []struct{ w, h int }{{120, 35}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			var sent []sentAct
			h := newActHarness(t, size.w, size.h, &sent)
			actStart(h)
			h.key("u")
			if len(sent) != 0 || !strings.Contains(h.m.status.text, "nothing of #2 is held") {
				t.Errorf("u with nothing held: sent %v, status %q", sent, h.m.status.text)
			}
			h.key("h")
			if len(sent) != 1 || sent[0] != (sentAct{"hold", wire.IntID(2), 0}) {
				t.Fatalf("h sent %v", sent)
			}
			h.sendRecords(attachMsg{recs: []trace.Record{
				replyRecord(20, 2, "hold", "done", "hold on request 2"),
				injectedRecord(20, 2, "hold", phaseActing, "hold on tools/call slow (id 2) (a key in inflight attach), 10ms after it was sent: its response will be held until released when it comes"),
			}})
			if s := h.screen(); !strings.Contains(s, "◇ hold armed by you") || !strings.Contains(s, "the proxy holds #2's response: the host waits until it is released") {
				t.Errorf("after the proxy took the hold:\n%s", s)
			}
			resp := hostRecord(8010, trace.DirIn, "server", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slow finished"}]}}`)
			resp.Injected = "hold"
			h.feedUntil(t0, []trace.Record{resp, injectedRecord(8010, 2, "hold", phaseHolding, "holding the response to tools/call slow (id 2) until released")}, 12110)
			if s := h.screen(); !strings.Contains(s, "◇ held by you · 4.1s") && !(size.w == 80 && strings.Contains(s, "◇ held · 4.1s")) {
				t.Errorf("while held:\n%s", s)
			}
			h.golden()
			h.key("?")
			for _, want := range []string{"h hold", "u release", "z cancel upstream", "Z cancel, host waits", "t race"} {
				if !strings.Contains(h.screen(), want) {
					t.Errorf("help lacks %q:\n%s", want, h.screen())
				}
			}
			t.Run("help", func(t *testing.T) { h.t = t; h.golden() })
			h.key("esc")
			h.t = t

			// A held response can be released, not cancelled.
			h.key("z")
			if len(sent) != 1 || !strings.Contains(h.m.status.text, "release or drop it") {
				t.Errorf("z on a held response: sent %v, status %q", sent, h.m.status.text)
			}
			h.key("u")
			if len(sent) != 2 || sent[1].act != "release" {
				t.Fatalf("u sent %v", sent)
			}
			h.feedUntil(t0, []trace.Record{injectedRecord(12200, 2, "hold", phaseReleased, "released the response to tools/call slow (id 2) on request, held 4.19s")}, 12300)
			if s := h.screen(); !strings.Contains(s, "released after 4.2s") {
				t.Errorf("after the release:\n%s", s)
			}
			// The detail's timeline marks each step, the release after the
			// server's answer included.
			h.key("enter")
			for _, want := range []string{"◇ hold +", "◇ held +8.0s", "released +12.2s", "released after 4.2s (hold by you)"} {
				if !strings.Contains(h.screen(), want) {
					t.Errorf("the detail lacks %q:\n%s", want, h.screen())
				}
			}
			t.Run("detail", func(t *testing.T) { h.t = t; h.golden() })
			h.t = t
			h.key("esc")
			// Now nothing of it is in flight or held.
			h.key("h")
			if len(sent) != 2 || !strings.Contains(h.m.status.text, "#2 is not in flight") {
				t.Errorf("h on a completed row: sent %v, status %q", sent, h.m.status.text)
			}

			// The delay prompt, on a new call.
			h.feedUntil(t0, []trace.Record{hostRecord(12400, trace.DirOut, "host", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)}, 12500)
			h.key("d")
			if !strings.Contains(h.screen(), "Delay the response to #3") {
				t.Fatalf("no delay prompt:\n%s", h.screen())
			}
			for _, k := range []string{"x", "enter"} {
				h.key(k)
			}
			if len(sent) != 2 || !strings.Contains(h.screen(), `"x" is not a duration`) {
				t.Errorf("a bad delay: sent %v\n%s", sent, h.screen())
			}
			h.key("backspace")
			h.key("enter")
			if len(sent) != 3 || sent[2] != (sentAct{"delay", wire.IntID(3), 30 * time.Second}) {
				t.Errorf("the default delay sent %v", sent)
			}
			h.sendRecords(attachMsg{recs: []trace.Record{replyRecord(12600, 3, "delay", "refused", "rule \"*: hold\" acts on tools/call slow (id 3) already (hold)")}})
			if !strings.Contains(h.m.status.text, `the proxy refused delay on #3: rule "*: hold" acts on`) {
				t.Errorf("a refusal: status %q", h.m.status.text)
			}
		})
	}
}

// TestAttachReadOnlyKeys: a proxy that takes no commands (no Attach.Act)
// lists no acting key, and says why when one is pressed.
func TestAttachReadOnlyKeys(t *testing.T) {
	hello := attachHello{Proxy: "demo", Command: "inflight demo-server", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0.Add(time.Second))
	actStart(h)
	if s := h.screen(); strings.Contains(s, "h hold") {
		t.Errorf("a read-only view lists the acting keys:\n%s", s)
	}
	h.key("h")
	if !strings.Contains(h.m.status.text, "this proxy takes no commands") {
		t.Errorf("status %q", h.m.status.text)
	}
}

// TestAttachInProcessSaysQStops: in the HTTP proxy's own process, the
// footer and the help say that q stops the proxy, not that it detaches.
func TestAttachInProcessSaysQStops(t *testing.T) {
	var sent []sentAct
	h := newActHarnessOf(t, 120, 35, &sent, true)
	actStart(h)
	if s := h.screen(); !strings.Contains(s, "q stop proxy") || strings.Contains(s, "detach") {
		t.Errorf("the footer in the proxy's process:\n%s", s)
	}
	h.key("?")
	if s := h.screen(); !strings.Contains(s, "this is its own process: q stops it.") || !strings.Contains(s, "ctrl+c stop proxy") {
		t.Errorf("the help in the proxy's process:\n%s", s)
	}
}

// A host that connects again (a new initialize) may use its IDs again, and
// the tracker renames the finished request ID·N: what the proxy did stays
// with the request it was done to. The new request with that ID wears no
// mark, in its row or its detail, and the old one (now 2·1) keeps its own.
// (A review's finding: the marks were kept by the bare ID.)
func TestAttachActMarkFollowsARetiredID(t *testing.T) {
	var sent []sentAct
	h := newActHarness(t, 120, 35, &sent)
	actStart(h)
	resp := hostRecord(30, trace.DirIn, "server", `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
	resp.Injected = "drop"
	h.feedUntil(t0, []trace.Record{
		injectedRecord(20, 2, "drop", phaseActing, "drop on tools/call slow (id 2) (a key in inflight attach), 10ms after it was sent: its response will be dropped when it comes"),
		injectedRecord(30, 2, "drop", phaseDropped, "dropped the response to tools/call slow (id 2): the host never gets it"),
		resp,
		// The host connects again: a new session, its IDs start over.
		hostRecord(100, trace.DirOut, "host", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`),
		hostRecord(101, trace.DirIn, "server", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}`),
		hostRecord(102, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		hostRecord(110, trace.DirOut, "host", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fresh","arguments":{}}}`),
	}, 200)
	r, ok := h.m.tracker.Get(wire.IntID(2))
	if !ok || r.Target != "fresh" {
		t.Fatalf("#2 is %+v, want the new session's tools/call fresh", r)
	}
	if p := actPartOf(h.m, r, h.now); p != nil {
		t.Errorf("the new session's #2 (tools/call fresh, nothing done to it) wears the old #2's mark %q", p.Variants[0])
	}
	for _, line := range strings.Split(h.screen(), "\n") {
		if strings.Contains(line, "fresh") && strings.Contains(line, "dropped") {
			t.Errorf("the row of the new #2 says the proxy dropped its response:\n%s", line)
		}
	}
	if f := h.m.feed.fact(h.m.theme.styles, r, h.now); f != "" {
		t.Errorf("the detail of the new #2 says %q", f)
	}
	old, ok := h.m.tracker.Get(wire.StringID("2·1"))
	if !ok || actPartOf(h.m, old, h.now) == nil {
		t.Fatalf("the old #2 (now 2·1) lost the mark of what the proxy did to it")
	}
	if p := actPartOf(h.m, old, h.now); !strings.Contains(p.Variants[0], "dropped") {
		t.Errorf("the old #2's mark: %q", p.Variants[0])
	}
}

// The marks of what the proxy did are kept by request; those of requests
// the tracker's bounded history let go are let go too, and the marks of the
// requests it keeps stay.
func TestAttachActMarksOfEvictedRequestsGo(t *testing.T) {
	var sent []sentAct
	h := newActHarnessWith(t, 120, 35, &sent, false, session.Config{LateWindow: 5 * time.Second, HistoryLimit: 32})
	actStart(h)
	const n = 400
	var recs []trace.Record
	for i := int64(3); i < n; i++ {
		ms := float64(100 + 10*i)
		recs = append(recs,
			hostRecord(ms, trace.DirOut, "host", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, i)),
			injectedRecord(ms+1, i, "drop", phaseDropped, "dropped the response"),
			hostRecord(ms+2, trace.DirIn, "server", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i)))
	}
	h.feedUntil(t0, recs, float64(100+10*n))
	if got := len(h.m.feed.acts); got > 128 {
		t.Errorf("%d marks kept for a history of 32 requests", got)
	}
	last, ok := h.m.tracker.Get(wire.IntID(n - 1))
	if !ok || actPartOf(h.m, last, h.now) == nil {
		t.Errorf("the latest request lost its mark")
	}
}

// actPartOf is the mark r's row wears for what the proxy did to it at now
// (nil: none), as the list draws it from the root's facts.
func actPartOf(m *Model, r *session.Request, now time.Time) *look.Part {
	a, ok := listFacts{auth: m.screens.auth, feed: &m.feed}.HostAct(r)
	if !ok {
		return nil
	}
	p, ok := list.HostActPart(m.theme.styles, a, now)
	if !ok {
		return nil
	}
	return &p
}

// TestAttachEmptyWaitsForTheHost: a view on a proxy with no request yet
// says that it waits for the host's (not that the user sent none), and
// the HTTP proxy's own view says the URL in its header is the one to give
// the host.
func TestAttachEmptyWaitsForTheHost(t *testing.T) {
	var sent []sentAct
	for _, inProcess := range []bool{false, true} {
		s := newActHarnessOf(t, 120, 35, &sent, inProcess).screen()
		if !strings.Contains(s, "The host has not sent a request through the proxy yet.") || strings.Contains(s, "You have not sent") {
			t.Errorf("in process %v: the empty view does not wait for the host:\n%s", inProcess, s)
		}
		gives := strings.Contains(s, "Give the host the URL in the header") && strings.Contains(s, "inflight demo-server")
		if gives != inProcess {
			t.Errorf("in process %v: the view says which URL to give the host: %v, want %v:\n%s", inProcess, gives, inProcess, s)
		}
	}
}

// TestAttachHoldTakenBackOrNeverTook: u on a hold armed but not yet taken
// (the response has not come) asks the proxy to take it back, and the row
// says it was taken back; a hold armed on a call the host then cancels
// says it never took, in the row and the detail — not that it waits.
func TestAttachHoldTakenBackOrNeverTook(t *testing.T) {
	var sent []sentAct
	h := newActHarness(t, 120, 35, &sent)
	actStart(h)
	h.key("h")
	h.sendRecords(attachMsg{recs: []trace.Record{
		replyRecord(20, 2, "hold", "done", "hold on request 2"),
		injectedRecord(20, 2, "hold", phaseActing, "hold on tools/call slow (id 2) (a key in inflight attach), 10ms after it was sent: its response will be held until released when it comes"),
	}})
	h.key("u")
	if len(sent) != 2 || sent[1] != (sentAct{"release", wire.IntID(2), 0}) {
		t.Fatalf("u on an armed hold sent %v, want a release of #2", sent)
	}
	if !strings.Contains(h.m.status.text, "take back what was armed on #2") {
		t.Errorf("u on an armed hold: status %q", h.m.status.text)
	}
	h.sendRecords(attachMsg{recs: []trace.Record{
		replyRecord(30, 2, "release", "done", "took back what was armed on request 2: its response will pass on untouched"),
		injectedRecord(30, 2, "hold", phaseTakenBack, "took back the hold on tools/call slow (id 2) (a key in inflight attach) before its response came: its response will pass on untouched"),
	}})
	if !strings.Contains(h.m.status.text, "hold taken back: #2's response will pass on untouched") {
		t.Errorf("the proxy took the hold back: status %q", h.m.status.text)
	}
	if s := h.screen(); !strings.Contains(s, "hold taken back by you before the response came") {
		t.Errorf("after the hold was taken back:\n%s", s)
	}
	h.key("u")
	if len(sent) != 2 || !strings.Contains(h.m.status.text, "nothing of #2 is held") {
		t.Errorf("u once taken back: sent %v, status %q", sent, h.m.status.text)
	}

	// Armed again, then the host cancels before the response comes.
	h.key("h")
	h.sendRecords(attachMsg{recs: []trace.Record{
		replyRecord(40, 2, "hold", "done", "hold on request 2"),
		injectedRecord(40, 2, "hold", phaseActing, "hold on tools/call slow (id 2) (a key in inflight attach), 30ms after it was sent: its response will be held until released when it comes"),
		hostRecord(50, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`),
	}})
	if s := h.screen(); !strings.Contains(s, "hold never took · host cancelled") || strings.Contains(s, "waiting for the response") {
		t.Errorf("after the host cancelled the held call:\n%s", s)
	}
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "the hold never took: the host cancelled first") || strings.Contains(s, "hold armed by you") {
		t.Errorf("the detail after the host cancelled:\n%s", s)
	}
}

// TestAttachHoldKeepsProgress: a hold armed on a call whose progress flows
// keeps its bar and count in the row beside the mark (the server still
// works on it), at 120 and at 80 columns.
func TestAttachHoldKeepsProgress(t *testing.T) {
	for _, size := range []struct{ w, h int }{{120, 35}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			var sent []sentAct
			h := newActHarness(t, size.w, size.h, &sent)
			h.sendRecords(attachMsg{recs: []trace.Record{
				hostRecord(1, trace.DirOut, "host", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`),
				hostRecord(1.5, trace.DirIn, "server", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}`),
				{MS: 1.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "stdio", Era: "legacy", ProtocolVersion: "2025-11-25", Server: "demo 1"},
				hostRecord(10, trace.DirOut, "host", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":40},"_meta":{"progressToken":"p2"}}}`),
				hostRecord(500, trace.DirIn, "server", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p2","progress":5,"total":40}}`),
			}})
			h.key("h")
			h.sendRecords(attachMsg{recs: []trace.Record{
				replyRecord(600, 2, "hold", "done", "hold on request 2"),
				injectedRecord(600, 2, "hold", phaseActing, "hold on tools/call slow (id 2) (a key in inflight attach), 590ms after it was sent: its response will be held until released when it comes"),
			}})
			s := h.screen()
			if !strings.Contains(s, "◇ hold armed") || !strings.Contains(s, "1 progress") {
				t.Errorf("the armed hold's row lost its progress count:\n%s", s)
			}
			if size.w >= 120 && !strings.Contains(s, "█") && !strings.Contains(s, "░") {
				t.Errorf("the armed hold's row lost its progress bar:\n%s", s)
			}
		})
	}
}

// TestAttachHeaderSaysEachEraSeen: a proxy whose first host spoke modern
// and a later one legacy says both eras in its header, not only the
// first's.
func TestAttachHeaderSaysEachEraSeen(t *testing.T) {
	var sent []sentAct
	h := newActHarness(t, 120, 35, &sent)
	h.sendRecords(attachMsg{recs: []trace.Record{
		{MS: 0.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "http", Era: "modern", ProtocolVersion: "2026-07-28", Server: "demo 1"},
		hostRecord(1, trace.DirOut, "host", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`),
		hostRecord(2, trace.DirIn, "server", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`),
	}})
	if head := strings.SplitN(h.screen(), "\n", 2)[0]; !strings.Contains(head, "modern 2026-07-28") || strings.Contains(head, "legacy") {
		t.Fatalf("after a modern host, the header reads:\n%s", head)
	}
	h.sendRecords(attachMsg{recs: []trace.Record{
		hostRecord(10, trace.DirOut, "host", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`),
		hostRecord(11, trace.DirIn, "server", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}`),
	}})
	if head := strings.SplitN(h.screen(), "\n", 2)[0]; !strings.Contains(head, "modern 2026-07-28 + legacy 2025-11-25") {
		t.Errorf("after a legacy host too, the header reads:\n%s", head)
	}
	// Too narrow for both versions: both eras still.
	for _, w := range []int{80, 60} {
		h.send(tea2size(w, 24))
		if head := strings.SplitN(h.screen(), "\n", 2)[0]; !strings.Contains(head, "modern + legacy") {
			t.Errorf("at %d columns, the header reads:\n%s", w, head)
		}
	}
}
