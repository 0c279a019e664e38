package list

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// fleetScene is a merged list over several trackers of its own.
type fleetScene struct {
	names []string
	trs   []*session.Tracker
	keys  keymap.KeyMap
	list  Merged
	w, h  int
	now   time.Time
	st    look.Styles
}

func newFleetScene(w, h int, names ...string) *fleetScene {
	s := &fleetScene{names: names, keys: keymap.Default(), list: NewMerged(), w: w, h: h, now: t0, st: look.NewStyles(true)}
	for range names {
		s.trs = append(s.trs, session.NewTracker(session.Config{}))
	}
	s.keys.SetState(keymap.State{Mode: keymap.ModeList, HasSelection: true, HasRequests: true})
	return s
}

func (s *fleetScene) env(t *session.Tracker) screen.Env {
	id := func(x string) string { return x }
	return screen.Env{Tracker: t, Now: s.now, Styles: s.st, Keys: &s.keys, Line: id, Block: id}
}

func (s *fleetScene) lanes() []Lane {
	out := make([]Lane, len(s.trs))
	for i, t := range s.trs {
		out[i] = Lane{Name: s.names[i], Env: s.env(t)}
	}
	return out
}

func (s *fleetScene) layout() { s.list = s.list.Layout(s.lanes(), s.w, s.h) }

// begin begins a tools/call of tool on server i, a millisecond after the
// last.
func (s *fleetScene) begin(i int, tool string) wire.ID {
	s.now = s.now.Add(time.Millisecond)
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": map[string]any{}})
	r := s.trs[i].Begin(wire.MethodToolsCall, params, session.RequestOptions{}, s.now)
	s.layout()
	return r.ID
}

func (s *fleetScene) press(k tea.KeyPressMsg) screen.Action {
	var act screen.Action
	s.list, act = s.list.Update(s.env(nil), k)
	s.layout()
	return act
}

func (s *fleetScene) screen() string { return ansi.Strip(s.list.View(s.env(nil), s.w, s.h)) }

func press(text string) tea.KeyPressMsg {
	switch text {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	return tea.KeyPressMsg{Code: []rune(text)[0], Text: text}
}

// Both servers number their requests from 1: the rows are told apart by
// their server, in the order they began, and the selection is (server, ID).
func TestMergedRowsKeyedByServerAndID(t *testing.T) {
	s := newFleetScene(100, 10, "alpha", "beta")
	s.begin(0, "slow")
	s.begin(1, "fast")
	s.begin(0, "stubborn")
	s.begin(1, "flood")
	rows := regexp.MustCompile(`(?m)^[▌ ] (alpha|beta)\s+(\d) (\w+)`).FindAllStringSubmatch(s.screen(), -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+"#"+r[2]+" "+r[3])
	}
	want := []string{"alpha#1 slow", "beta#1 fast", "alpha#2 stubborn", "beta#2 flood"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("rows %q, want %q:\n%s", got, want, s.screen())
	}
	if !strings.Contains(s.screen(), "SERVER") {
		t.Errorf("no SERVER column:\n%s", s.screen())
	}
	// Following: the newest is selected. Up twice: beta's #1, not alpha's.
	if sel, _ := s.list.Selected(); sel != (Key{Lane: 1, ID: wire.IntID(2)}) {
		t.Errorf("selected %+v, want beta's #2", sel)
	}
	s.press(press("up"))
	s.press(press("up"))
	if sel, _ := s.list.Selected(); sel != (Key{Lane: 1, ID: wire.IntID(1)}) {
		t.Errorf("selected %+v, want beta's #1", sel)
	}
	// A new request does not move a selection the user chose.
	s.begin(0, "late")
	if sel, _ := s.list.Selected(); sel != (Key{Lane: 1, ID: wire.IntID(1)}) {
		t.Errorf("after a new request, selected %+v", sel)
	}
	// Any other key is the selected server's.
	if _, ok := s.press(press("c")).(screen.Unused); !ok {
		t.Error("c is not left to the root")
	}
}

// f filters by state, / by server name (or request); esc clears the search.
func TestMergedFilterAndSearch(t *testing.T) {
	s := newFleetScene(100, 12, "alpha", "beta", "gamma")
	for i := range 3 {
		s.begin(i, "slow")
	}
	done := s.begin(1, "quick")
	raw := wire.ResultResponse(done, json.RawMessage(`{"content":[]}`))
	msg, _ := wire.Decode(raw)
	s.trs[1].Apply(event.Event{Kind: event.Received, Time: s.now, RequestID: done, Raw: raw, Msg: msg})
	s.layout()
	if s.list.Len() != 4 {
		t.Fatalf("%d rows, want 4", s.list.Len())
	}
	s.press(press("f")) // in flight
	if s.list.Len() != 3 || strings.Contains(s.screen(), "quick") {
		t.Errorf("in flight shows %d rows:\n%s", s.list.Len(), s.screen())
	}
	s.press(press("f"))
	s.press(press("f"))
	s.press(press("f")) // back to all
	s.press(press("/"))
	for _, r := range "bet" {
		s.press(press(string(r)))
	}
	s.press(press("enter"))
	if s.list.Len() != 2 || strings.Contains(s.screen(), "alpha") || strings.Contains(s.screen(), "gamma") {
		t.Errorf("/bet shows %d rows:\n%s", s.list.Len(), s.screen())
	}
	if sel, ok := s.list.Selected(); !ok || sel.Lane != 1 {
		t.Errorf("the selection %+v is not on a row shown", sel)
	}
	s.press(press("/"))
	s.press(press("esc"))
	if s.list.Len() != 4 {
		t.Errorf("esc did not clear the search: %d rows", s.list.Len())
	}
}

