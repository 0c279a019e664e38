package question

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func testEnv(keys *keymap.KeyMap, chop bool) screen.Env {
	return screen.Env{Tracker: session.NewTracker(session.DefaultConfig()), Now: t0.Add(3 * time.Second), Styles: look.NewStyles(true),
		Keys: keys, Chop: chop, Line: termsafe.Line, Block: termsafe.Block}
}

// waiting is an elicitation the server sent while two requests were in
// flight: tied to none, and long enough a param to need wrapping.
func waiting() *session.ServerRequest {
	return &session.ServerRequest{ID: wire.IntID(7), Method: wire.MethodElicitationCreate, At: t0, State: session.ServerWaiting,
		TiedBy: session.TiedNone, InFlight: 2, Params: json.RawMessage(`{"message":"` + strings.Repeat("which disk? ", 12) + `"}`)}
}

func keyPress(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func TestRowKey(t *testing.T) {
	keys := keymap.Default()
	env := testEnv(&keys, false)
	s := waiting()
	tests := []struct {
		key          string
		inList, asks bool
		want         screen.Action
		status       string // a screen.Status's text, in part
	}{
		{key: "a", asks: true, want: Answer{Request: s}},
		{key: "a", status: "is the server's request, waiting (inflight answers it without a prompt): nothing to answer"},
		{key: "enter", inList: true, asks: true, want: Answer{Request: s}},
		{key: "enter", inList: true, want: Open{Request: s}},
		{key: "enter", asks: true}, // in the detail, enter is not a row key
		{key: "c", asks: true, want: Decline{Request: s}},
		{key: "C", asks: true, want: Decline{Request: s}},
		{key: "c", status: ": there is nothing to decline"},
		{key: "r", asks: true, status: ": only inflight's own requests can be re-issued"},
		{key: "W", status: ": inflight runs no timeout or watch on it"},
		{key: "y", inList: true, status: ": enter shows its params in the detail"},
		{key: "o", status: ": its params are in this view"},
		{key: "x", asks: true, inList: true},
	}
	for _, tc := range tests {
		got := RowKey(env, s, keyPress(tc.key), tc.inList, tc.asks)
		if tc.status != "" {
			st, ok := got.(screen.Status)
			if !ok || st.Level != screen.Info || !strings.HasPrefix(st.Text, "↘ elicitation/create is the server's request") || !strings.Contains(st.Text, tc.status) {
				t.Errorf("%q (list %v, asks %v) = %#v, want a status saying %q", tc.key, tc.inList, tc.asks, got, tc.status)
			}
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q (list %v, asks %v) = %#v, want %#v", tc.key, tc.inList, tc.asks, got, tc.want)
		}
	}
}

func TestDetailKeysAndView(t *testing.T) {
	keys := keymap.Default()
	env := testEnv(&keys, false)
	s := waiting()
	m := New(s, 40).Layout(env, Input{Dark: true, Asks: true}, 40, 6)
	view := ansi.Strip(m.View(env, 40, 6))
	for _, want := range []string{"↘ elicitation/create from the server", "not tied to a request: 2 were in flight", "TIMELINE"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	wide := ansi.Strip(New(s, 200).Layout(env, Input{Dark: true, Asks: true}, 200, 6).View(env, 200, 6))
	if !strings.Contains(wide, "waiting for you") {
		t.Errorf("an asking request's header does not say it waits for you:\n%s", wide)
	}
	wide = ansi.Strip(New(s, 200).Layout(env, Input{Dark: true}, 200, 6).View(env, 200, 6))
	if !strings.Contains(wide, "inflight answers it without a prompt") {
		t.Errorf("a request not queued for the user says it waits for you:\n%s", wide)
	}

	if again := ansi.Strip(m.View(env, 40, 6)); again != view {
		t.Errorf("a second View differs:\n%s\nthen\n%s", view, again)
	}
	if _, act := m.Update(env, keyPress("a")); !reflect.DeepEqual(act, Answer{Request: s}) {
		t.Errorf("a = %#v, want Answer", act)
	}
	if _, act := m.Update(env, keyPress("w")); act != (ToggleWrap{}) {
		t.Errorf("w = %#v, want ToggleWrap", act)
	}
	if _, act := m.Update(env, keyPress("q")); act != (screen.Unused{}) {
		t.Errorf("q = %#v, want Unused", act)
	}
	down, act := m.Update(env, keyPress("down"))
	if act != nil || down.vp.YOffset() != 1 {
		t.Errorf("↓ = %#v, offset %d; want it to scroll one line", act, down.vp.YOffset())
	}
}

func TestLayoutFollowsTheWrapPreference(t *testing.T) {
	keys := keymap.Default()
	s := waiting()
	m := New(s, 30).Layout(testEnv(&keys, false), Input{}, 30, 40)
	wrapped := m.vp.TotalLineCount()
	m = m.Layout(testEnv(&keys, true), Input{}, 30, 40)
	if cut := m.vp.TotalLineCount(); cut >= wrapped {
		t.Errorf("cut long lines: %d lines, wrapped %d; want fewer", cut, wrapped)
	}
	s.State, s.Ended = session.ServerWithdrawn, t0.Add(2*time.Second)
	m = m.Layout(testEnv(&keys, true), Input{}, 30, 40)
	if !strings.Contains(ansi.Strip(m.content), "cancelled by the server") || !strings.Contains(ansi.Strip(m.content), "(no reason given)") {
		t.Errorf("the body was not built again when the request ended:\n%s", m.content)
	}
}
