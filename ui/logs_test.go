package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// newLogHarness is newHarness as the TUI runs with --log-level level; caps
// are the server's capabilities.
func newLogHarness(t testing.TB, w, h int, era event.Era, level, caps string) *harness {
	t.Helper()
	hs := &harness{t: t, fake: newFake(), now: t0}
	if era == event.EraLegacy {
		hs.fake.info.Era, hs.fake.info.ProtocolVersion = event.EraLegacy, wire.Version20251125
	}
	hs.fake.info.Capabilities = []byte(caps)
	m, err := New(Options{
		Target: "demo (stdio)", Transport: "stdio",
		Dial:     func() (Client, error) { return hs.fake, nil },
		Tracker:  session.DefaultConfig(),
		Now:      func() time.Time { return hs.now },
		Dark:     true,
		LogLevel: level,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	m.conn.wait = func(<-chan event.Event, int) tea.Cmd { return nil }
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// logLine delivers a notifications/message, on id's stream when id is
// not zero (modern HTTP), else as stdio carries it.
func (h *harness) logLine(id int64, level, logger, data string) {
	h.t.Helper()
	p := map[string]any{"level": level, "data": json.RawMessage(data)}
	if logger != "" {
		p["logger"] = logger
	}
	params, _ := json.Marshal(p)
	raw := wire.Notification(wire.NotifyMessage, params)
	msg, _ := wire.Decode(raw)
	ev := event.Event{Kind: event.Received, Raw: raw, Msg: msg}
	if id != 0 {
		ev.RequestID = wire.IntID(id)
	}
	h.events(ev)
}

// composeSlow sends the demo's slow tool from the composer with the log
// level field set to level ("" leaves it as it is).
func composeSlow(h *harness, level string) {
	h.t.Helper()
	h.key("n", "enter")
	if level != "" {
		for range 6 { // seconds, steps, timeout, late window, reset, max timeout
			h.key("tab")
		}
		h.typeText(level)
	}
	h.key("enter")
}

func sentMethods(h *harness) []string {
	h.fake.mu.Lock()
	defer h.fake.mu.Unlock()
	var out []string
	for _, r := range h.fake.sent {
		out = append(out, r.Method)
	}
	return out
}

func metaLevel(t *testing.T, p map[string]any) any {
	t.Helper()
	meta, _ := p["_meta"].(map[string]any)
	return meta[wire.MetaLogLevel]
}

func TestLogsModernLevelIsPerRequest(t *testing.T) {
	h := newLogHarness(t, 120, 35, event.EraModern, "info", `{"tools":{}}`)
	h.connect()
	composeSlow(h, "")
	if _, p := lastSent(t, h); metaLevel(t, p) != "info" {
		t.Fatalf("the --log-level default is not in the request's _meta: %v", p)
	}
	composeSlow(h, "debug")
	if _, p := lastSent(t, h); metaLevel(t, p) != "debug" {
		t.Fatalf("the composer's level is not in the request's _meta: %v", p)
	}
	// The level typed becomes the next request's default.
	composeSlow(h, "")
	if _, p := lastSent(t, h); metaLevel(t, p) != "debug" {
		t.Fatalf("the last level is not the next default: %v", p)
	}
	composeSlow(h, "none")
	if _, p := lastSent(t, h); metaLevel(t, p) != nil {
		t.Fatalf("none still asks for logs: %v", p)
	}
	for _, m := range sentMethods(h) {
		if m == wire.MethodLoggingSetLevel {
			t.Fatal("logging/setLevel sent in the modern era")
		}
	}
}

func TestLogsComposerRefusesAnUnknownLevel(t *testing.T) {
	h := newLogHarness(t, 120, 35, event.EraModern, "info", `{}`)
	h.connect()
	n := len(sentMethods(h))
	composeSlow(h, "loud")
	if len(sentMethods(h)) != n {
		t.Fatal("a request with an unknown log level was sent")
	}
	if !strings.Contains(h.screen(), `log level: "loud" is not one of debug, info`) {
		t.Fatalf("no clear error:\n%s", h.screen())
	}
}

func TestLogsLegacySetLevelOnConnectAndOnChange(t *testing.T) {
	h := newLogHarness(t, 120, 35, event.EraLegacy, "info", `{"logging":{},"tools":{}}`)
	h.connect()
	got := sentMethods(h)
	if len(got) != 2 || got[0] != wire.MethodLoggingSetLevel || got[1] != wire.MethodToolsList {
		t.Fatalf("sent %v, want logging/setLevel, then tools/list, on connecting", got)
	}
	if p := string(h.fake.sent[0].Params); p != `{"level":"info"}` {
		t.Fatalf("setLevel params %s", p)
	}
	composeSlow(h, "")
	composeSlow(h, "warning")
	got = sentMethods(h)
	want := []string{wire.MethodLoggingSetLevel, wire.MethodToolsList, wire.MethodToolsCall, wire.MethodLoggingSetLevel, wire.MethodToolsCall}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sent %v, want %v: setLevel only when the level changes, before the request", got, want)
	}
	if p := string(h.fake.sent[3].Params); p != `{"level":"warning"}` {
		t.Fatalf("setLevel params %s", p)
	}
	if _, p := lastSent(t, h); p["_meta"] != nil && metaLevel(t, p) != nil {
		t.Fatalf("a legacy request carries the modern logLevel: %v", p)
	}
}

func TestLogsLegacyNoSetLevelWithoutTheCapability(t *testing.T) {
	h := newLogHarness(t, 120, 35, event.EraLegacy, "info", `{"tools":{}}`)
	h.connect()
	composeSlow(h, "debug")
	for _, m := range sentMethods(h) {
		if m == wire.MethodLoggingSetLevel {
			t.Fatal("logging/setLevel sent to a server without the logging capability")
		}
	}
}

func TestLogsCountedOnTheRowAndListedInTheDetail(t *testing.T) {
	h := newLogHarness(t, 120, 35, event.EraModern, "info", `{"tools":{}}`)
	h.connect()
	composeSlow(h, "")
	id, _ := h.m.screens.list.Selected().Int()
	h.sentEvent(id)
	h.advance(100 * time.Millisecond)
	h.logLine(id, "info", "slow", `"step 1"`)
	h.logLine(id, "debug", "slow", `"step 2"`)
	h.advance(100 * time.Millisecond)
	h.logLine(id, "error", "", `{"e":"boom \u001b[2J"}`)
	if !strings.Contains(h.screen(), "3 logs") {
		t.Fatalf("the row does not count its logs:\n%s", h.screen())
	}
	if r := h.request(id); r.Violations != 0 {
		t.Fatalf("a request that asked for logs has %d violations", r.Violations)
	}
	h.key("enter")
	s := h.screen()
	for _, want := range []string{"LOGS (3 lines, asked at info)", "+0.1s   info      slow  \"step 1\"", "debug", `{"e":"boom`, "≡ 3 logs +0.1s…+0.2s"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the detail lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(h.m.View().Content, "\x1b[2J") {
		t.Fatal("a log line's escape reached the terminal")
	}
}

func TestLogsUnrequestedIsFlaggedOnTheRow(t *testing.T) {
	h := newLogHarness(t, 120, 60, event.EraModern, "", `{"tools":{}}`)
	h.connect()
	composeSlow(h, "")
	id, _ := h.m.screens.list.Selected().Int()
	h.sentEvent(id)
	h.logLine(id, "info", "", `"unasked"`)
	h.answer(id, `{"resultType":"complete","content":[]}`)
	if !strings.Contains(h.screen(), "⚠ 1 violation") {
		t.Fatalf("the unrequested log is not flagged on the row:\n%s", h.screen())
	}
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "⚠ "+session.ViolationLogNotRequested) || !strings.Contains(s, "LOGS (1 line; the request asked for none)") {
		t.Fatalf("the detail does not show the violation and the line:\n%s", s)
	}
}

func TestTimelineMarksTheRounds(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	h.waitingConfirm()
	h.advance(2 * time.Second)
	h.key("a", "space", "enter")
	nid, _ := h.lastRound()
	n, _ := nid.Int()
	h.sentEvent(n)
	h.advance(300 * time.Millisecond)
	h.answer(n, `{"resultType":"complete","content":[]}`)
	h.key("enter")
	s := h.screen()
	for _, want := range []string{"? #2 asked +0.2s", fmt.Sprintf("↻ round 2 #%d +2.2s", n), "completed +2.5s"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the timeline lacks %q:\n%s", want, s)
		}
	}
}

func TestGoldenViewsLogs(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		build := func(t *testing.T) *harness {
			h := newLogHarness(t, size.w, size.h, event.EraModern, "info", `{"tools":{}}`)
			h.connect()
			composeSlow(h, "")
			id, _ := h.m.screens.list.Selected().Int()
			h.sentEvent(id)
			h.advance(100 * time.Millisecond)
			h.logLine(id, "info", "slow", `"step 1 of 3"`)
			h.advance(400 * time.Millisecond)
			h.logLine(id, "warning", "slow", `{"step":2,"note":"halfway"}`)
			h.advance(500 * time.Millisecond)
			h.logLine(id, "info", "", `"step 3 of 3"`)
			h.advance(200 * time.Millisecond)
			h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"slow finished"}]}`)
			return h
		}
		t.Run("row-"+suffix, func(t *testing.T) {
			build(t).golden()
		})
		t.Run("detail-"+suffix, func(t *testing.T) {
			h := build(t)
			h.key("enter")
			h.golden()
		})
	}
}

// A long result is cut short for the count on a wide row; a narrow row
// keeps the result.
func TestLogsCountBesideALongResult(t *testing.T) {
	for _, w := range []int{120, 80} {
		h := newLogHarness(t, w, 24, event.EraModern, "info", `{}`)
		h.connect()
		composeSlow(h, "")
		id, _ := h.m.screens.list.Selected().Int()
		h.sentEvent(id)
		h.logLine(id, "info", "", `"one"`)
		h.logLine(id, "info", "", `"two"`)
		h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"`+strings.Repeat("a long result ", 20)+`"}]}`)
		row := ""
		for _, l := range strings.Split(h.screen(), "\n") {
			if strings.Contains(l, "slow ") {
				row = l
			}
		}
		if has := strings.Contains(row, "2 logs"); has != (w == 120) {
			t.Errorf("at %d columns the row says %q", w, row)
		}
		if !strings.Contains(row, "a long result") {
			t.Errorf("at %d columns the result is gone: %q", w, row)
		}
	}
}

