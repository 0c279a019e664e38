package waterfall

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/ui/screen"
	"inflight/wire"
)

// press sends keys to m in turn, laying it out after each as the root
// does, and returns the last action.
func (r *run) press(m Model, w, h int, keys ...string) (Model, screen.Action) {
	var act screen.Action
	for _, k := range keys {
		m, act = m.Update(r.env(), keyPress(k))
		m = m.Layout(r.env(), w, h)
	}
	return m, act
}

func rowOf(t *testing.T, view, label string) string {
	t.Helper()
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, label) {
			return l
		}
	}
	t.Fatalf("no row %q in\n%s", label, view)
	return ""
}

// ↑ and ↓ move the selection over the requests' rows (a question's row is
// its request's), home and end go to the oldest and the newest; on the
// newest the selection follows the requests that come, elsewhere it stays.
func TestWaterfallSelection(t *testing.T) {
	r := fixedRun(t)
	id := func(n int64) wire.ID { return wire.IntID(n) }
	m := New(wire.ID{}).Layout(r.env(), 80, 24)
	if m.Selected() != id(9) || !m.follow {
		t.Fatalf("opened on %v (following %v), want the newest, #9, followed", m.Selected(), m.follow)
	}
	for _, c := range []struct {
		key  string
		want int64
	}{{"up", 6}, {"up", 5}, {"down", 6}, {"down", 9}, {"down", 9}, {"home", 1}, {"down", 2}, {"pgdown", 9}, {"pgup", 1}, {"end", 9}} {
		var act screen.Action
		m, act = r.press(m, 80, 24, c.key)
		if act != nil {
			t.Errorf("%s asked %#v", c.key, act)
		}
		if m.Selected() != id(c.want) {
			t.Fatalf("after %s the selection is #%v, want #%d", c.key, m.Selected(), c.want)
		}
	}
	if _, view := r.screenOf(m, 80, 24); !strings.HasPrefix(rowOf(t, view, "confirm"), "▌") {
		t.Errorf("the selected row is not marked:\n%s", view)
	}

	// Following: a new request is selected.
	next := r.call(6100, "next", session.RequestOptions{})
	m = m.Layout(r.env(), 80, 24)
	if m.Selected() != next.ID {
		t.Fatalf("following, the selection is #%v, want the new #%v", m.Selected(), next.ID)
	}
	// Not following: it stays.
	m, _ = r.press(m, 80, 24, "up")
	was := m.Selected()
	r.call(6200, "later", session.RequestOptions{})
	if m = m.Layout(r.env(), 80, 24); m.Selected() != was {
		t.Fatalf("the selection moved to #%v on a new request, want it on #%v", m.Selected(), was)
	}
	// The root's list selection comes in with Select.
	if m = m.Select(id(3)).Layout(r.env(), 80, 24); m.Selected() != id(3) || m.follow {
		t.Fatalf("Select(3): #%v, following %v", m.Selected(), m.follow)
	}
}

// Scrolling keeps the selection on screen, with how many rows lie above
// and below.
func TestWaterfallScrollsToSelection(t *testing.T) {
	r := newRun(t, session.Config{})
	for i := range 40 {
		req := r.call(i*100, "echo", session.RequestOptions{})
		r.done(i*100+50, req)
	}
	m := New(wire.ID{})
	m, view := r.screenOf(m, 80, 12)
	if !strings.Contains(view, "↑ 31 more") || !strings.Contains(rowOf(t, view, " 40 echo"), "▌") {
		t.Fatalf("following the newest of 40 in 9 rows:\n%s", view)
	}
	m, _ = r.press(m, 80, 12, "home")
	if _, view = r.screenOf(m, 80, 12); !strings.Contains(view, "31 more ↓") || !strings.Contains(rowOf(t, view, "  1 echo"), "▌") {
		t.Fatalf("at the oldest:\n%s", view)
	}
	// A page is the rows drawn but one: the selection moves by it, and
	// the rows follow once it leaves them.
	m, _ = r.press(m, 80, 12, "pgdown")
	if _, view = r.screenOf(m, 80, 12); !strings.Contains(view, "31 more ↓") || !strings.Contains(rowOf(t, view, "  9 echo"), "▌") {
		t.Fatalf("a page down:\n%s", view)
	}
	m, _ = r.press(m, 80, 12, "pgdown")
	if _, view = r.screenOf(m, 80, 12); !strings.Contains(view, "↑ 8 more · 23 more ↓") || !strings.Contains(rowOf(t, view, " 17 echo"), "▌") {
		t.Fatalf("two pages down:\n%s", view)
	}
}

