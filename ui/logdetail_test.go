package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/logview"
	"inflight/wire"
)

// stubbornScene is the demo's stubborn tool cancelled at +0.5s: it goes on
// sending progress, eight notifications spread over 7s, then its result.
func stubbornScene(t *testing.T, w, hgt int) (*harness, int64) {
	h := newHarness(t, w, hgt)
	h.connect()
	id := h.sendTool("stubborn")
	h.progress(id, 1, 10, "step 1 of 10")
	h.advance(500 * time.Millisecond)
	h.run(h.m.cancel(wire.IntID(id), "user requested cancellation", 1))
	h.cancelSent(id, event.SignalNotification)
	for i := 2; i <= 9; i++ {
		h.advance(900 * time.Millisecond)
		h.progress(id, float64(i), 10, fmt.Sprintf("step %d of 10", i))
	}
	h.advance(300 * time.Millisecond)
	h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"stubborn finished 10 steps"}]}`)
	return h, id
}

// listenScene is a subscription that has listened for 14s and received
// three updates.
func listenScene(t *testing.T, w, hgt int) *harness {
	h := newHarness(t, w, hgt)
	h.connect()
	h.run(h.m.send(wire.MethodSubscriptionsListen, json.RawMessage(`{"notifications":{"resourceSubscriptions":["demo://clock"]}}`), sessionDefaults()))
	r := h.m.tracker.At(h.m.tracker.Len() - 1)
	lid, _ := r.ID.Int()
	raw := wire.Request(r.ID, wire.MethodSubscriptionsListen, json.RawMessage(`{"notifications":{"resourceSubscriptions":["demo://clock"]}}`))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: r.ID, Raw: raw, Msg: msg})
	notify := func(method, params string) {
		raw := wire.Notification(method, json.RawMessage(params))
		m, _ := wire.Decode(raw)
		h.events(event.Event{Kind: event.Received, Raw: raw, Msg: m})
	}
	meta := fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/subscriptionId":%d}`, lid)
	h.advance(100 * time.Millisecond)
	notify(wire.NotifySubscriptionAck, `{`+meta+`}`)
	for i := 0; i < 3; i++ {
		h.advance(4 * time.Second)
		notify(wire.NotifyResourceUpdated, `{`+meta+`,"uri":"demo://clock"}`)
	}
	h.advance(1900 * time.Millisecond)
	return h
}

func TestGoldenViewsLogAndDetail(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run("log-late-"+suffix, func(t *testing.T) {
			h, _ := stubbornScene(t, size.w, size.h)
			h.key("l")
			h.golden()
		})
		t.Run("log-entry-late-"+suffix, func(t *testing.T) {
			h, _ := stubbornScene(t, size.w, size.h)
			h.key("l", "up", "up", "enter")
			h.golden()
		})
		t.Run("log-filter-running-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.key("l", "/")
			h.typeText("running")
			h.golden()
		})
		t.Run("detail-spread-"+suffix, func(t *testing.T) {
			h, _ := stubbornScene(t, size.w, size.h)
			h.key("enter")
			h.golden()
		})
		t.Run("detail-failed-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.m.screens.list = h.m.screens.list.Select(wire.IntID(4), false)
			h.key("enter")
			h.golden()
		})
		t.Run("detail-listen-"+suffix, func(t *testing.T) {
			h := listenScene(t, size.w, size.h)
			h.key("enter")
			h.golden()
		})
		t.Run("stderr-wrapped-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.stderr("panic: " + strings.Repeat("a long line the server wrote ", 8) + "THE END")
			h.key("s")
			h.golden()
		})
		t.Run("help-entry-cut-"+suffix, func(t *testing.T) {
			h, _ := stubbornScene(t, size.w, size.h)
			h.key("l", "up", "enter", "w", "?")
			h.golden()
		})
		t.Run("stderr-cut-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.stderr("panic: " + strings.Repeat("a long line the server wrote ", 8) + "THE END")
			h.key("s", "w", "right", "right")
			h.golden()
		})
	}
}

