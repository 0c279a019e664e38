package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/trace"
	"inflight/ui/detail"
	"inflight/ui/look"
	"inflight/wire"
)

// attachHello is the part of a proxy's hello line the tests read (the
// proxy package's Hello; ui does not import proxy).
type attachHello struct {
	Proxy      string    `json:"proxy"`
	Command    string    `json:"command"`
	Started    time.Time `json:"started"`
	LateWindow string    `json:"lateWindow"`
	Transport  string    `json:"transport,omitempty"`
}

// recordedStream reads a stream `inflight attach --plain` recorded: its
// hello and its trace lines.
func recordedStream(t *testing.T, path string) (attachHello, []trace.Record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	line, err := br.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var h attachHello
	if err := json.Unmarshal(line, &h); err != nil {
		t.Fatal(err)
	}
	var recs []trace.Record
	r := trace.NewReader(br)
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		recs = append(recs, rec)
	}
	return h, recs
}

// newAttachHarness is a harness whose model is a view on a proxy; the
// test hands it the proxy's lines (attachMsg) itself.
func newAttachHarness(t *testing.T, w, hgt int, hello attachHello, now time.Time) *harness {
	t.Helper()
	hs := &harness{t: t, now: now}
	lw, _ := time.ParseDuration(hello.LateWindow)
	transport := hello.Transport
	if transport == "" {
		transport = "stdio"
	}
	m, err := New(Options{
		Target:    "attach " + hello.Proxy + " · host <-> " + hello.Command,
		Transport: transport,
		Attach:    &Attach{Proxy: source.Proxy{Name: hello.Proxy, Command: hello.Command, Start: hello.Started}},
		Source:    streamEnded{},
		Tracker:   session.Config{LateWindow: lw},
		Now:       func() time.Time { return hs.now },
		Dark:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		hs.ticks = append(hs.ticks, d)
		return nil
	}
	m.conn.waitItems = func(<-chan source.Item, int) tea.Cmd { return nil }
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: hgt})
	return hs
}

// attachMsg is a batch of a proxy's lines for a test to hand the view.
type attachMsg struct {
	recs   []trace.Record
	closed bool
}

// sendRecords hands the view a batch of the proxy's lines as its pump
// would: decoded by source, as source.Attach decodes the socket's.
func (h *harness) sendRecords(msg attachMsg) {
	h.t.Helper()
	dec := source.Decoder{Start: h.m.opts.Attach.Proxy.Start, Relayed: true}
	var items []source.Item
	for i := range msg.recs {
		if it, ok := dec.Decode(&msg.recs[i]); ok {
			items = append(items, it)
		}
	}
	h.send(eventsMsg{gen: h.m.conn.gen, items: items, closed: msg.closed})
}

// streamEnded is the Source of a view whose test hands it the lines
// itself: it has none, and its end is a clean one.
type streamEnded struct{}

func (streamEnded) Items() <-chan source.Item { return nil }
func (streamEnded) Err() error                { return nil }

// feedUntil hands the model the lines up to ms (all of them when ms < 0),
// and moves the clock there.
func (h *harness) feedUntil(start time.Time, recs []trace.Record, ms float64) []trace.Record {
	h.t.Helper()
	n := 0
	for n < len(recs) && (ms < 0 || recs[n].MS <= ms) {
		n++
	}
	if ms >= 0 {
		h.now = start.Add(time.Duration(ms * float64(time.Millisecond)))
	}
	h.sendRecords(attachMsg{recs: recs[:n]})
	return recs[n:]
}