// enter asks for the selected request's detail, c for its cancel
// (whatever its state: the root cancels or says why not); the root's keys
// (q, v, …) are Unused.
func TestWaterfallActions(t *testing.T) {
	r := fixedRun(t)
	m := New(wire.IntID(5)).Layout(r.env(), 80, 24)
	if _, act := m.Update(r.env(), keyPress("enter")); act != (Open{ID: wire.IntID(5)}) {
		t.Errorf("enter: %#v", act)
	}
	if _, act := m.Update(r.env(), keyPress("c")); act != (Cancel{ID: wire.IntID(5)}) {
		t.Errorf("c: %#v", act)
	}
	m = m.Select(wire.IntID(1)).Layout(r.env(), 80, 24) // completed: c is disabled, still asked
	r.keys.Cancel.SetEnabled(false)
	if _, act := m.Update(r.env(), keyPress("c")); act != (Cancel{ID: wire.IntID(1)}) {
		t.Errorf("c on a finished request: %#v", act)
	}
	for _, k := range []string{"q", "v", "n", "?", "+", "r"} {
		if _, act := m.Update(r.env(), keyPress(k)); act != (screen.Unused{}) {
			t.Errorf("%s: %#v, want Unused", k, act)
		}
	}
	if _, act := m.Update(r.env(), event.Event{}); act != nil {
		t.Errorf("a message that is not a key: %#v", act)
	}
	empty := newRun(t, session.Config{})
	e := New(wire.ID{}).Layout(empty.env(), 80, 24)
	if _, act := e.Update(empty.env(), keyPress("enter")); act != nil {
		t.Errorf("enter with no request: %#v", act)
	}
	if _, view := empty.screenOf(e, 80, 24); !strings.Contains(view, "no requests yet") {
		t.Errorf("an empty run:\n%s", view)
	}
}

// The axis: fitted to the run when opened; i and I zoom by the levels and
// follow now; ← and → pan a quarter of the width and stay; F fits again,
// N follows now again at the zoom shown.
func TestWaterfallAxisKeys(t *testing.T) {
	r := fixedRun(t)
	m := New(wire.ID{})
	m, view := r.screenOf(m, 80, 24)
	_, cells := geometry(80)
	if !strings.Contains(view, "a cell is 112ms · the whole run") {
		t.Fatalf("opened:\n%s", view)
	}
	if want := fitPer(6*time.Second, cells); want != 112*time.Millisecond {
		t.Fatalf("fitPer(6s, %d) = %v", cells, want)
	}
	// The running request's head is now, on the last cell.
	if row := []rune(rowOf(t, view, " slow")); row[len(row)-1] != markNow {
		t.Errorf("fitted, now is not at the right edge: %q", string(row))
	}
	if row := []rune(rowOf(t, view, " search")); row[len(row)-cells] != fillRun && row[len(row)-cells+1] != fillRun {
		t.Errorf("fitted, the run does not begin at the left edge: %q", string(row))
	}

	steps := []struct {
		key, title string
	}{
		{"i", "a cell is 100ms · following now"},
		{"i", "a cell is 50ms · following now"},
		{"I", "a cell is 100ms · following now"},
		// Following at 100ms, the axis starts at 6s − 54 cells = 0.6s; a
		// pan is a quarter of 55 cells, 1.375s.
		{"left", "a cell is 100ms · from -775ms"},
		{"left", "a cell is 100ms · from -2.15s"},
		// The middle (−2.15s + 2.75s = 0.6s) stays: 0.6s − 1.375s.
		{"i", "a cell is 50ms · from -775ms"},
		{"F", "a cell is 112ms · the whole run"},
		{"I", "a cell is 200ms · following now"},
		// 6s − 54 × 0.2s = −4.8s, then 2.75s later.
		{"right", "a cell is 200ms · from -2.05s"},
		{"N", "a cell is 200ms · following now"},
	}
	for _, s := range steps {
		m, _ = r.press(m, 80, 24, s.key)
		_, view = r.screenOf(m, 80, 24)
		if !strings.Contains(view, s.title) {
			t.Fatalf("after %s, want %q:\n%s", s.key, s.title, view)
		}
	}
	if row := []rune(rowOf(t, view, " slow")); row[len(row)-1] != markNow {
		t.Errorf("following now, now is not at the right edge: %q", string(row))
	}

	// Panned past now: the running request's timeout, 5s after its last
	// progress (4s), is marked where it falls, and a request wholly left
	// of the axis says so at its edge.
	m, _ = r.press(m, 80, 24, "right", "right", "right", "right")
	_, view = r.screenOf(m, 80, 24)
	slow := rowOf(t, view, " slow")
	if !strings.Contains(slow, string(markDeadline)) {
		t.Errorf("the deadline ahead is not drawn:\n%s", view)
	}
	if search := rowOf(t, view, " search"); !strings.Contains(search, string(markEarlier)) {
		t.Errorf("a request left of the axis is not marked:\n%s", view)
	}
	a := m.axis.place(r.tr, r.now, cells)
	if c := a.col(at(9000)); c < 0 || c >= cells || []rune(slow)[len([]rune(slow))-cells+c] != markDeadline {
		t.Errorf("the deadline is not at 9s (cell %d):\n%s", c, slow)
	}

	// G/end: the newest selected and the axis at now.
	m, _ = r.press(m, 80, 24, "up", "end")
	if m.axis.mode != followNow || !m.follow {
		t.Errorf("end: axis %v, following %v", m.axis.mode, m.follow)
	}
}

