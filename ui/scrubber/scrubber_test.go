package scrubber

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"inflight/internal/testkit/screentest"
	"inflight/keymap"
	"inflight/ui/look"
	"inflight/ui/screen"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func env() screen.Env {
	keys := keymap.Default()
	keys.SetState(keymap.State{Mode: keymap.ModeList, Replaying: true})
	return screen.Env{Now: t0, Styles: look.NewStyles(true), Keys: &keys, Line: func(s string) string { return s }}
}

// TestKeysAskForMoves: each key asks the root for its move; a move by
// hand pauses the play; any other key is not the scrubber's.
func TestKeysAskForMoves(t *testing.T) {
	m := New(t0, t0.Add(10*time.Second), 100)
	e := env()
	cases := []struct {
		key  string
		want screen.Action
	}{
		{"0", Seek{To: t0}}, {"$", Seek{To: t0.Add(10 * time.Second)}},
		{".", Step{Delta: 1}}, {",", Step{Delta: -1}},
		{"]", Flag{Forward: true}}, {"[", Flag{Forward: false}},
		{"space", Play{On: true}},
	}
	for _, c := range cases {
		var act screen.Action
		m, act = m.Update(e, screentest.Press(c.key))
		if act != c.want {
			t.Errorf("%s: %#v, want %#v", c.key, act, c.want)
		}
	}
	if !m.Playing() {
		t.Error("space did not start the play")
	}
	m, _ = m.Update(e, screentest.Press("."))
	if m.Playing() {
		t.Error("a step by hand left the run playing")
	}
	if _, act := m.Update(e, screentest.Press("c")); act != (screen.Unused{}) {
		t.Errorf("c: %#v", act)
	}
}

// TestSpeedsFromATenthToAHundredfold: < and > step through the speeds and
// stop at both ends.
func TestSpeedsFromATenthToAHundredfold(t *testing.T) {
	m := New(t0, t0.Add(time.Second), 1)
	e := env()
	var act screen.Action
	for range 20 {
		m, act = m.Update(e, screentest.Press(">"))
	}
	if m.Speed() != 100 || act != (Speed{Speed: 100}) {
		t.Errorf("fastest %v, %#v", m.Speed(), act)
	}
	for range 20 {
		m, _ = m.Update(e, screentest.Press("<"))
	}
	if m.Speed() != 0.1 || SpeedText(m.Speed()) != "0.1×" {
		t.Errorf("slowest %v (%s)", m.Speed(), SpeedText(m.Speed()))
	}
	if SpeedText(0.25) != "0.25×" || SpeedText(1) != "1×" || SpeedText(25) != "25×" {
		t.Error(SpeedText(0.25), SpeedText(1), SpeedText(25))
	}
}

// TestViewSaysWhereTheRunIs: the line says the moment against the run's
// length, the speed, paused or playing, the keys and the trace's damage,
// marks the flags on the bar, and fits any width, keeping the moment.
func TestViewSaysWhereTheRunIs(t *testing.T) {
	m := New(t0, t0.Add(8*time.Second), 50).At(t0.Add(1400*time.Millisecond), 20).
		WithFlags([]time.Time{t0.Add(6 * time.Second)}).WithNote("line 9 is not a trace record, skipped")
	e := env()
	got := ansi.Strip(m.View(e, 200, 1))
	for _, want := range []string{"⏸ 1.4s / 8.0s", "●", "⚑", "1× paused", "space play · ,. step · [] flag · 0$ ends · <> speed", "⚠ line 9"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	m, _ = m.Update(e, screentest.Press("space"))
	if got := ansi.Strip(m.View(e, 200, 1)); !strings.Contains(got, "▶ 1.4s / 8.0s") || !strings.Contains(got, "1× playing") {
		t.Errorf("playing: %q", got)
	}
	for _, w := range []int{120, 80, 60, 40, 30, 20} {
		got := ansi.Strip(m.View(e, w, 1))
		if ansi.StringWidth(got) != w || strings.Contains(got, "\n") {
			t.Errorf("width %d: %d cells: %q", w, ansi.StringWidth(got), got)
		}
		if w >= 30 && !strings.Contains(got, "1.4s / 8.0s") {
			t.Errorf("width %d lost the moment: %q", w, got)
		}
	}
}
