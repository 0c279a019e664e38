package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/trace"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/ui/scrubber"
	"inflight/wire"
)

// newTracedHarness is newHarness with the session traced, as --trace
// traces it (Options.Trace).
func newTracedHarness(t *testing.T, w, h int, tw *trace.Writer) *harness {
	t.Helper()
	hs := &harness{t: t, fake: newFake(), now: t0}
	m, err := New(Options{
		Target:    "demo (stdio)",
		Transport: "stdio",
		Dial:      func() (Client, error) { return hs.fake, nil },
		Tracker:   session.DefaultConfig(),
		Now:       func() time.Time { return hs.now },
		Dark:      true,
		Trace:     tw,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		hs.ticks = append(hs.ticks, d)
		return nil
	}
	m.conn.wait = func(<-chan event.Event, int) tea.Cmd { return nil }
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// newReplayHarness opens a trace in the TUI as `inflight replay FILE`
// does, the trace starting at start; the harness's clock is the wall
// clock the play runs by.
func newReplayHarness(t *testing.T, w, h int, data []byte, start time.Time, cfg session.Config) *harness {
	t.Helper()
	rp, err := source.OpenReplay(bytes.NewReader(data), int64(len(data)), source.ReplayOptions{Start: start, Tracker: cfg})
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{t: t, now: t0.Add(time.Hour)}
	m, err := New(Options{
		Target:    "replay trace.jsonl",
		Transport: "stdio",
		Replay:    &Replay{Trace: rp},
		Tracker:   cfg,
		Now:       func() time.Time { return hs.now },
		Dark:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		hs.ticks = append(hs.ticks, d)
		return nil
	}
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// tracedCancel is a live session traced as --trace traces it: the tools
// listed, a slow call that progresses and is cancelled with c (its
// signal sent, the screens looked at: the list, the detail, the log),
// then late progress and a late answer, and the late window over. It
// returns the trace, the moment of the cancel and the live screens then.
func tracedCancel(t *testing.T, w, h int) (data []byte, cancelAt time.Time, screens []string) {
	t.Helper()
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, t0, nil)
	live := &liveTraffic{h: newTracedHarness(t, w, h, tw)}
	lh := live.h
	info := lh.fake.info
	live.deliver(event.Event{Kind: event.Connected, Info: &info})
	list := live.sent(wire.IntID(1))
	live.deliver(event.Event{Kind: event.Stderr, Text: "inflight-demo: serving stdio"})
	live.answer(list, wire.ResultResponse(list, json.RawMessage(`{"resultType":"complete","tools":[{"name":"slow","inputSchema":{"type":"object"}}]}`)))
	live.wait(200 * time.Millisecond)
	done := live.call(wire.MethodToolsCall, `{"name":"slow","arguments":{"seconds":1}}`)
	live.wait(300 * time.Millisecond)
	live.answer(done, wire.ResultResponse(done, json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"slow finished"}]}`)))
	slow := live.call(wire.MethodToolsCall, `{"name":"slow","arguments":{"seconds":10}}`)
	live.wait(700 * time.Millisecond)
	live.progress(slow, 3, 10, "step 3 of 10")
	live.wait(1500 * time.Millisecond)
	lh.key("c")
	live.deliver(event.Event{Kind: event.CancelSent, RequestID: slow, Signal: event.SignalNotification, Reason: "user requested cancellation"})
	cancelAt = lh.now
	screens = append(screens, lh.screen())
	lh.key("enter")
	screens = append(screens, lh.screen())
	lh.key("esc", "l")
	screens = append(screens, lh.screen())
	lh.key("esc")
	live.wait(400 * time.Millisecond)
	live.progress(slow, 4, 10, "step 4 of 10")
	live.wait(600 * time.Millisecond)
	live.answer(slow, wire.ResultResponse(slow, json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"too late"}]}`)))
	live.wait(5 * time.Second)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), cancelAt, screens
}

// maskFrame blanks what differs between a live screen and a replay's by
// design: the header's first line (the target: the server, or the trace
// file) and everything under the body — the status line (what the live
// session said of its own keys, what the replay says of the trace), the
// key bar (a replay offers no key that sends) and the replay's scrubber.
func maskFrame(screen string, below int) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	lines[0] = "<header target>"
	for i := len(lines) - below; i < len(lines); i++ {
		lines[i] = "<footer>"
	}
	return strings.Join(lines[:len(lines)-below+1], "\n")
}