// The filter matches what the rows show: /running finds the state rows
// that say "pending → running", /in the rows that came in.
func TestLogFilterMatchesTheRow(t *testing.T) {
	h := everyState(t, 120, 35)
	h.key("l", "/")
	h.typeText("running")
	shown := h.m.screens.logv.Shown(h.m.env())
	if len(shown) == 0 {
		t.Fatal("/running matched nothing")
	}
	lg := h.m.tracker.Log()
	first := lg.Total() - int64(lg.Len())
	states := 0
	for _, abs := range shown {
		if lg.At(int(abs - first)).IsState {
			states++
		}
	}
	if states == 0 {
		t.Errorf("/running matched %d rows, none a state row", len(shown))
	}
	if !strings.Contains(h.screen(), "pending → running") {
		t.Errorf("the filtered log does not show the state rows:\n%s", h.screen())
	}
	h.key("esc", "/")
	h.typeText("← in")
	for _, abs := range h.m.screens.logv.Shown(h.m.env()) {
		if e := lg.At(int(abs - first)); e.Dir != event.DirIn && !strings.Contains(strings.ToLower(string(e.Raw)), "← in") {
			t.Errorf("/← in matched an entry going %s", e.Dir)
		}
	}
	if len(h.m.screens.logv.Shown(h.m.env())) == 0 {
		t.Error("/← in matched nothing")
	}
	// A narrower needle searches the matches, a new one the whole log.
	h.key("esc", "/")
	h.typeText("late")
	late := len(h.m.screens.logv.Shown(h.m.env()))
	h.typeText(" +")
	if n := len(h.m.screens.logv.Shown(h.m.env())); n == 0 || n > late {
		t.Errorf("/late + matched %d, /late %d", n, late)
	}
	if !strings.Contains(logview.FilterPlaceholder, "direction") {
		t.Errorf("the placeholder does not say what it matches: %q", logview.FilterPlaceholder)
	}
}

// A filter follows the log as it grows.
func TestLogFilterSeesNewEntries(t *testing.T) {
	h := everyState(t, 120, 35)
	h.key("l", "/")
	h.typeText("step 10 of 10")
	if n := len(h.m.screens.logv.Shown(h.m.env())); n != 0 {
		t.Fatalf("matched %d before it came", n)
	}
	h.progress(10, 10, 10, "step 10 of 10")
	if n := len(h.m.screens.logv.Shown(h.m.env())); n != 1 {
		t.Errorf("matched %d after it came, want 1", n)
	}
}

// The entry view offers only the keys that act there, and keys it does
// not use reach the global ones rather than vanish.
func TestEntryViewKeys(t *testing.T) {
	h, _ := stubbornScene(t, 80, 24)
	h.key("l", "up", "enter")
	if !h.m.screens.logv.EntryOpen() {
		t.Fatal("enter did not open the entry")
	}
	foot := h.screen()[strings.LastIndex(h.screen(), "\n"):]
	for _, dead := range []string{"filter", "open entry"} {
		if strings.Contains(foot, dead) {
			t.Errorf("the entry view's footer offers %q: %s", dead, foot)
		}
	}
	if !strings.Contains(foot, "w don't wrap") {
		t.Errorf("the footer does not offer w: %s", foot)
	}
	h.key("/", "enter")
	if h.m.screens.logv.Filtering() || !h.m.screens.logv.EntryOpen() {
		t.Error("/ or enter acted in the entry view")
	}
	h.key("?")
	if h.m.focus.mode != keymap.ModeHelp || strings.Contains(h.screen(), "open entry") || strings.Contains(h.screen(), "/ filter") {
		t.Errorf("help in the entry view (mode %v) lists the log's keys:\n%s", h.m.focus.mode, h.screen())
	}
	h.key("esc")
	h.key("w")
	if !h.m.pager.chop || !strings.Contains(h.screen(), "←/→ scroll") {
		t.Errorf("w did not cut long lines:\n%s", h.screen())
	}
	h.key("w")
	if h.m.pager.chop {
		t.Error("a second w did not wrap them again")
	}
	h.key("esc")
	if h.m.screens.logv.EntryOpen() || h.m.focus.mode != keymap.ModeLog {
		t.Error("esc did not go back to the log")
	}
}

// The entry view says the entry was late, as the tracker judged it.
func TestEntryViewSaysLate(t *testing.T) {
	h, _ := stubbornScene(t, 120, 35)
	h.key("l", "up", "up", "enter")
	s := h.screen()
	if !strings.Contains(s, "⚑ late +") || !strings.Contains(s, "after the cancel") || !strings.Contains(s, `"progress": 8`) {
		t.Errorf("the entry view does not say it was late:\n%s", s)
	}
}

func wheel(b tea.MouseButton) tea.MouseWheelMsg { return tea.MouseWheelMsg{Button: b} }

