package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/list"
	"inflight/ui/look"
	"inflight/wire"
)

// The parts of a cancelled stubborn's cell while it waits for its fate,
// and of a timed-out one, as the list builds them.
func stubbornParts() []look.Part {
	plain := lipgloss.NewStyle()
	return []look.Part{
		{Variants: []string{"⚑ 2 progress after cancel", "⚑ 2 late progress", "⚑ 2 late"}, Style: plain, Prio: look.PrioFlag},
		{Variants: []string{"notifications/cancelled sent 1.0s ago", "cancel sent 1.0s ago"}, Style: plain, Prio: look.PrioSignal},
		{Variants: []string{"watching for late traffic · 3.3s left", "watching 3.3s more", "3.3s left"}, Style: plain, Prio: look.PrioWatch},
		{Variants: []string{"cancellation requested"}, Style: plain, Prio: look.PrioRepeats},
	}
}

func TestBuildCellSpendsWidthInPriorityOrder(t *testing.T) {
	plain := lipgloss.NewStyle()
	timedOut := []look.Part{
		{Variants: []string{"⚑ 1 progress after cancel", "⚑ 1 late progress", "⚑ 1 late"}, Style: plain, Prio: look.PrioFlag},
		{Variants: []string{"notifications/cancelled sent 0.2s ago", "cancel sent 0.2s ago"}, Style: plain, Prio: look.PrioSignal},
		{Variants: []string{"watching for late traffic · 4.8s left", "watching 4.8s more", "4.8s left"}, Style: plain, Prio: look.PrioWatch},
		{Variants: []string{"timed out, cancellation requested", "timed out"}, Style: plain, Prio: look.PrioRepeats},
	}
	result := []look.Part{
		{Variants: []string{"⚑ late response ignored (+2.3s)", "⚑ late response"}, Style: plain, Prio: look.PrioFlag},
		{Variants: []string{"“stubborn finished 6 steps anyway, as it always does”"}, Style: plain, Prio: look.PrioSignal, Cut: true},
	}
	for _, tc := range []struct {
		name  string
		parts []look.Part
		w     int
		want  string
	}{
		// 80 columns leave the last column 35 cells: the flag and the
		// signal, short.
		{"stubborn at 80", stubbornParts(), 35, "⚑ 2 late · cancel sent 1.0s ago"},
		// Every part in, shortest, before any part gets a longer wording.
		{"stubborn at 100", stubbornParts(), 45, "⚑ 2 late · cancel sent 1.0s ago · 3.3s left"},
		{"stubborn at 120", stubbornParts(), 73, "⚑ 2 late progress · notifications/cancelled sent 1.0s ago · 3.3s left"},
		{"stubborn wide", stubbornParts(), 104, "⚑ 2 progress after cancel · notifications/cancelled sent 1.0s ago · watching 3.3s more"},
		{"stubborn wider", stubbornParts(), 106, "⚑ 2 progress after cancel · notifications/cancelled sent 1.0s ago · watching for late traffic · 3.3s left"},
		// The words that repeat STATE come last, only when all else is whole.
		{"stubborn widest", stubbornParts(), 140, "⚑ 2 progress after cancel · notifications/cancelled sent 1.0s ago · watching for late traffic · 3.3s left · cancellation requested"},
		// Too narrow for anything but the flag: the flag, cut if need be.
		{"stubborn at 10", stubbornParts(), 10, "⚑ 2 late"},
		{"stubborn at 5", stubbornParts(), 5, "⚑ 2 …"},
		{"timed out at 80", timedOut, 35, "⚑ 1 late · cancel sent 0.2s ago"},
		{"timed out at 120", timedOut, 73, "⚑ 1 late progress · notifications/cancelled sent 0.2s ago · 4.8s left"},
		// A result is cut to the room the flags leave it.
		{"result at 40", result, 40, "⚑ late response · “stubborn finished 6 …"},
		{"result at 60", result, 60, "⚑ late response ignored (+2.3s) · “stubborn finished 6 step…"},
		{"result at 20", result, 20, "⚑ late response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ansi.Strip(look.BuildCell(tc.parts, tc.w))
			if got != tc.want {
				t.Errorf("width %d:\n got %q\nwant %q", tc.w, got, tc.want)
			}
			if w := lipgloss.Width(got); w > tc.w {
				t.Errorf("%d cells in %d", w, tc.w)
			}
		})
	}
}

