package prompt

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

func testEnv() screen.Env {
	keys := keymap.Default()
	same := func(s string) string { return s }
	return screen.Env{Tracker: session.NewTracker(session.Config{}), Now: time.Unix(0, 0), Styles: look.NewStyles(true), Keys: &keys, Line: same, Block: same}
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

// A confirmation answers yes with y, Y or enter and no with n, N, esc or
// q, closing either way; any other key leaves it open and asks nothing.
func TestConfirm(t *testing.T) {
	env := testEnv()
	for _, kind := range []Kind{Quit, CancelAll} {
		for _, k := range []string{"y", "Y", "enter"} {
			m, act := Ask(kind, "sure?").Update(env, press(k))
			if act != (Confirm{Kind: kind}) || m.Open() {
				t.Errorf("%v %s: action %#v, open %v; want Confirm and closed", kind, k, act, m.Open())
			}
		}
		for _, k := range []string{"n", "N", "esc", "q"} {
			m, act := Ask(kind, "sure?").Update(env, press(k))
			if act != (screen.Close{}) || m.Open() {
				t.Errorf("%v %s: action %#v, open %v; want Close and closed", kind, k, act, m.Open())
			}
		}
		m, act := Ask(kind, "sure?").Update(env, press("x"))
		if act != nil || m.Kind() != kind {
			t.Errorf("%v x: action %#v, kind %v; want nothing, still open", kind, act, m.Kind())
		}
		if m.TakesText() {
			t.Errorf("%v takes text", kind)
		}
	}
}

// The reason's input takes what is typed; enter sends it trimmed (the
// default reason when blank), esc dismisses it.
func TestReason(t *testing.T) {
	env := testEnv()
	id := wire.IntID(3)
	m := AskReason(env, id)
	if !m.TakesText() || m.Kind() != CancelWithReason {
		t.Fatalf("kind %v", m.Kind())
	}
	for _, r := range " too slow " {
		m, _ = m.Update(env, press(string(r)))
	}
	closed, act := m.Update(env, press("enter"))
	if act != (Reason{ID: id, Text: "too slow"}) || closed.Open() {
		t.Errorf("enter: action %#v, open %v", act, closed.Open())
	}
	if _, act := AskReason(env, id).Update(env, press("enter")); act != (Reason{ID: id, Text: DefaultReason}) {
		t.Errorf("enter on a blank reason: %#v", act)
	}
	if closed, act := m.Update(env, press("esc")); act != (screen.Close{}) || closed.Open() {
		t.Errorf("esc: action %#v, open %v", act, closed.Open())
	}
	if v := ansi.Strip(m.Sized(80).View(env, 80, 10)); !strings.Contains(v, "Cancel #3 with a reason") || !strings.Contains(v, "enter cancel · esc keep running") {
		t.Errorf("view:\n%s", v)
	}
	if v := (Model{}).View(env, 80, 10); v != "" {
		t.Errorf("no dialog draws %q", v)
	}
}
