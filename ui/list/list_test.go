package list

import (
	"encoding/json"
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

var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// scene is the list over a tracker of its own, laid out as the root lays
// it out after every update.
type scene struct {
	tr   *session.Tracker
	keys keymap.KeyMap
	list Model
	w, h int
	now  time.Time
}

func newScene(w, h int) *scene {
	s := &scene{tr: session.NewTracker(session.Config{}), keys: keymap.Default(), list: New(), w: w, h: h, now: t0}
	s.keys.SetState(keymap.State{Mode: keymap.ModeList, HasSelection: true, HasRequests: true})
	return s
}

func (s *scene) env() screen.Env {
	id := func(x string) string { return x }
	return screen.Env{Tracker: s.tr, Now: s.now, Styles: look.NewStyles(true), Keys: &s.keys, Line: id, Block: id}
}

// begin begins a tools/call of tool and follows it, as the root does after
// every change.
func (s *scene) begin(tool string) wire.ID {
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": map[string]any{}})
	r := s.tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, s.now)
	s.list = s.list.FollowNewest(s.tr).Layout(s.env(), Input{}, s.w, s.h)
	return r.ID
}

// press gives the list one key and lays it out again; it returns what the
// list asked.
func (s *scene) press(k tea.KeyPressMsg) screen.Action {
	var act screen.Action
	s.list, act = s.list.Update(s.env(), k)
	s.list = s.list.Layout(s.env(), Input{}, s.w, s.h)
	return act
}

func (s *scene) screen() string { return ansi.Strip(s.list.View(s.env(), s.w, s.h)) }

var (
	up    = tea.KeyPressMsg{Code: tea.KeyUp}
	down  = tea.KeyPressMsg{Code: tea.KeyDown}
	end   = tea.KeyPressMsg{Code: tea.KeyEnd}
	enter = tea.KeyPressMsg{Code: tea.KeyEnter}
	f     = tea.KeyPressMsg{Code: 'f', Text: "f"}
	x     = tea.KeyPressMsg{Code: 'x', Text: "x"}
	q     = tea.KeyPressMsg{Code: 'q', Text: "q"}
)

// The list follows the newest request until the user moves away, and
// again from End; enter asks the root to open the selected request.
func TestListFollowsAndOpens(t *testing.T) {
	s := newScene(100, 12)
	s.begin("one")
	two := s.begin("two")
	if s.list.Selected() != two || !s.list.Following() {
		t.Fatalf("selected %v following %v, want the newest, %v, followed", s.list.Selected(), s.list.Following(), two)
	}
	if act := s.press(up); act != nil {
		t.Fatalf("up asked %#v of the root", act)
	}
	one := s.list.Selected()
	if one == two || s.list.Following() {
		t.Fatalf("up: selected %v following %v", one, s.list.Following())
	}
	s.begin("three")
	if s.list.Selected() != one {
		t.Fatalf("a new request took the selection from the user: %v", s.list.Selected())
	}
	if act := s.press(enter); act != (Open{ID: one}) {
		t.Fatalf("enter asked %#v, want Open{%v}", act, one)
	}
	s.press(end)
	four := s.begin("four")
	if s.list.Selected() != four || !s.list.Following() {
		t.Fatalf("after End a new request is not followed: %v", s.list.Selected())
	}
	if _, ok := s.press(q).(screen.Unused); !ok {
		t.Fatal("q is not the list's: it must go to the root's global keys")
	}
}

// f cycles the filter and says what it shows; x with nothing finished
// says so. Both are the list's words on the status line.
func TestListFilterSaysWhatItShows(t *testing.T) {
	s := newScene(100, 12)
	s.begin("one")
	st, ok := s.press(f).(screen.Status)
	if !ok || s.list.Filter() != FilterInFlight || !strings.Contains(st.Text, "list: in flight — 1 request") {
		t.Fatalf("f: filter %v, asked %#v", s.list.Filter(), st)
	}
	if got := s.list.ShownText(s.env(), 80); !strings.Contains(ansi.Strip(got), "in flight 1 of 1") {
		t.Fatalf("the header's word on the filter: %q", got)
	}
	if st, ok := s.press(x).(screen.Status); !ok || st.Text != "nothing finished to clear" {
		t.Fatalf("x with nothing finished asked %#v", st)
	}
	s.list = s.list.ShowNew()
	if s.list.Filter() != FilterInFlight {
		t.Fatal("in flight shows a request just sent, yet ShowNew left it")
	}
	s.press(f)
	s.list = s.list.ShowNew()
	if s.list.Filter() != FilterAll {
		t.Fatalf("the flagged filter would hide a request just sent, yet ShowNew kept %v", s.list.Filter())
	}
}

// The wheel scrolls the window and keeps the selection in it: scrolled
// away from the newest rows, the list no longer follows.
func TestListWheelScrolls(t *testing.T) {
	s := newScene(100, 6) // 5 rows under the column header
	for range 12 {
		s.begin("tool")
	}
	s.list, _ = s.list.Update(s.env(), tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	s.list = s.list.Layout(s.env(), Input{}, s.w, s.h)
	if s.list.Following() {
		t.Fatal("scrolled up, the list still follows the newest")
	}
	if !strings.Contains(s.screen(), "more ↓") {
		t.Fatalf("the header does not say rows are below:\n%s", s.screen())
	}
	pos, ok := s.list.SelectedPos(s.tr)
	if !ok || pos >= 12-3 {
		t.Fatalf("the selection did not move with the window: %d %v", pos, ok)
	}
}

// With nothing sent, the list tells a newcomer what to do, in the words
// of the server the root said it is on.
func TestListEmptySaysTheFirstStep(t *testing.T) {
	s := newScene(100, 12)
	s.list = s.list.Layout(s.env(), Input{Conn: Connected, Tools: 3, SlowTool: true}, s.w, s.h)
	if scr := s.screen(); !strings.Contains(scr, "You have not sent a request yet.") || !strings.Contains(scr, "on the demo server slow is chosen") {
		t.Fatalf("the empty list:\n%s", scr)
	}
	s.list = s.list.Layout(s.env(), Input{Conn: Lost}, s.w, s.h)
	if scr := s.screen(); !strings.Contains(scr, "not connected") {
		t.Fatalf("the empty list of a lost connection:\n%s", scr)
	}
}