// cancellingRows sends a silent that times out and a stubborn that is
// cancelled, both still sending progress after their cancels, and leaves
// both waiting for their fate in the late window.
func cancellingRows(t *testing.T, w, hgt int) (h *harness, silent, stubborn int64) {
	h = newHarness(t, w, hgt)
	h.connect()
	silent = h.sendTool("silent")
	h.progress(silent, 1, 6, "step 1 of 6")
	h.run(h.m.cancel(wire.IntID(silent), "timeout", session.CauseTimeout))
	h.cancelSent(silent, event.SignalNotification)
	stubborn = h.sendTool("stubborn")
	h.progress(stubborn, 1, 6, "step 1 of 6")
	h.advance(500 * time.Millisecond)
	h.key("c")
	h.cancelSent(stubborn, event.SignalNotification)
	h.advance(time.Second)
	h.progress(silent, 2, 6, "step 2 of 6")
	h.progress(stubborn, 2, 6, "step 2 of 6")
	h.advance(200 * time.Millisecond)
	h.progress(stubborn, 3, 6, "step 3 of 6")
	h.advance(500 * time.Millisecond)
	return h, silent, stubborn
}

// rowOf is the screen line of request id.
func rowOf(t *testing.T, scr string, id int64) string {
	t.Helper()
	for _, l := range strings.Split(scr, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, "▌"))
		if len(f) > 1 && f[0] == fmt.Sprint(id) {
			return l
		}
	}
	t.Fatalf("no row for #%d:\n%s", id, scr)
	return ""
}

// At 80 columns a cancelled stubborn with late progress still shows its
// flag and its signal, and so does a timed-out request (issue 10).
func TestCancellingRowKeepsFlagAndSignalAt80(t *testing.T) {
	for _, w := range []int{80, 120} {
		h, silent, stubborn := cancellingRows(t, w, 24)
		scr := h.screen()
		for _, id := range []int64{silent, stubborn} {
			row := rowOf(t, scr, id)
			if !strings.Contains(row, "⚑") || !strings.Contains(row, "sent 1.7s ago") && !strings.Contains(row, "sent 2.2s ago") {
				t.Errorf("%d columns: row #%d lost its flag or its signal: %q", w, id, row)
			}
		}
		if row := rowOf(t, scr, silent); !strings.Contains(row, "expired") {
			t.Errorf("%d columns: the timed-out row does not say expired: %q", w, row)
		}
	}
}

