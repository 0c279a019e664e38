package logview

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/internal/testkit/screentest"
	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// envOver is what the root hands the screens, over tracker t, with the
// keys enabled as in mode.
func envOver(t *session.Tracker, mode keymap.Mode, st keymap.State) screen.Env {
	keys := keymap.Default()
	st.Mode = mode
	keys.SetState(st)
	return screen.Env{Tracker: t, Now: t0, Styles: look.NewStyles(true), Keys: &keys, Line: termsafe.Line, Block: termsafe.Block}
}

// fullLog is a tracker whose log holds n tools/call requests, a progress
// notification each, and the answers of all but the last 50.
func fullLog(n int) *session.Tracker {
	t := session.NewTracker(session.Config{HistoryLimit: n + 100})
	info := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ProtocolVersion: wire.VersionModern, ServerName: "fake", ServerVersion: "1.0"}
	t.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &info})
	for i := 0; i < n; i++ {
		r := t.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}, t0)
		params, _ := json.Marshal(map[string]any{"progressToken": r.ProgressToken, "progress": 3, "total": 10, "message": "step 3 of 10"})
		raw := wire.Notification(wire.NotifyProgress, params)
		msg, _ := wire.Decode(raw)
		t.Apply(event.Event{Kind: event.Received, Time: t0, Raw: raw, Msg: msg})
		if i < n-50 {
			res := wire.ResultResponse(r.ID, json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`))
			rm, _ := wire.Decode(res)
			t.Apply(event.Event{Kind: event.Received, Time: t0, RequestID: r.ID, Raw: res, Msg: rm})
		}
	}
	return t
}

// BenchmarkLogFilterNewNeedle measures a new filter over a full log (10 000
// entries): what one keystroke in the filter costs at worst.
func BenchmarkLogFilterNewNeedle(b *testing.B) {
	env := envOver(fullLog(5000), keymap.ModeLog, keymap.State{})
	m := New().Layout(env, 140, 37)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.filter.SetValue(fmt.Sprintf("step %d", i%10))
		m.matches = matches{}
		m.refreshMatches(env)
	}
}

// y, o and O name the selected entry for the root to copy or open; with
// nothing shown they say so instead.
func TestPayloadKeysNameTheEntry(t *testing.T) {
	empty := session.NewTracker(session.Config{})
	env := envOver(empty, keymap.ModeLog, keymap.State{HasEntry: true})
	m := New().Layout(env, 80, 20)
	if _, act := m.Update(env, screentest.Press("y")); act != (screen.Status{Level: screen.Info, Text: "nothing selected to copy"}) {
		t.Errorf("y on an empty log asked %#v", act)
	}
	if _, act := m.Update(env, screentest.Press("o")); act != (screen.Status{Level: screen.Info, Text: "nothing selected to open"}) {
		t.Errorf("o on an empty log asked %#v", act)
	}

	tr := fullLog(3)
	env = envOver(tr, keymap.ModeLog, keymap.State{HasEntry: true})
	m = New().Layout(env, 80, 20)
	newest := tr.Log().Total() - 1
	if _, act := m.Update(env, screentest.Press("y")); act != (Copy{Entry: newest}) {
		t.Errorf("y asked %#v, want the newest entry %d copied", act, newest)
	}
	m, _ = m.Update(env, screentest.Press("up"))
	if _, act := m.Update(env, screentest.Press("O")); act != (Open{Entry: newest - 1, Editor: true}) {
		t.Errorf("O after ↑ asked %#v, want entry %d in the editor", act, newest-1)
	}
}

// In the entry view, w asks the root to switch the layout, which the
// entry follows once it reads the new preference; esc goes back to the
// log, and a key it does not use is the root's.
func TestEntryViewAsksAndFollowsThePreference(t *testing.T) {
	tr := fullLog(3)
	env := envOver(tr, keymap.ModeLog, keymap.State{HasEntry: true})
	m := New().Layout(env, 80, 20)
	m, _ = m.Update(env, screentest.Press("enter"))
	env = envOver(tr, keymap.ModeLog, keymap.State{HasEntry: true, EntryOpen: true})
	m = m.Layout(env, 80, 20)
	if abs, open := m.OpenEntry(); !open || abs != tr.Log().Total()-1 {
		t.Fatalf("enter opened %d (%v)", abs, open)
	}
	if !strings.Contains(m.View(env, 80, 20), "long lines wrapped (w: cut them)") {
		t.Errorf("the entry does not say it wraps:\n%s", m.View(env, 80, 20))
	}
	if _, act := m.Update(env, screentest.Press("w")); act != (ToggleWrap{}) {
		t.Errorf("w asked %#v", act)
	}
	env.Chop = true
	m = m.Layout(env, 80, 20)
	if !strings.Contains(m.View(env, 80, 20), "lines cut at column 1") {
		t.Errorf("the entry did not follow the preference:\n%s", m.View(env, 80, 20))
	}
	if _, act := m.Update(env, screentest.Press("q")); act != (screen.Unused{}) {
		t.Errorf("q in the entry asked %#v, want it left to the root", act)
	}
	if m, _ = m.Update(env, screentest.Press("esc")); m.EntryOpen() {
		t.Error("esc did not close the entry")
	}
}

// Stderr scrolls sideways only while lines are cut, and a new layout
// starts again at the first column.
func TestStderrScrollsSidewaysWhenCut(t *testing.T) {
	tr := session.NewTracker(session.Config{})
	tr.Apply(event.Event{Kind: event.Stderr, Time: t0, Text: strings.Repeat("a long line the server wrote ", 10)})
	env := envOver(tr, keymap.ModeStderr, keymap.State{HasStderr: true})
	s := NewStderr().Layout(env, 80, 10)
	s, _ = s.Update(env, tea.MouseWheelMsg{Button: tea.MouseWheelRight})
	if s.xoff != 0 {
		t.Errorf("wrapped lines scrolled sideways to %d", s.xoff)
	}
	env.Chop = true
	s = s.Layout(env, 80, 10)
	s, _ = s.Update(env, tea.MouseWheelMsg{Button: tea.MouseWheelRight})
	if s.xoff != look.HorizontalStep || !strings.Contains(s.View(env, 80, 10), fmt.Sprintf("cut at column %d", look.HorizontalStep+1)) {
		t.Errorf("the wheel tilted right scrolled to %d:\n%s", s.xoff, s.View(env, 80, 10))
	}
	env.Chop = false
	if s = s.Layout(env, 80, 10); s.xoff != 0 {
		t.Errorf("wrapping again kept the sideways scroll %d", s.xoff)
	}
}