// TestAttachRecordedStubborn feeds the view what a real proxy streamed
// (recorded with `inflight attach --plain`): inflight call as the host,
// timing out after 1s on the demo's stubborn tool (3s, cancels ignored),
// so the host's cancel goes through and the server answers late.
func TestAttachRecordedStubborn(t *testing.T) {
	hello, recs := recordedStream(t, "testdata/attach/stubborn.jsonl")
	for _, size := range []struct{ w, h int }{{120, 35}, {80, 24}} {
		h := newAttachHarness(t, size.w, size.h, hello, hello.Started)
		rest := h.feedUntil(hello.Started, recs, 2100)
		call := h.request(1)
		if !call.ByHost || call.State != session.StateCancelRequested || call.Cancel == nil || call.Cancel.Cause != session.CauseHost ||
			call.Cancel.Signal != event.SignalNotification {
			t.Fatalf("mid-way: state %s cancel %+v; want the host's notifications/cancelled, waiting for the fate", call.State, call.Cancel)
		}
		if call.Late.ProgressAfterCancel != 1 {
			t.Errorf("mid-way: %d progress after the cancel, want 1", call.Late.ProgressAfterCancel)
		}
		screen := h.screen()
		for _, want := range []string{"attach rec · host <-> ", "⇄ stubborn", "cancelling", "host"} {
			if !strings.Contains(screen, want) {
				t.Errorf("%dx%d mid-way: the screen lacks %q:\n%s", size.w, size.h, want, screen)
			}
		}
		if size.w == 120 && !strings.Contains(screen, "host cancelled 1.1s ago") {
			t.Errorf("the row does not say the host cancelled:\n%s", screen)
		}
		t.Run(fmt.Sprintf("cancelling_%dx%d", size.w, size.h), func(t *testing.T) { h.t = t; h.golden() })
		h.t = t

		h.feedUntil(hello.Started, rest, -1)
		h.now = hello.Started.Add(3100 * time.Millisecond)
		h.sendRecords(attachMsg{closed: true})
		if !call.Late.Response || call.Late.Crossed || call.State != session.StateCancelled || call.Late.ProgressAfterCancel != 2 {
			t.Errorf("at the end: state %s late %+v; want cancelled with a late (not crossed) response and 2 late progress", call.State, call.Late)
		}
		if n := h.m.Disagreements(); n != 0 {
			t.Errorf("the view disagrees with the proxy %d times: %s", n, h.m.feed.lastDisagreement)
		}
		screen = h.screen()
		for _, want := range []string{"⚑ late response", "the proxy ended"} {
			if !strings.Contains(screen, want) {
				t.Errorf("%dx%d at the end: the screen lacks %q:\n%s", size.w, size.h, want, screen)
			}
		}
		t.Run(fmt.Sprintf("ended_%dx%d", size.w, size.h), func(t *testing.T) { h.t = t; h.golden() })
		h.t = t

		// Read-only: c is refused with why, nothing else happens; the
		// detail and the log work on the host's request.
		h.key("c")
		if !strings.Contains(h.m.status.text, "is the host's request: this view only watches it") {
			t.Errorf("c on a host request: status %q", h.m.status.text)
		}
		h.key("n")
		if h.m.focus.mode != 0 || !strings.Contains(h.m.status.text, "sends no requests") {
			t.Errorf("n: mode %v status %q; want the list and a refusal", h.m.focus.mode, h.m.status.text)
		}
		h.key("enter")
		if s := h.screen(); !strings.Contains(s, "cancel (host)") || !strings.Contains(s, detail.HostTimeoutText) {
			t.Errorf("the detail of the host's request:\n%s", s)
		}
		h.key("l")
		if s := h.screen(); !strings.Contains(s, "⚑ late") || !strings.Contains(s, "the host closed its end") {
			t.Errorf("the protocol log:\n%s", s)
		}
		h.key("q")
		if !h.quit {
			t.Error("q did not detach")
		}
	}
}

// hostRecord is a line of a proxy's stream.
func hostRecord(ms float64, dir, by string, msg string) trace.Record {
	return trace.Record{MS: ms, Dir: dir, By: by, Msg: json.RawMessage(msg)}
}