// The late window runs out on screen, elapsed keeps running while it
// does, and w settles the request at once.
func TestLateWindowRunsOutAndWStopsWatching(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	h.key("c")
	h.cancelSent(id, event.SignalNotification)
	h.advance(1800 * time.Millisecond)
	row := rowOf(t, h.screen(), id)
	if !strings.Contains(row, "3.2s") || !strings.Contains(row, "watching") {
		t.Fatalf("the row does not show the late window running out: %q", row)
	}
	before := look.Elapsed(h.request(id), h.now)
	h.advance(time.Second)
	if after := look.Elapsed(h.request(id), h.now); after-before != time.Second {
		t.Fatalf("elapsed went from %s to %s in a second of cancelling: it must keep running", before, after)
	}
	if !strings.Contains(h.screen(), "W stop watching") {
		t.Fatalf("the footer does not offer w on a cancelling row:\n%s", h.screen())
	}
	h.key("W")
	r := h.request(id)
	if r.State != session.StateCancelled {
		t.Fatalf("state after w = %s, want cancelled", r.State)
	}
	if got := look.Elapsed(r, h.now.Add(time.Hour)); got != 2800*time.Millisecond {
		t.Fatalf("elapsed of a settled request = %s, want 2.8s (until w settled it)", got)
	}
	scr := h.screen()
	if !strings.Contains(scr, "stopped watching 2.2s early: cancelled; later traffic is still flagged late") {
		t.Fatalf("the status does not say what w did:\n%s", scr)
	}
	if strings.Contains(scr, "W stop watching") {
		t.Fatalf("w is still offered on a settled row:\n%s", scr)
	}
	// Later traffic is still flagged late.
	h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"done anyway"}]}`)
	if !h.request(id).Late.Response {
		t.Fatal("a response after w was not recorded as late")
	}
	// w on a request that is not cancelling says why, in the refusal's words.
	h.key("W")
	if scr := h.screen(); !strings.Contains(scr, "already cancelled") {
		t.Fatalf("w on a settled row does not say why:\n%s", scr)
	}
}

// - stops at the floor and says so in words.
func TestShorterStopsAtTheFloorAndSaysSo(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	for range 8 {
		h.key("-")
	}
	rem, _ := h.request(id).Remaining(h.now)
	if rem != session.MinTimeout {
		t.Fatalf("%s left after eight presses of -, want the floor %s", rem, session.MinTimeout)
	}
	if scr := h.screen(); !strings.Contains(scr, "timeout at its floor: 1.0s left is the least") {
		t.Fatalf("the status does not say the floor was reached:\n%s", scr)
	}
	// r re-issues with the timeout asked for, and the same late window.
	h.key("r")
	again := h.m.tracker.At(h.m.tracker.Len() - 1)
	if again.Timeout.Timeout != h.request(id).Timeout.Asked || again.LateWindow != h.request(id).LateWindow {
		t.Fatalf("re-issued with timeout %s and late window %s", again.Timeout.Timeout, again.LateWindow)
	}
}

// The empty screen names the demo's slow only on a server that has it.
func TestEmptyHintNamesOnlyToolsTheServerHas(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	if !strings.Contains(h.screen(), "slow is chosen") {
		t.Fatalf("the demo's hint is missing:\n%s", h.screen())
	}
	other := newHarness(t, 120, 35)
	info := other.fake.info
	other.events(event.Event{Kind: event.Connected, Info: &info})
	other.answer(1, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"add","inputSchema":{"type":"object"}}]}`)
	scr := other.screen()
	if strings.Contains(scr, "slow") || !strings.Contains(scr, "pick one of the server's 2 tools") {
		t.Fatalf("on a server without slow the hint must not name it:\n%s", scr)
	}
	none := newHarness(t, 120, 35)
	none.events(event.Event{Kind: event.Connected, Info: &info})
	none.answer(1, `{"tools":[]}`)
	if scr := none.screen(); strings.Contains(scr, "slow") || !strings.Contains(scr, "compose a request") {
		t.Fatalf("on a server with no tools the hint must be generic:\n%s", scr)
	}
}