func TestGoldenViewsLegacyTimeline(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		t.Run(fmt.Sprintf("detail-%dx%d", size.w, size.h), func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraLegacy)
			id := h.sendTool("confirm")
			h.advance(300 * time.Millisecond)
			h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
			h.advance(2 * time.Second)
			h.key("enter", "space", "enter")
			raw := wire.ResultResponse(wire.IntID(7), json.RawMessage(`{"action":"accept","content":{"confirm":true}}`))
			msg, _ := wire.Decode(raw)
			h.events(event.Event{Kind: event.Sent, RequestID: wire.IntID(7), Raw: raw, Msg: msg, Internal: true})
			h.advance(500 * time.Millisecond)
			h.logLine(0, "info", "confirm", `"deleted 3 files"`)
			h.advance(200 * time.Millisecond)
			h.answer(id, `{"content":[{"type":"text","text":"deleted 3 files"}]}`)
			h.key("enter")
			s := h.screen()
			for _, want := range []string{"↘ elicitation +0.3s", "↗ answered +2.3s", "≡ 1 log +2.8s"} {
				if !strings.Contains(s, want) {
					t.Errorf("the timeline lacks %q", want)
				}
			}
			h.golden()
		})
	}
}

// TestLogsUntiedAreSaidInTheDetail: with two requests in flight on stdio
// and a line that names neither, the detail says lines came untied (with
// their count), never "none yet".
func TestLogsUntiedAreSaidInTheDetail(t *testing.T) {
	h := newLogHarness(t, 160, 50, event.EraModern, "info", `{"tools":{}}`)
	h.connect()
	composeSlow(h, "")
	first, _ := h.m.screens.list.Selected().Int()
	h.sentEvent(first)
	composeSlow(h, "")
	second, _ := h.m.screens.list.Selected().Int()
	h.sentEvent(second)
	h.logLine(0, "info", "", `"step 1"`)
	h.logLine(0, "info", "", `"step 2"`)
	h.key("enter")
	s := h.screen()
	if !strings.Contains(s, "LOGS (0 lines, asked at info)") || !strings.Contains(s, "none tied to it: 2 lines untied") || strings.Contains(s, "none yet") {
		t.Fatalf("the detail does not say the lines came untied:\n%s", s)
	}
}