// TestAttachHostFaults: the host cancels an ID it never sent, goes away
// with a request in flight; the view flags both as the proxy did, and says
// so when the proxy flagged what it did not.
func TestAttachHostFaults(t *testing.T) {
	hello := attachHello{Proxy: "faults", Command: "server", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0.Add(time.Second))
	unknown := wire.IntID(99)
	gone := wire.IntID(7)
	h.sendRecords(attachMsg{recs: []trace.Record{
		{MS: 1, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "stdio", Era: "legacy", ProtocolVersion: "2025-11-25"},
		hostRecord(2, trace.DirOut, "host", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}`),
		hostRecord(3, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`),
		{MS: 3, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &unknown, Code: session.ViolationHostCancelledUnknown},
	}})
	if !strings.Contains(h.m.status.text, "⚑ host cancelled an unknown ID (99)") {
		t.Errorf("status %q; want the unknown ID flagged", h.m.status.text)
	}
	h.sendRecords(attachMsg{recs: []trace.Record{
		{MS: 500, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteHostClosed},
		{MS: 500, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &gone, Code: session.ViolationHostAbandoned},
	}})
	if s := h.screen(); !strings.Contains(s, "⚑ host gave up without cancelling") || !strings.Contains(s, "⇄ slow") {
		t.Errorf("the abandoned request's row:\n%s", s)
	}
	if n := h.m.Disagreements(); n != 0 {
		t.Fatalf("disagreements %d: %s", n, h.m.feed.lastDisagreement)
	}
	t.Run("abandoned", func(t *testing.T) { h.t = t; h.golden() })
	h.t = t

	// A flag the view did not raise itself, and a verdict it did not
	// reach: both said, not hidden.
	h.sendRecords(attachMsg{recs: []trace.Record{
		{MS: 600, Dir: trace.DirLocal, Event: trace.EventViolation, ID: &gone, Code: session.ViolationHostDuplicateID},
	}})
	if h.m.Disagreements() != 1 || !strings.Contains(h.m.status.text, "this view disagrees with the proxy") {
		t.Errorf("disagreements %d, status %q", h.m.Disagreements(), h.m.status.text)
	}
	late := hostRecord(700, trace.DirIn, "server", `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
	late.Verdict = session.VerdictLate
	h.sendRecords(attachMsg{recs: []trace.Record{late}})
	if h.m.Disagreements() != 2 {
		t.Errorf("a verdict the view did not reach: disagreements %d", h.m.Disagreements())
	}
	// The stream stops with no word of the server's end: the view says
	// only that, not that the proxy ended.
	h.sendRecords(attachMsg{closed: true})
	if s := h.screen(); !strings.Contains(s, "stream stopped before the proxy's end") || strings.Contains(s, "the proxy ended") {
		t.Errorf("a stream cut short:\n%s", s)
	}
}

// TestAttachDetachCancelsNothing: Ctrl+C and the program's shutdown
// detach at once; the host's requests are not the view's to cancel.
func TestAttachDetachCancelsNothing(t *testing.T) {
	hello := attachHello{Proxy: "p", Command: "server", Started: t0, LateWindow: "5s"}
	for _, msg := range []tea.Msg{keyMsg("ctrl+c"), ShutdownMsg{Reason: "interrupted"}} {
		h := newAttachHarness(t, 80, 24, hello, t0.Add(time.Second))
		h.sendRecords(attachMsg{recs: []trace.Record{
			hostRecord(2, trace.DirOut, "host", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`),
		}})
		h.send(msg)
		if !h.quit {
			t.Errorf("%T: the view did not detach", msg)
		}
		if r := h.request(1); r.State != session.StatePending || r.Cancel != nil {
			t.Errorf("%T: the host's request is %s, cancel %+v; the view must leave it alone", msg, r.State, r.Cancel)
		}
	}
}

// TestAttachHelp: the help screen on a proxy says what the view does and
// that q and ctrl+c detach.
func TestAttachHelp(t *testing.T) {
	for _, size := range []struct{ w, h int }{{120, 35}, {80, 24}} {
		hello := attachHello{Proxy: "demo", Command: "inflight demo-server", Started: t0, LateWindow: "5s"}
		h := newAttachHarness(t, size.w, size.h, hello, t0.Add(time.Second))
		h.key("?")
		s := h.screen()
		for _, want := range []string{"watches the proxy demo", "q      detach", "ctrl+c detach"} {
			if !strings.Contains(s, want) {
				t.Errorf("%dx%d help lacks %q:\n%s", size.w, size.h, want, s)
			}
		}
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) { h.t = t; h.golden() })
	}
}

// TestAttachHelpHTTP: on an HTTP proxy the help says how the host cancels
// there (the stream closed, modern; notifications/cancelled, legacy), and
// what is flagged, before the host's first message and after it.
func TestAttachHelpHTTP(t *testing.T) {
	for _, size := range []struct{ w, h int }{{120, 35}, {80, 24}} {
		hello := attachHello{Proxy: "demo-http", Command: "http://127.0.0.1:8931 → http://127.0.0.1:9000/mcp", Started: t0, LateWindow: "5s", Transport: "http"}
		h := newAttachHarness(t, size.w, size.h, hello, t0.Add(time.Second))
		h.key("?")
		s := h.screen()
		for _, want := range []string{"· http ", "On HTTP the host cancels by closing its request's stream", "with notifications/cancelled (legacy)", "a legacy stream closed and not resumed"} {
			if !strings.Contains(s, want) {
				t.Errorf("%dx%d help lacks %q:\n%s", size.w, size.h, want, s)
			}
		}
		if strings.Contains(s, "stdio") {
			t.Errorf("%dx%d help on an HTTP proxy says stdio:\n%s", size.w, size.h, s)
		}
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) { h.t = t; h.golden() })
	}
}