// The wheel scrolls the log, the entry, the detail and stderr.
func TestWheelScrolls(t *testing.T) {
	h, _ := stubbornScene(t, 80, 12)
	h.key("l")
	h.send(wheel(tea.MouseWheelUp))
	if h.m.screens.logv.Following() {
		t.Error("the wheel did not scroll the log")
	}
	sel, _ := h.m.screens.logv.Selected(h.m.env())
	h.send(wheel(tea.MouseWheelDown))
	if now, _ := h.m.screens.logv.Selected(h.m.env()); now <= sel {
		t.Error("the wheel down did not move down the log")
	}
	h.key("enter")
	h.send(wheel(tea.MouseWheelDown))
	if h.m.screens.logv.EntryOffset() == 0 {
		t.Error("the wheel did not scroll the entry")
	}
	h.key("esc", "esc", "enter")
	// At 12 lines the body shows less than a line of what it holds: the
	// detail drawn taller shows where its viewport is scrolled to.
	tall := func() string { return h.m.screens.detail.View(h.m.env(), h.m.size.width, 30) }
	before := tall()
	h.send(wheel(tea.MouseWheelDown))
	if tall() == before {
		t.Error("the wheel did not scroll the detail")
	}
	h.key("esc")
	for i := 0; i < 30; i++ {
		h.stderr(fmt.Sprintf("line %d", i))
	}
	h.key("s")
	h.send(wheel(tea.MouseWheelUp))
	if h.m.screens.stderrv.Following() {
		t.Error("the wheel did not scroll stderr")
	}
}

// Each late progress is placed at its time: eight spread over 7s are
// eight marks, not one glued to the end.
func TestTimelineSpreadsLateProgress(t *testing.T) {
	h, id := stubbornScene(t, 120, 35)
	h.key("enter")
	r := h.request(id)
	// The bar is under the title, the facts and the cancel's two lines.
	bar := detailBar(h, r, 120)
	if n := strings.Count(bar, "*"); n != 8 {
		t.Errorf("the bar has %d late marks, want 8: %s", n, bar)
	}
	// At 30 columns they crowd: cells that hold several show their count.
	narrow := detailBar(h, r, 30)
	marks := 0
	for _, c := range narrow {
		switch {
		case c == '*':
			marks++
		case c >= '2' && c <= '9':
			marks += int(c - '0')
		}
	}
	if marks != 8 {
		t.Errorf("the narrow bar counts %d late marks, want 8: %s", marks, narrow)
	}
}

// detailBar is the timeline's bar as the detail of r draws it width cells
// wide.
func detailBar(h *harness, r *session.Request, width int) string {
	h.t.Helper()
	if h.m.screens.detail.ID() != r.ID {
		h.t.Fatalf("the detail shows %s, not %s", h.m.screens.detail.ID(), r.ID)
	}
	lines := strings.Split(ansi.Strip(h.m.screens.detail.View(h.m.env(), width, h.m.chrome().bodyHeight(h.m.size.height))), "\n")
	if len(lines) < 5 {
		h.t.Fatalf("the detail has no timeline:\n%s", strings.Join(lines, "\n"))
	}
	// The bar follows the header, whose facts may wrap onto a second
	// row: it is the first line drawn with the bar's rule.
	for _, l := range lines {
		if strings.HasPrefix(l, "  ") && strings.Contains(l, "─") {
			return l
		}
	}
	h.t.Fatalf("the detail has no timeline:\n%s", strings.Join(lines, "\n"))
	return ""
}

// A failed request's detail says why; a subscription's does not claim a
// timeout it no longer has, and lists its updates.
func TestDetailHeaderFacts(t *testing.T) {
	h := everyState(t, 120, 35)
	h.m.screens.list = h.m.screens.list.Select(wire.IntID(4), false)
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "✗ error -32603 the demo tool failed on purpose") {
		t.Errorf("the failed request's detail has no error:\n%s", s)
	}
	h.key("esc")
	h.m.screens.list = h.m.screens.list.Select(wire.IntID(5), h.m.screens.list.Following())
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, `✗ tool error "failed on purpose"`) {
		t.Errorf("the tool error's detail has no error:\n%s", s)
	}

	l := listenScene(t, 120, 35)
	l.key("enter")
	s := l.screen()
	if strings.Contains(s, "timeout 5") || strings.Contains(s, "timeout 1m") || !strings.Contains(s, "acknowledged +0.1s (no timeout since)") {
		t.Errorf("the subscription's detail claims a timeout:\n%s", s)
	}
	if !strings.Contains(s, "UPDATES (3 received)") || strings.Count(s, "resource updated demo://clock") != 3 {
		t.Errorf("the subscription's detail does not list its updates:\n%s", s)
	}
}