// TestReplayShowsTheLiveScreenAtACancel: a live session traced with
// --trace, opened in the replay and taken to the moment of its cancel,
// shows what the live screens showed then — the list with the request
// cancel_requested and its timer, the detail, the protocol log — but for
// the header's target, the status line and key bar, and the scrubber
// (maskFrame). The replay's terminal is one line taller, for the
// scrubber, so that the bodies have the same height.
func TestReplayShowsTheLiveScreenAtACancel(t *testing.T) {
	data, cancelAt, live := tracedCancel(t, 120, 30)
	h := newReplayHarness(t, 120, 31, data, t0, session.DefaultConfig())
	if n, last := h.m.opts.Replay.Trace.Disagreements(); n != 0 {
		t.Fatalf("the replay disagrees with the trace %d times: %s", n, last)
	}
	h.run(h.m.replayAction(scrubber.Seek{To: cancelAt}))
	for i, keys := range [][]string{nil, {"enter"}, {"esc", "l"}} {
		h.key(keys...)
		got, want := maskFrame(h.screen(), 3), maskFrame(live[i], 2)
		if testing.Verbose() {
			t.Logf("screen %d, masked:\n%s", i, got)
		}
		if got != want {
			t.Errorf("screen %d differs:\nlive:\n%s\nreplay:\n%s", i, want, got)
		}
	}
	if r, ok := h.m.tracker.Get(wire.IntID(3)); !ok || r.State != session.StateCancelRequested {
		t.Errorf("the cancelled request at the cancel: %+v", r)
	}
}