// C and X on finished rows replace what the status said before, and a
// message about one request goes when the selection moves, whatever moved
// it.
func TestStatusIsAboutThePresent(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := h.sendTool("slow")
	h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
	h.m.setStatus(levelInfo, "trace written to /tmp/old")
	h.key("C")
	if scr := h.screen(); strings.Contains(scr, "/tmp/old") || !strings.Contains(scr, "nothing to cancel") {
		t.Fatalf("C on a finished row left the old message:\n%s", scr)
	}
	h.m.setStatus(levelInfo, "trace written to /tmp/old")
	h.key("X")
	if scr := h.screen(); strings.Contains(scr, "/tmp/old") || !strings.Contains(scr, "nothing in flight to cancel") {
		t.Fatalf("X with nothing in flight left the old message:\n%s", scr)
	}
	// "sent #N — press c" goes when the wheel moves the selection.
	startSlow(h)
	startSlow(h)
	if !strings.Contains(h.screen(), "press c to cancel it") {
		t.Fatalf("no status after sending:\n%s", h.screen())
	}
	// One row on screen (a header, the column header, a row, the status
	// line and the key bar): a wheel step moves the selection.
	h.send(tea.WindowSizeMsg{Width: 120, Height: 6})
	if !strings.Contains(h.screen(), "press c to cancel it") {
		t.Fatalf("the status went with the resize, before the wheel moved anything:\n%s", h.screen())
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if strings.Contains(h.screen(), "press c to cancel it") {
		t.Errorf("the status about the newest request stays after the wheel moved away:\n%s", h.screen())
	}
}

// f cycles the list's filter, the header says which and how many; x
// hides finished rows from the list only.
func TestListFilterAndClearFinished(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	done := h.sendTool("slow")
	h.answer(done, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
	failed := h.sendTool("fail")
	h.answer(failed, `{"resultType":"complete","isError":true,"content":[{"type":"text","text":"failed on purpose"}]}`)
	_, _, stubborn := cancellingRowsOn(h)
	running := h.sendTool("slow")
	total := h.m.tracker.Len()

	h.key("f") // in flight
	scr := h.screen()
	if !strings.Contains(scr, fmt.Sprintf("list: in flight 3 of %d", total)) {
		t.Fatalf("the header does not say the filter and its count:\n%s", scr)
	}
	if strings.Contains(scr, "“done”") || !strings.Contains(rowOf(t, scr, running), "pending") {
		t.Fatalf("in flight shows a finished row or hides a running one:\n%s", scr)
	}
	h.key("f") // flagged
	if scr := h.screen(); !strings.Contains(scr, "list: flagged 2 of") || !strings.Contains(rowOf(t, scr, stubborn), "⚑") {
		t.Fatalf("flagged:\n%s", scr)
	}
	h.key("f") // failed
	scr = h.screen()
	if !strings.Contains(scr, "list: failed 1 of") || !strings.Contains(rowOf(t, scr, failed), "tool error") {
		t.Fatalf("failed:\n%s", scr)
	}
	if r, ok := h.m.screens.selectedRequest(h.m.tracker, h.m.focus.mode); !ok || r.ID != wire.IntID(failed) {
		t.Fatalf("the selection is on a hidden row: %v", r)
	}
	h.key("f") // all
	if head := strings.Join(strings.SplitN(h.screen(), "\n", 3)[:2], "\n"); strings.Contains(head, "list: ") {
		t.Fatalf("with every row shown the header has nothing to say:\n%s", head)
	}

	h.key("x")
	scr = h.screen()
	if !strings.Contains(scr, "cleared 3 finished rows; the log and exports keep them") || strings.Contains(scr, "“done”") {
		t.Fatalf("x did not clear the finished rows:\n%s", scr)
	}
	if !strings.Contains(scr, fmt.Sprintf("list: all 3 of %d · 3 cleared", total)) {
		t.Fatalf("the header does not count the cleared rows:\n%s", scr)
	}
	if h.m.tracker.Len() != total || h.m.tracker.Log().Len() == 0 {
		t.Fatal("x removed requests from the tracker's history")
	}
	// A request that ends after the clear stays.
	h.advance(100 * time.Millisecond)
	h.answer(running, `{"resultType":"complete","content":[{"type":"text","text":"finished after the clear"}]}`)
	if !strings.Contains(h.screen(), "finished after the clear") {
		t.Fatalf("a request that ended after x was hidden:\n%s", h.screen())
	}
	h.key("x") // clears that one too
	h.key("x") // nothing left to clear: shows them again
	if scr := h.screen(); !strings.Contains(scr, "“done”") || !strings.Contains(scr, "showing the cleared requests again") {
		t.Fatalf("x with nothing to clear did not show the cleared rows again:\n%s", scr)
	}

	// Sending while a filter would hide it goes back to all.
	h.key("f", "f") // flagged
	startSlow(h)
	if h.m.screens.list.Filter() != list.FilterAll {
		t.Fatalf("a request sent under the %s filter would be out of sight", h.m.screens.list.Filter())
	}
}

// cancellingRowsOn is cancellingRows on an existing harness.
func cancellingRowsOn(h *harness) (*harness, int64, int64) {
	silent := h.sendTool("silent")
	h.run(h.m.cancel(wire.IntID(silent), "timeout", session.CauseTimeout))
	h.cancelSent(silent, event.SignalNotification)
	stubborn := h.sendTool("stubborn")
	h.key("c")
	h.cancelSent(stubborn, event.SignalNotification)
	h.advance(time.Second)
	h.progress(silent, 2, 6, "step 2 of 6")
	h.progress(stubborn, 2, 6, "step 2 of 6")
	return h, silent, stubborn
}

// The REQUEST column is as wide as its labels need, within what the
// terminal leaves it.
func TestRequestColumnFollowsTheTerminal(t *testing.T) {
	const name = "trigger-long-running-operation"
	for _, tc := range []struct {
		w     int
		whole bool
	}{{80, false}, {120, true}, {160, true}} {
		h := newHarness(t, tc.w, 24)
		h.connect()
		id := h.sendTool(name)
		row := rowOf(t, h.screen(), id)
		if strings.Contains(row, name) != tc.whole {
			t.Errorf("%d columns: whole name shown = %v, want %v: %q", tc.w, !tc.whole, tc.whole, row)
		}
		// At 80, 16 cells of it: at 10 ("trigger-l…") rows of different
		// tools read the same (trial finding 13).
		if !tc.whole && !strings.Contains(row, "trigger-long-ru…") {
			t.Errorf("%d columns: the name is not cut at the column: %q", tc.w, row)
		}
	}
}

// The selected row is drawn on the Selected background from its first
// cell to its last: the background is on again after every reset inside.
func TestSelectedRowIsHighlightedWhole(t *testing.T) {
	h, _, stubborn := cancellingRows(t, 120, 35)
	on, _, _ := strings.Cut(h.m.theme.styles.Selected.Render("x"), "x")
	if on == "" {
		t.Fatal("the Selected style draws no background")
	}
	var line string
	for _, l := range strings.Split(h.m.frame(), "\n") {
		if strings.Contains(ansi.Strip(l), "▌") {
			line = l
		}
	}
	if !strings.Contains(ansi.Strip(line), fmt.Sprintf("%d stubborn", stubborn)) {
		t.Fatalf("the selected row is not stubborn's: %q", ansi.Strip(line))
	}
	if !strings.HasPrefix(line, on) {
		t.Fatalf("the row does not start on the background: %q", line)
	}
	body := strings.TrimSuffix(line, "\x1b[m")
	if n, m := strings.Count(body, "\x1b[m"), strings.Count(body, "\x1b[m"+on); n != m {
		t.Fatalf("%d resets inside the row, %d followed by the background: %q", n, m, line)
	}
	if w := ansi.StringWidth(line); w != 120 {
		t.Fatalf("the highlighted row is %d cells, want the whole width", w)
	}
}

// When rows are hidden above or below, the column header says how many.
func TestScrollIndicatorAndMouseWheel(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.connect()
	for range 30 {
		h.sendTool("slow")
	}
	// 24 lines: 2 header, 2 footer, the column header, 19 rows.
	header := func() string {
		for _, l := range strings.Split(h.screen(), "\n") {
			if strings.Contains(l, "REQUEST") {
				return l
			}
		}
		t.Fatalf("no column header:\n%s", h.screen())
		return ""
	}
	if got := header(); !strings.Contains(got, "↑ 12 more") || strings.Contains(got, "↓") {
		t.Fatalf("at the newest rows: %q", got)
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if got := header(); !strings.Contains(got, "↑ 9 more · 3 more ↓") {
		t.Fatalf("after one wheel step up: %q", got)
	}
	if h.m.screens.list.Following() {
		t.Fatal("scrolling up with the wheel still follows the newest")
	}
	for range 10 {
		h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	}
	if got := header(); strings.Contains(got, "↑") || !strings.Contains(got, "12 more ↓") {
		t.Fatalf("at the top: %q", got)
	}
	if pos, ok := h.m.screens.list.SelectedPos(h.m.tracker); !ok || pos > 18 {
		t.Fatalf("the selection left the screen: %d %v", pos, ok)
	}
	for range 10 {
		h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if got := header(); strings.Contains(got, "↓") {
		t.Fatalf("back at the bottom: %q", got)
	}
	if v := h.m.View(); v.MouseMode != tea.MouseModeCellMotion {
		t.Fatalf("the view does not ask for the wheel: mouse mode %v", v.MouseMode)
	}
}

// The keys this file's features bind are offered only where they act.
func TestListKeysFollowState(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	h.syncKeysFor(keymap.ModeList)
	if h.m.keys.StopWatching.Enabled() || !h.m.keys.FilterList.Enabled() || !h.m.keys.ClearFinished.Enabled() {
		t.Fatal("on a running row: w must be off, f and x on")
	}
	h.key("c")
	h.cancelSent(id, event.SignalNotification)
	if !h.m.keys.StopWatching.Enabled() {
		t.Fatal("w is off on a cancelling row")
	}
	h.key("l")
	if h.m.keys.FilterList.Enabled() || h.m.keys.ClearFinished.Enabled() {
		t.Fatal("f and x are on in the protocol log, where they do nothing")
	}
}

func (h *harness) syncKeysFor(mode keymap.Mode) {
	h.m.focus.mode = mode
	h.m.syncKeys()
}

// Golden views of the list at the sizes issue 10 asks for: a cancelled
// stubborn and a timed-out request in their late windows, a filtered list,
// and a scrolled one.
func TestGoldenListViews(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run("cancelling-"+suffix, func(t *testing.T) {
			h, _, _ := cancellingRows(t, size.w, size.h)
			h.golden()
		})
		t.Run("filtered-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.key("f", "f")
			h.golden()
		})
		t.Run("scrolled-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			for i := range 40 {
				id := h.sendTool("slow")
				if i%3 == 0 {
					h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
				}
			}
			h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
			h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
			h.golden()
		})
		t.Run("no-match-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.key("f", "f")
			h.golden()
		})
	}
}
