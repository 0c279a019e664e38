package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// everyKey is every key the UI binds, plus a few it does not.
var everyKey = []string{
	"up", "down", "pgup", "pgdown", "home", "end", "g", "G", "j", "k",
	"c", "C", "X", "+", "-", "n", "r", "enter", "esc", "l", "s", "/", "e", "R", "?", "q",
	"tab", "shift+tab", "left", "right", "space", "ctrl+e", "ctrl+s", "backspace", "z", "1",
}

// TestEveryKeyInEveryScreen presses every key on every screen, with
// requests in every state, and checks the invariants that must always hold:
// no panic, the view fits the terminal, and Update never calls the client
// synchronously.
func TestEveryKeyInEveryScreen(t *testing.T) {
	screens := map[string][]string{
		"list":     nil,
		"detail":   {"enter"},
		"log":      {"l"},
		"filter":   {"l", "/"},
		"stderr":   {"s"},
		"composer": {"n"},
		"form":     {"n", "enter"},
		"json":     {"n", "enter", "ctrl+e"},
		"kinds":    {"n", "right"},
		"help":     {"?"},
		"reason":   {"k", "C"},
		"quit":     {"q"},
	}
	for name, path := range screens {
		for _, k := range everyKey {
			t.Run(name+"/"+k, func(t *testing.T) {
				h := everyState(t, 100, 30)
				h.key(path...)
				sent, cancels := h.fake.calls()
				_, _ = h.m.Update(keyMsg(k)) // the returned command is not run
				if s, c := h.fake.calls(); s != sent || c != cancels {
					t.Fatalf("Update called the client synchronously for %q", k)
				}
				checkFits(t, h)
			})
		}
	}
}

// TestResizeKeepsEveryScreenInBounds renders every screen at sizes from
// cramped to wide: columns are dropped, never wrapped into garbage.
func TestResizeKeepsEveryScreenInBounds(t *testing.T) {
	for _, path := range [][]string{nil, {"enter"}, {"l"}, {"s"}, {"n"}, {"n", "enter"}, {"?"}, {"q"}} {
		h := everyState(t, 120, 35)
		h.key(path...)
		for _, w := range []int{40, 60, 80, 100, 140, 200} {
			for _, hgt := range []int{10, 24, 40} {
				h.send(tea2size(w, hgt))
				checkFits(t, h)
			}
		}
	}
}

func checkFits(t *testing.T, h *harness) {
	t.Helper()
	content := h.m.View().Content
	lines := strings.Split(content, "\n")
	if len(lines) > h.m.size.height {
		t.Fatalf("%d lines on a %d-line screen (mode %d)", len(lines), h.m.size.height, h.m.focus.mode)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > h.m.size.width {
			t.Fatalf("a line of %d cells on a %d-cell screen (mode %d): %q", w, h.m.size.width, h.m.focus.mode, ansi.Strip(l))
		}
	}
	for _, r := range ansi.Strip(content) {
		if r < 0x20 && r != '\n' {
			t.Fatalf("control character %U reached the screen", r)
		}
	}
}