// TestReplayOpensAtTheEnd: the replay opens on the whole story, paused,
// the scrubber saying the moment, the run's length and its keys; the
// screens read the run's clock, and the help lists the scrubber's keys
// and none that sends.
func TestReplayOpensAtTheEnd(t *testing.T) {
	data, _, _ := tracedCancel(t, 120, 30)
	h := newReplayHarness(t, 120, 31, data, t0, session.DefaultConfig())
	rp := h.m.opts.Replay.Trace
	if !h.m.opts.moment().Equal(rp.End()) {
		t.Fatalf("opened at %v, the run ends at %v", h.m.opts.moment(), rp.End())
	}
	screen := h.screen()
	lines := strings.Split(screen, "\n")
	scrub := lines[len(lines)-3]
	length := look.Dur(rp.End().Sub(t0))
	for _, want := range []string{"⏸ " + length + " / " + length, "1× paused", "space play"} {
		if !strings.Contains(scrub, want) {
			t.Errorf("the scrubber %q lacks %q", scrub, want)
		}
	}
	if r, _ := h.m.tracker.Get(wire.IntID(3)); r.State != session.StateCancelled || !r.Late.Response {
		t.Errorf("the cancelled request at the end: %s, late %v", r.State, r.Late.Response)
	}
	h.key("?")
	help := h.screen()
	for _, want := range []string{"next flag", "play/pause", "slower"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, not := range []string{"new request", "cancel all", "re-issue"} {
		if strings.Contains(help, not) {
			t.Errorf("help lists %q in a replay", not)
		}
	}
}

// TestReplayKeysMoveTheClock: 0 the start, . and , one item, ] and [ the
// flags (saying which), $ the end; the tracker shown is always the
// replay's at the moment shown.
func TestReplayKeysMoveTheClock(t *testing.T) {
	data, _, _ := tracedCancel(t, 120, 30)
	h := newReplayHarness(t, 120, 31, data, t0, session.DefaultConfig())
	rp := h.m.opts.Replay.Trace
	h.key("0")
	// The start: what the run did at its first instant (the live session
	// connected and asked for the tools at t0), nothing later.
	start, at := rp.Position()
	if !at.Equal(t0) || start == 0 || !rp.ItemTime(start-1).Equal(t0) || !rp.ItemTime(start).After(t0) {
		t.Fatalf("0: %d items at %v", start, at)
	}
	if r, ok := h.m.tracker.Get(wire.IntID(1)); !ok || r.Method != wire.MethodToolsList || h.m.tracker.Len() != 1 {
		t.Errorf("at the start: %d requests, the first %+v", h.m.tracker.Len(), r)
	}
	h.key(".", ".", ".")
	if n, _ := rp.Position(); n != start+3 {
		t.Errorf("three steps on: %d items, want %d", n, start+3)
	}
	h.key(",")
	if n, _ := rp.Position(); n != start+2 {
		t.Errorf("one back: %d items, want %d", n, start+2)
	}
	h.key("]")
	if !strings.Contains(h.m.status.text, "⚑ late: #3 progress") {
		t.Errorf("the first flag: %q", h.m.status.text)
	}
	if r, _ := h.m.tracker.Get(wire.IntID(3)); r.Late.ProgressAfterCancel != 1 {
		t.Errorf("at the late progress: %+v", r.Late)
	}
	h.key("]")
	if !strings.Contains(h.m.status.text, "⚑ late: #3 response") {
		t.Errorf("the second flag: %q", h.m.status.text)
	}
	h.key("]")
	if h.m.status.text != "no flag after this moment" {
		t.Errorf("past the last flag: %q", h.m.status.text)
	}
	h.key("[")
	if !strings.Contains(h.m.status.text, "#3 progress") {
		t.Errorf("back one flag: %q", h.m.status.text)
	}
	h.key("$")
	if n, _ := rp.Position(); n != rp.Len() || h.m.tracker != rp.Tracker() {
		t.Errorf("$: %d of %d items", n, rp.Len())
	}
}

// TestReplayPlays: space plays the run from the moment shown at the
// scrubber's speed, > doubles it from where it stands, and the play
// stops at the end; a key that moves the clock by hand pauses it.
func TestReplayPlays(t *testing.T) {
	data, _, _ := tracedCancel(t, 120, 30)
	h := newReplayHarness(t, 120, 31, data, t0, session.DefaultConfig())
	rp := h.m.opts.Replay.Trace
	h.key("0", "space")
	if !h.m.screens.replay.scrub.Playing() {
		t.Fatal("space did not play")
	}
	frame := func(d time.Duration) {
		h.now = h.now.Add(d)
		h.send(replayTickMsg{gen: h.m.screens.replay.gen})
	}
	frame(time.Second)
	if got := h.m.opts.moment().Sub(t0); got != time.Second {
		t.Errorf("a second of play at 1×: the run at %v", got)
	}
	h.key(">")
	frame(time.Second)
	if got := h.m.opts.moment().Sub(t0); got != 3*time.Second {
		t.Errorf("a second more at 2×: the run at %v", got)
	}
	if !strings.Contains(h.screen(), "2× playing") {
		t.Error("the scrubber does not say 2× playing")
	}
	stale := h.m.screens.replay.gen
	h.key(".")
	if h.m.screens.replay.scrub.Playing() {
		t.Error("a step by hand left the run playing")
	}
	before, _ := rp.Position()
	h.now = h.now.Add(time.Second)
	h.send(replayTickMsg{gen: stale})
	if after, _ := rp.Position(); after != before {
		t.Error("a stale frame moved the paused run")
	}
	h.key("space")
	frame(time.Minute)
	if !h.m.opts.moment().Equal(rp.End()) || h.m.screens.replay.scrub.Playing() {
		t.Errorf("after a minute at 2×: at %v, playing %v", h.m.opts.moment().Sub(t0), h.m.screens.replay.scrub.Playing())
	}
}

// TestReplaySendsNothing: the keys that would send or change a request
// say why they do nothing, and leave the replay's tracker as the trace
// made it; q quits at once.
func TestReplaySendsNothing(t *testing.T) {
	data, cancelAt, _ := tracedCancel(t, 120, 30)
	h := newReplayHarness(t, 120, 31, data, t0, session.DefaultConfig())
	h.run(h.m.replayAction(scrubber.Seek{To: cancelAt.Add(-time.Second)}))
	fresh := newReplayHarness(t, 120, 31, data, t0, session.DefaultConfig())
	fresh.run(fresh.m.replayAction(scrubber.Seek{To: cancelAt.Add(-time.Second)}))
	for _, k := range []string{"c", "C", "X", "W", "+", "-", "n", "r", "E", "a", "R", "d", "h", "z"} {
		h.key(k)
		if h.m.screens.prompt.Open() || h.m.focus.mode != 0 {
			t.Errorf("%s opened something: prompt %d, mode %d", k, h.m.screens.prompt.Kind(), h.m.focus.mode)
			h.key("esc")
		}
		if !strings.HasPrefix(h.m.status.text, "a replay sends nothing") {
			t.Errorf("%s: status %q", k, h.m.status.text)
		}
	}
	h.advance(10 * time.Second) // a tick of the UI's clock: nothing is due in a replay
	if !reflect.DeepEqual(h.m.tracker, fresh.m.tracker) {
		t.Error("the keys changed the replay's tracker")
	}
	h.key("q")
	if !h.quit {
		t.Error("q did not quit")
	}
}

// A recorded run whose connection was lost says so, and offers nothing to
// reconnect: R would reach no server (it said "press R to reconnect").
func TestReplayBannerReconnectsNothing(t *testing.T) {
	c := chrome{env: screen.Env{Styles: look.NewStyles(true), Line: func(s string) string { return s }}, width: 120,
		state: connLost, everConnected: true, transport: "stdio", replay: true, connErr: errors.New("the server exited: signal: killed")}
	got := ansi.Strip(c.banner())
	if !strings.Contains(got, "connection lost here, in the recorded run") || strings.Contains(got, "press R") {
		t.Errorf("the replay's banner: %q", got)
	}
	c.replay = false
	if got := ansi.Strip(c.banner()); !strings.Contains(got, "press R to reconnect") {
		t.Errorf("the live banner: %q", got)
	}
}