// Totals print as integers.
func TestDetailPrintsIntegers(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := h.sendTool("slow")
	h.progress(id, 521367, 1e6, "")
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "last 521367/1000000") {
		t.Errorf("the detail does not print the integers:\n%s", s)
	}
	h.key("l")
	if s := h.screen(); !strings.Contains(s, "progress 521367/1000000") {
		t.Errorf("the log does not print the integers:\n%s", s)
	}
}

// Crossed traffic is marked in the neutral colour, never flagged.
func TestLogMarksCrossedNeutral(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.events(event.Event{Kind: event.RoundTrip, RTT: 20 * time.Millisecond, Text: "ping"})
	id := h.sendTool("slow")
	h.run(h.m.cancel(wire.IntID(id), "user requested cancellation", 1))
	h.cancelSent(id, event.SignalNotification)
	h.now = h.now.Add(time.Millisecond)
	h.progress(id, 1, 10, "step 1 of 10")
	h.key("l")
	lg := h.m.tracker.Log()
	e := lg.At(lg.Len() - 1)
	if e.Verdict != "crossed" {
		t.Fatalf("the tracker's verdict is %q", e.Verdict)
	}
	// The log follows its newest entry, e: its row is the last drawn (at
	// 120 columns the WHAT column is 27 wide).
	rows := strings.Split(strings.TrimRight(h.m.screens.logv.View(h.m.env(), 120, h.m.chrome().bodyHeight(h.m.size.height)), "\n"), "\n")
	line := rows[len(rows)-1]
	if !strings.Contains(ansi.Strip(line), "crossed the cancel +1ms") || strings.Contains(line, "⚑") {
		t.Errorf("the crossed row: %q", ansi.Strip(line))
	}
	if want := h.m.theme.styles.Dim.Render("crossed the cancel +1ms"); !strings.Contains(line, strings.TrimSuffix(want, "\x1b[m")) {
		t.Errorf("the crossed mark is not in the neutral style: %q", line)
	}
}

// The log draws inflight's note of a cancel as local (the
// notifications/cancelled it sent is the → out row before it), without
// repeating the reason that row carries, and a round trip row shows what
// was timed and how long it took.
func TestLogCancelNoteAndRoundTrip(t *testing.T) {
	for _, w := range []int{120, 80} {
		h, _ := stubbornScene(t, w, 35)
		h.events(event.Event{Kind: event.RoundTrip, Internal: true, RTT: 3200 * time.Microsecond, Text: "server/discover"})
		h.key("l")
		var cancelRow, rttRow string
		for _, l := range strings.Split(h.screen(), "\n") {
			switch {
			case strings.Contains(l, " cancel ") && !strings.Contains(l, "notifications/cancelled 2"):
				cancelRow = l
			case strings.Contains(l, "round trip"):
				rttRow = l
			}
		}
		if !strings.Contains(cancelRow, "· loc") || !strings.Contains(cancelRow, "notifications/cancelled sent") || strings.Contains(cancelRow, "…") {
			t.Errorf("at %d the cancel note: %q", w, cancelRow)
		}
		if !strings.Contains(rttRow, "3.2ms for server/d") {
			t.Errorf("at %d the round trip row shows no value: %q\n%s", w, rttRow, h.screen())
		}
	}
}

// A request refused with URLElicitationRequiredError (-32042) says in its
// detail which sites the server asks the user to open — opened by no one
// but the user — and that E sends it again.
func TestDetailURLElicitationRequired(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := h.sendTool("slow")
	raw := []byte(`{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"error":{"code":-32042,"message":"This request requires browser-based authorization.","data":{"elicitations":[{"mode":"url","elicitationId":"e1","url":"https://auth.example.com/connect?e=1","message":"Connect your account"}]}}}`)
	msg, err := wire.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(id), Raw: raw, Msg: msg})
	h.key("enter")
	s := h.screen()
	for _, want := range []string{"✗ error -32042", "inflight never does", "then E sends it again", "site auth.example.com"} {
		if !strings.Contains(s, want) {
			t.Errorf("the detail lacks %q:\n%s", want, s)
		}
	}
}
