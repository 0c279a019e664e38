package waterfall

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"inflight/ui/look"
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