// A line that names no request, coming while two are in flight, is in the
// protocol log only; each request's detail, with a line of its own, says
// in its LOGS heading that one more came untied meanwhile. One sent after
// the line came does not count it.
func TestLogsUntiedCountedBesideTiedOnes(t *testing.T) {
	h := newLogHarness(t, 160, 50, event.EraModern, "info", `{"tools":{}}`)
	h.connect()
	composeSlow(h, "")
	first, _ := h.m.screens.list.Selected().Int()
	h.sentEvent(first)
	composeSlow(h, "")
	second, _ := h.m.screens.list.Selected().Int()
	h.sentEvent(second)
	h.logLine(first, "info", "", `"first's own"`)
	h.logLine(second, "info", "", `"second's own"`)
	h.logLine(0, "info", "", `"whose?"`)
	h.now = h.now.Add(time.Second)
	composeSlow(h, "")
	third, _ := h.m.screens.list.Selected().Int()
	h.sentEvent(third)
	h.logLine(third, "info", "", `"third's own"`)
	for _, id := range []int64{first, second} {
		h.m.screens.list = h.m.screens.list.Select(wire.IntID(id), false)
		h.key("enter")
		s := h.screen()
		if !strings.Contains(s, "LOGS (1 line, asked at info; 1 line tied to no request came while it was in flight, the protocol log has it)") {
			t.Errorf("#%d: the LOGS heading does not count the untied line:\n%s", id, s)
		}
		h.key("esc")
	}
	h.m.screens.list = h.m.screens.list.Select(wire.IntID(third), false)
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "LOGS (1 line, asked at info)") {
		t.Errorf("#%d, sent after the untied line, counts it:\n%s", third, s)
	}
}