// S shows the latency summary under the rows, and hides it.
func TestWaterfallSummaryToggles(t *testing.T) {
	r := fixedRun(t)
	m := New(wire.ID{})
	m, _ = r.press(m, 80, 24, "S")
	if _, view := r.screenOf(m, 80, 24); !strings.Contains(view, "latency per method") || !strings.Contains(view, "P95") {
		t.Fatalf("S did not show the summary:\n%s", view)
	}
	m, _ = r.press(m, 80, 24, "S")
	if _, view := r.screenOf(m, 80, 24); strings.Contains(view, "latency per method") {
		t.Fatalf("S again did not hide it:\n%s", view)
	}
}

// View changes nothing, and draws the tracker as it is even when Layout
// has not seen its latest changes.
func TestWaterfallViewIsPure(t *testing.T) {
	r := fixedRun(t)
	m := New(wire.ID{})
	m, _ = r.press(m, 120, 35, "S", "up")
	before := m
	snapshot := *m.trails
	snapshot.byID = map[wire.ID]*trail{}
	for k, v := range m.trails.byID {
		c := *v
		snapshot.byID[k] = &c
	}
	first := m.View(r.env(), 120, 35)
	if m.View(r.env(), 120, 35) != first || !reflect.DeepEqual(m, before) || !reflect.DeepEqual(*m.trails, snapshot) {
		t.Fatal("View changed the model")
	}
	req := r.call(6100, "unseen", session.RequestOptions{})
	if view := m.View(r.env(), 120, 35); !strings.Contains(view, "unseen") || !strings.Contains(view, "8 requests") {
		t.Fatalf("a request Layout has not seen is not drawn:\n%s", view)
	}
	_ = req
}

// A proxy's view: the host's requests are rows too, marked ⇄, with the
// host's cancel and what came after it.
func TestWaterfallHostRequests(t *testing.T) {
	tr := session.NewTracker(session.Config{})
	observe := func(ms int, kind event.Kind, raw string) {
		msg, err := wire.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		ev := event.Event{Kind: kind, Time: at(ms), Raw: []byte(raw), Msg: msg}
		if msg.Kind != wire.KindNotification {
			ev.RequestID = msg.ID
		}
		if msg.Method == wire.NotifyProgress {
			p, _ := wire.DecodeProgress(msg.Params)
			ev.Progress = &p
		}
		tr.Observe(ev)
	}
	observe(0, event.Sent, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`)
	observe(20, event.Received, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`)
	observe(100, event.Sent, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p1"}}}`)
	observe(500, event.Received, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`)
	observe(1000, event.Sent, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timeout"}}`)
	observe(1800, event.Received, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	r := &run{tb: t, tr: tr, now: at(2000)}
	r.keys = newRun(t, session.Config{}).keys
	_, view := r.screenOf(New(wire.ID{}), 120, 35)
	row := rowOf(t, view, "⇄ tools/call slow")
	for _, g := range []rune{fillRun, markProgress, markCancel, fillWindow, markLateResp} {
		if !strings.ContainsRune(row, g) {
			t.Errorf("the host's request has no %c: %q", g, row)
		}
	}
	if !strings.Contains(rowOf(t, view, "initialize"), "⇄") {
		t.Errorf("the host's initialize is not marked:\n%s", view)
	}
}