// TestAttachHistoryCut: a proxy whose history was cut streams answers to
// requests begun before it; the view leaves them out (and the proxy's
// flags about unknown IDs uncompared), says why, and shows the rest.
func TestAttachHistoryCut(t *testing.T) {
	hello := attachHello{Proxy: "cut", Command: "server", Started: t0, LateWindow: "5s"}
	hs := &harness{t: t, now: t0.Add(time.Minute)}
	m, err := New(Options{Target: "attach cut", Transport: "stdio", Now: func() time.Time { return hs.now }, Dark: true,
		Attach: &Attach{Proxy: source.Proxy{Name: hello.Proxy, Command: hello.Command, Start: hello.Started, HistoryCut: true}}, Source: streamEnded{}})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	m.conn.waitItems = func(<-chan source.Item, int) tea.Cmd { return nil }
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(m.status.text, "requests begun before them are not shown") {
		t.Errorf("status %q", m.status.text)
	}
	hs.sendRecords(attachMsg{recs: []trace.Record{
		hostRecord(50000, trace.DirIn, "server", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"old","progress":5}}`),
		hostRecord(50001, trace.DirIn, "server", `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`),
		hostRecord(50001, trace.DirOut, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`),
		hostRecord(50002, trace.DirOut, "host", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{}}}`),
		hostRecord(50003, trace.DirIn, "server", `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`),
	}})
	if n := m.tracker.Violations().Total(); n != 0 {
		t.Errorf("%d violations for answers to requests of the cut history", n)
	}
	if r := hs.request(4); r.State != session.StateCompleted {
		t.Errorf("the request within the history: %s", r.State)
	}
	if m.Disagreements() != 0 {
		t.Errorf("disagreements: %s", m.feed.lastDisagreement)
	}
}

// What the HTTP proxy streams for inflight's own modern cancel (a z key, or
// a cancel rule: the lines below are a real proxy's), fed to the view: its
// cancel_sent (stream_closed, by inflight) is the user's cancel, as the
// proxy's tracker has it, and its stream_closed (by inflight, byClient)
// settles it; neither is the host closing its stream. The view agrees with
// the proxy (cancelled, by the user), and says nothing of the host's cancel.
// (A review's finding: it took the closure for the host's, and the row
// stayed cancelling.)
func TestAttachInflightsModernCancelIsNotTheHosts(t *testing.T) {
	lines := []string{
		`{"ms":4.56,"dir":"out","by":"host","id":9,"msg":{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"gone","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}`,
		`{"ms":4.56,"dir":"local","id":9,"event":"state","state":"pending","method":"tools/call","target":"gone"}`,
		`{"ms":4.56,"dir":"local","event":"connected","transport":"http","era":"modern","protocolVersion":"2026-07-28"}`,
		`{"ms":4.56,"dir":"local","id":9,"event":"injected","text":"rule \"tools/call gone: cancel 50ms\" matches tools/call gone (id 9)","code":"matched","injected":"cancel 50ms"}`,
		`{"ms":55.025,"dir":"local","id":9,"event":"state","reason":"cancelled by inflight proxy (rule \"tools/call gone: cancel 50ms\")","state":"cancel_requested","from":"pending","method":"tools/call","target":"gone"}`,
		`{"ms":55.025,"dir":"out","by":"inflight","id":9,"event":"cancel_sent","signal":"stream_closed","reason":"cancelled by inflight proxy (rule \"tools/call gone: cancel 50ms\")","injected":"cancel 50ms"}`,
		`{"ms":55.025,"dir":"local","by":"inflight","id":9,"event":"stream_closed","byClient":true,"injected":"cancel 50ms"}`,
		`{"ms":55.025,"dir":"local","id":9,"event":"state","state":"cancelled","from":"cancel_requested","method":"tools/call","target":"gone"}`,
		`{"ms":55.025,"dir":"local","id":9,"event":"injected","text":"closed the upstream request of tools/call gone (id 9) (the modern cancel), 50.465ms after it, and answered the host with error -32800","code":"cancelled","injected":"cancel 50ms"}`,
	}
	var recs []trace.Record
	for _, l := range lines {
		var rec trace.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	hello := attachHello{Proxy: "demo-http", Command: "http://127.0.0.1:1 → up", Started: t0, LateWindow: "5s"}
	h := newAttachHarness(t, 120, 35, hello, t0)
	h.feedUntil(t0, recs, 200)
	r, ok := h.m.tracker.Get(wire.IntID(9))
	if !ok || r.Cancel == nil {
		t.Fatalf("#9: %+v", r)
	}
	if r.State != session.StateCancelled || r.Cancel.Cause != session.CauseUser {
		t.Errorf("the view has #9 cancelled by %v (%s); the proxy by the user (inflight's cancel)\n%s", r.Cancel.Cause, r.State, h.screen())
	}
	if s := h.screen(); strings.Contains(s, "host sent") || strings.Contains(s, "host cancelled") {
		t.Errorf("the view says the host cancelled #9:\n%s", s)
	}
	if n := h.m.Disagreements(); n != 0 {
		t.Errorf("the view disagrees with the proxy %d times (%s)", n, h.m.feed.lastDisagreement)
	}
}

// TestAttachStringHostIDs: a host that sends string IDs ("inflight-1", as
// inflight call and many SDKs do) gets an ID column wide enough for them
// (12 cells at 120 columns), and, where they are longer (or the terminal
// narrower: 8 cells below 100), their tails, which tell them apart: no two
// rows read alike. Integer IDs keep their narrow column. Goldens at 80x24
// and 120x35.
func TestAttachStringHostIDs(t *testing.T) {
	ids := []string{`"inflight-1"`, `"inflight-2"`, `"inflight-9"`, `"inflight-10"`, `"inflight-11"`, `"inflight-12"`}
	for _, size := range []struct{ w, h int }{{120, 35}, {80, 24}} {
		hello := attachHello{Proxy: "demo", Command: "inflight demo-server", Started: t0, LateWindow: "5s"}
		h := newAttachHarness(t, size.w, size.h, hello, t0)
		recs := []trace.Record{{MS: 0.5, Dir: trace.DirLocal, Event: trace.EventConnected, Transport: "stdio", Era: "modern", ProtocolVersion: "2026-07-28", Server: "demo 1"}}
		for i, id := range ids {
			ms := float64(1 + 2*i)
			recs = append(recs, hostRecord(ms, trace.DirOut, "host", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
			if i < 4 {
				recs = append(recs, hostRecord(ms+1, trace.DirIn, "server", `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`))
			}
		}
		h.feedUntil(t0, recs, 100)
		s := h.screen()
		seen := map[string]bool{}
		for _, line := range strings.Split(s, "\n") {
			if !strings.Contains(line, "⇄ slow") {
				continue
			}
			cell := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(line, "⇄", 2)[0], "▌"))
			if seen[cell] {
				t.Errorf("%dx%d: two rows read %q in the ID column:\n%s", size.w, size.h, cell, s)
			}
			seen[cell] = true
		}
		if len(seen) != len(ids) {
			t.Errorf("%dx%d: %d rows of the host's calls, want %d:\n%s", size.w, size.h, len(seen), len(ids), s)
		}
		for _, want := range map[int][]string{120: {`"inflight-1" ⇄`, `…nflight-12" ⇄`}, 80: {`…ight-1" ⇄`, `…ght-12" ⇄`}}[size.w] {
			if !strings.Contains(s, want) {
				t.Errorf("%dx%d: the list lacks %q:\n%s", size.w, size.h, want, s)
			}
		}
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) { h.t = t; h.golden() })
	}
}

// What came after a host's cancel is said as the proxy saw it: forwarded
// to the host (the wire requires it), not "ignored" — whether the host
// ignored it, the proxy cannot see. inflight's own requests keep "ignored".
func TestLateFateIsWhatWasSeen(t *testing.T) {
	host := &session.Request{ByHost: true}
	own := &session.Request{}
	if look.LateFate(host) != "forwarded to the host" || look.LateFateShort(host) != "forwarded" {
		t.Errorf("a host's late response: %q / %q", look.LateFate(host), look.LateFateShort(host))
	}
	if look.LateFate(own) != "ignored" || look.LateFateShort(own) != "ignored" {
		t.Errorf("inflight's own late response: %q / %q", look.LateFate(own), look.LateFateShort(own))
	}
}
