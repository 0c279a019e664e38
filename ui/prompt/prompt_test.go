package prompt

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"inflight/internal/testkit/screentest"
	"inflight/ui/screen"
	"inflight/wire"
)

// A confirmation answers yes with y, Y or enter and no with n, N, esc or
// q, closing either way; any other key leaves it open and asks nothing.
func TestConfirm(t *testing.T) {
	env := screentest.Env()
	for _, kind := range []Kind{Quit, CancelAll} {
		for _, k := range []string{"y", "Y", "enter"} {
			m, act := Ask(kind, "sure?").Update(env, screentest.Press(k))
			if act != (Confirm{Kind: kind}) || m.Open() {
				t.Errorf("%v %s: action %#v, open %v; want Confirm and closed", kind, k, act, m.Open())
			}
		}
		for _, k := range []string{"n", "N", "esc", "q"} {
			m, act := Ask(kind, "sure?").Update(env, screentest.Press(k))
			if act != (screen.Close{}) || m.Open() {
				t.Errorf("%v %s: action %#v, open %v; want Close and closed", kind, k, act, m.Open())
			}
		}
		m, act := Ask(kind, "sure?").Update(env, screentest.Press("x"))
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
	env := screentest.Env()
	id := wire.IntID(3)
	m := AskReason(env, id)
	if !m.TakesText() || m.Kind() != CancelWithReason {
		t.Fatalf("kind %v", m.Kind())
	}
	for _, r := range " too slow " {
		m, _ = m.Update(env, screentest.Press(string(r)))
	}
	closed, act := m.Update(env, screentest.Press("enter"))
	if act != (Reason{ID: id, Text: "too slow"}) || closed.Open() {
		t.Errorf("enter: action %#v, open %v", act, closed.Open())
	}
	if _, act := AskReason(env, id).Update(env, screentest.Press("enter")); act != (Reason{ID: id, Text: DefaultReason}) {
		t.Errorf("enter on a blank reason: %#v", act)
	}
	if closed, act := m.Update(env, screentest.Press("esc")); act != (screen.Close{}) || closed.Open() {
		t.Errorf("esc: action %#v, open %v", act, closed.Open())
	}
	if v := ansi.Strip(m.Sized(80).View(env, 80, 10)); !strings.Contains(v, "Cancel #3 with a reason") || !strings.Contains(v, "enter cancel · esc keep running") {
		t.Errorf("view:\n%s", v)
	}
	if v := (Model{}).View(env, 80, 10); v != "" {
		t.Errorf("no dialog draws %q", v)
	}
}
