package waterfall

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"inflight/event"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// checkFits fails when a line of the view is wider than the screen or
// there are more lines than it has, and when the frame pass would change
// our own styling.
func checkFits(t *testing.T, view string, w, h int) {
	t.Helper()
	if look.FrameFilter().Clean(view) != view {
		t.Error("the frame pass changed the waterfall's own view")
	}
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Errorf("%d lines on a %d-line screen", len(lines), h)
	}
	for _, l := range lines {
		if cw := ansi.StringWidth(l); cw > w {
			t.Errorf("a line is %d cells wide on a %d-cell screen: %q", cw, w, ansi.Strip(l))
		}
	}
}

// The waterfall of the fixed run, at 80×24 and 120×35, as opened (the
// whole run fitted, the newest selected) and with the latency summary.
func TestWaterfallGolden(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		for _, summary := range []bool{false, true} {
			name := fmt.Sprintf("%dx%d", size.w, size.h)
			if summary {
				name += "_summary"
			}
			t.Run(name, func(t *testing.T) {
				r := fixedRun(t)
				m := New(r.tr.At(0).ID).Layout(r.env(), size.w, size.h)
				if summary {
					m, _ = m.Update(r.env(), keyPress("S"))
				}
				m = m.Layout(r.env(), size.w, size.h)
				view := m.View(r.env(), size.w, size.h)
				checkFits(t, view, size.w, size.h)
				golden.RequireEqual(t, ansi.Strip(view))
			})
		}
	}
}

// Drawn without Layout (the log not read), a request's late progress is
// still marked, at the last time the request itself keeps; its late
// response too.
func TestWaterfallWithoutTheLog(t *testing.T) {
	r := fixedRun(t)
	view := ansi.Strip(New(wire.ID{}).View(r.env(), 80, 24))
	row := rowOf(t, view, " stubborn")
	for _, g := range []rune{markProgress, markCancel, fillWindow, markLate, markEnd, markLateResp} {
		if !strings.ContainsRune(row, g) {
			t.Errorf("no %c on %q", g, row)
		}
	}
}

// A question the tracker could tie to no request (several in flight on
// stdio) is a row where it came: after the last request begun before it.
func TestWaterfallUntiedQuestion(t *testing.T) {
	r := newRun(t, session.Config{})
	r.call(0, "first", session.RequestOptions{})
	r.call(100, "second", session.RequestOptions{})
	r.message(event.Received, 200, wire.Request(wire.IntID(1), wire.MethodElicitationCreate, json.RawMessage(`{"message":"Which one?","requestedSchema":{"type":"object"}}`)), wire.ID{}, true)
	r.call(300, "third", session.RequestOptions{})
	r.now = at(400)
	m := New(wire.ID{})
	m, view := r.screenOf(m, 80, 24)
	lines := strings.Split(view, "\n")
	var order []string
	for _, l := range lines[2:] {
		for _, w := range []string{"first", "second", "elicitation", "third"} {
			if strings.Contains(l, w) {
				order = append(order, w)
			}
		}
	}
	if strings.Join(order, ",") != "first,second,elicitation,third" {
		t.Fatalf("rows in the order %v:\n%s", order, view)
	}
	if q := rowOf(t, view, "elicitation"); !strings.ContainsRune(q, markAsked) || !strings.ContainsRune(q, markInput) {
		t.Errorf("the waiting question's bar: %q", q)
	}
	// The selection passes over it.
	m, _ = r.press(m, 80, 24, "up")
	if m.Selected() != wire.IntID(2) {
		t.Errorf("up from #3 selected #%v, want #2", m.Selected())
	}
}