// loadFleet begins n requests spread over servers trackers, a
// millisecond apart, and settles nine in ten.
func loadFleet(b *testing.B, servers, n int) *fleetScene {
	names := make([]string, servers)
	for i := range names {
		names[i] = fmt.Sprintf("server-%02d", i)
	}
	s := newFleetScene(120, 40, names...)
	for j := range n {
		s.now = s.now.Add(time.Millisecond)
		t := s.trs[j%servers]
		r := t.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}, s.now)
		if j%10 != 0 {
			raw := wire.ResultResponse(r.ID, json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`))
			msg, _ := wire.Decode(raw)
			t.Apply(event.Event{Kind: event.Received, Time: s.now, RequestID: r.ID, Raw: raw, Msg: msg})
		}
	}
	s.layout()
	return s
}

// BenchmarkMergedList200k is 20 servers × 10 000 requests in one list: a
// key (Update and Layout), a frame (View) and a new request once every
// history is full (each one lets an old request go), and the heap once
// loaded (heapMB).
func BenchmarkMergedList200k(b *testing.B) {
	const servers, perServer = 20, 10_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := loadFleet(b, servers, servers*perServer)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if s.list.Len() != servers*perServer {
		b.Fatalf("%d rows, want %d", s.list.Len(), servers*perServer)
	}
	// Reported, not asserted: nearly all of it is the trackers' (each
	// request's record, raw bytes and log entries); the merged list's own
	// rows are 16 bytes each.
	heapMB := float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc)) / (1 << 20)
	b.Run("key", func(b *testing.B) {
		keys := []tea.KeyPressMsg{press("up"), {Code: tea.KeyDown}}
		for i := 0; b.Loop(); i++ {
			s.press(keys[i%2])
		}
		b.ReportMetric(heapMB, "heapMB")
	})
	b.Run("frame", func(b *testing.B) {
		for b.Loop() {
			_ = s.list.View(s.env(nil), s.w, s.h)
		}
	})
	b.Run("newRequest", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s.begin(i%servers, "slow")
		}
	})
}

// A server that joins late brings requests older than the rows shown:
// they take their place in time.
func TestMergedLateJoinerInTime(t *testing.T) {
	s := newFleetScene(100, 10, "alpha")
	s.begin(0, "first")
	s.begin(0, "third")
	late := session.NewTracker(session.Config{})
	params, _ := json.Marshal(map[string]any{"name": "second", "arguments": map[string]any{}})
	late.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, t0.Add(1500*time.Microsecond))
	s.names, s.trs = append(s.names, "beta"), append(s.trs, late)
	s.layout()
	got := regexp.MustCompile(`(?m)(first|second|third)`).FindAllString(s.screen(), -1)
	if strings.Join(got, ",") != "first,second,third" {
		t.Errorf("rows %q, want first, second, third:\n%s", got, s.screen())
	}
}

// observe feeds one proxied message (host: "host" or "server") to t at
// ms milliseconds past t0.
func observe(t *testing.T, tr *session.Tracker, from string, ms int, raw string) {
	t.Helper()
	msg, err := wire.Decode([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	kind := event.Sent
	if from == "server" {
		kind = event.Received
	}
	ev := event.Event{Kind: kind, Time: t0.Add(time.Duration(ms) * time.Millisecond), Raw: []byte(raw), Msg: msg}
	if msg.Kind != wire.KindNotification {
		ev.RequestID = msg.ID
	}
	tr.Observe(ev)
}

// A proxy's host that connects again uses its IDs again: the tracker
// renames the first session's finished request 1 to 1·1. The merged row of
// the second session's 1 shows what that request returned, not the
// summary the list cached under 1 for the first (found using attach
// --all: the legacy host's ping row read the modern host's
// server/discover outcome); the renamed row shows its own.
func TestMergedSummaryOfAReusedID(t *testing.T) {
	const (
		init0 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
		res0  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`
		call1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	)
	s := newFleetScene(120, 10, "P")
	tr := s.trs[0]
	observe(t, tr, "host", 0, init0)
	observe(t, tr, "server", 1, res0)
	observe(t, tr, "host", 2, call1)
	observe(t, tr, "server", 3, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"firstanswer"}]}}`)
	s.layout() // the summary of 1 is cached as its row is laid out
	if !strings.Contains(s.screen(), "firstanswer") {
		t.Fatalf("the first call's outcome is not shown:\n%s", s.screen())
	}
	observe(t, tr, "host", 10, init0)
	observe(t, tr, "server", 11, res0)
	observe(t, tr, "host", 12, call1)
	observe(t, tr, "server", 13, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"secondanswer"}]}}`)
	if _, ok := tr.Get(wire.StringID("1·1")); !ok {
		t.Fatal("the tracker did not rename the first call 1·1")
	}
	s.layout()
	var first, second string
	for _, line := range strings.Split(s.screen(), "\n") {
		switch {
		case strings.Contains(line, "1·1"):
			first = line
		case strings.Contains(line, " 1 "):
			second = line
		}
	}
	if !strings.Contains(second, "secondanswer") {
		t.Errorf("the second call's row %q does not show its own outcome:\n%s", second, s.screen())
	}
	if !strings.Contains(first, "firstanswer") {
		t.Errorf("the renamed first call's row %q does not show its outcome:\n%s", first, s.screen())
	}
}
