package ui

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/ui/look"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"go.uber.org/goleak"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/wire"
)

func TestMain(m *testing.M) {
	// teatest watches for SIGINT in a goroutine that only ends on a signal.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"))
}

// fakeClient records what the UI asks of the connection. Update must never
// call it directly: calls happen only when a returned command runs, which
// the tests check by looking at the calls before and after running them.
type fakeClient struct {
	mu        sync.Mutex
	events    chan event.Event
	sent      []client.Request
	cancels   []wire.ID
	reasons   []string
	signal    event.CancelSignal
	cancelErr error
	sendErr   error
	connected int
	closed    bool
	info      event.ConnInfo
}

func newFake() *fakeClient {
	return &fakeClient{
		events: make(chan event.Event, 16),
		signal: event.SignalNotification,
		info:   event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ProtocolVersion: wire.VersionModern, ServerName: "fake", ServerVersion: "1.0"},
	}
}

func (f *fakeClient) Connect(context.Context) (event.ConnInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connected++
	return f.info, nil
}

func (f *fakeClient) Send(_ context.Context, r client.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, r)
	return f.sendErr
}

func (f *fakeClient) Cancel(id wire.ID, reason string) (event.CancelSignal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels = append(f.cancels, id)
	f.reasons = append(f.reasons, reason)
	return f.signal, f.cancelErr
}

func (f *fakeClient) CancelAll(ids []wire.ID, reason string, _ time.Duration) {
	for _, id := range ids {
		_, _ = f.Cancel(id, reason)
	}
}

func (f *fakeClient) Events() <-chan event.Event { return f.events }

func (f *fakeClient) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fakeClient) calls() (sent int, cancels int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent), len(f.cancels)
}

// harness drives a Model with a fixed, hand-advanced clock.
type harness struct {
	t     testing.TB
	m     *Model
	fake  *fakeClient
	now   time.Time
	ticks []time.Duration // tick requests, newest last
	quit  bool
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func newHarness(t testing.TB, w, h int) *harness {
	t.Helper()
	hs := &harness{t: t, fake: newFake(), now: t0}
	m, err := New(Options{
		Target:    "demo (stdio)",
		Transport: "stdio",
		Dial:      func() (Client, error) { return hs.fake, nil },
		Tracker:   session.DefaultConfig(),
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
	m.conn.wait = func(<-chan event.Event, int) tea.Cmd { return nil }
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// send delivers one message and runs the commands it returns.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// run executes a command tree, feeding the messages back into Update.
func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	for depth := 0; cmd != nil && depth < 50; depth++ {
		msg := cmd()
		cmd = nil
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				h.run(c)
			}
		case tea.QuitMsg:
			h.quit = true
		default:
			if isQuit(msg) {
				h.quit = true
				continue
			}
			_, cmd = h.m.Update(msg)
		}
	}
}

func isQuit(msg tea.Msg) bool {
	_, ok := msg.(tea.QuitMsg)
	return ok
}

// key presses a key by its name ("c", "enter", "ctrl+c", "up").
func (h *harness) key(names ...string) {
	h.t.Helper()
	for _, n := range names {
		h.send(keyMsg(n))
	}
}

func keyMsg(name string) tea.KeyPressMsg {
	special := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown, "tab": tea.KeyTab,
		"space": tea.KeySpace, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"left": tea.KeyLeft, "right": tea.KeyRight, "backspace": tea.KeyBackspace,
	}
	if strings.HasPrefix(name, "ctrl+") {
		return tea.KeyPressMsg{Code: rune(name[5]), Mod: tea.ModCtrl}
	}
	if r, ok := special[name]; ok {
		return tea.KeyPressMsg{Code: r}
	}
	if name == "shift+tab" {
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	}
	r := []rune(name)[0]
	return tea.KeyPressMsg{Code: r, Text: name}
}

// typeText types a string into whatever has focus.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// events delivers client events as one batch, as the pump would.
func (h *harness) events(evs ...event.Event) {
	h.t.Helper()
	for i := range evs {
		if evs[i].Time.IsZero() {
			evs[i].Time = h.now
		}
	}
	h.send(eventsMsg{gen: h.m.conn.gen, items: bareItems(evs)})
}

// bareItems are a live connection's events as the pump hands them over.
func bareItems(evs []event.Event) []source.Item {
	items := make([]source.Item, len(evs))
	for i := range evs {
		items[i] = source.Bare(evs[i])
	}
	return items
}

// advance moves the clock and delivers the pending tick.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.now = h.now.Add(d)
	h.send(tickMsg{gen: h.m.clock.gen})
}

// connect completes the connection (the fake answers Connect at once; the
// Connected event arrives through the pump).
func (h *harness) connect() {
	h.t.Helper()
	info := h.fake.info
	h.events(event.Event{Kind: event.Connected, Info: &info})
	// tools/list was sent on connecting; answer it with the demo's tools.
	h.answer(1, `{"resultType":"complete","tools":[{"name":"slow","description":"A slow tool.","inputSchema":{"type":"object","properties":{"seconds":{"type":"number","default":10,"description":"How long."},"steps":{"type":"integer","default":10}}}},{"name":"stubborn","description":"Ignores cancellation.","inputSchema":{"type":"object"}}]}`)
}

func (h *harness) sentEvent(id int64) {
	h.t.Helper()
	// The bytes on the wire carry the params the UI asked the client to send.
	params := json.RawMessage(`{"name":"slow","arguments":{}}`)
	for _, r := range h.fake.sent {
		if r.ID == wire.IntID(id) {
			params = r.Params
		}
	}
	raw := wire.Request(wire.IntID(id), "tools/call", params)
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: wire.IntID(id), Raw: raw, Msg: msg})
}

func (h *harness) answer(id int64, result string) {
	h.t.Helper()
	raw := wire.ResultResponse(wire.IntID(id), json.RawMessage(result))
	msg, err := wire.Decode(raw)
	if err != nil {
		h.t.Fatal(err)
	}
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(id), Raw: raw, Msg: msg})
}

func (h *harness) progress(id int64, v, total float64, message string) {
	h.t.Helper()
	params, _ := json.Marshal(map[string]any{"progressToken": id, "progress": v, "total": total, "message": message})
	raw := wire.Notification(wire.NotifyProgress, params)
	msg, _ := wire.Decode(raw)
	p, _ := wire.DecodeProgress(msg.Params) // the client decodes it
	h.events(event.Event{Kind: event.Received, Raw: raw, Msg: msg, Progress: &p})
}

func (h *harness) cancelSent(id int64, sig event.CancelSignal) {
	h.t.Helper()
	h.events(event.Event{Kind: event.CancelSent, RequestID: wire.IntID(id), Signal: sig, Reason: "user requested cancellation"})
}

func (h *harness) request(id int64) *session.Request {
	h.t.Helper()
	r, ok := h.m.tracker.Get(wire.IntID(id))
	if !ok {
		h.t.Fatalf("request %d not tracked", id)
	}
	return r
}

// screen is the current view without ANSI styling.
func (h *harness) screen() string {
	return ansi.Strip(h.m.View().Content)
}

// golden compares the screen with testdata/TEST/SUBTEST.golden, the file
// named after the running (sub)test, as charmbracelet/x/exp/golden names
// it (refresh with go test ./ui -update), after checking that it fits the
// screen.
func (h *harness) golden() {
	h.t.Helper()
	got := h.screen()
	// Our own views, with benign data, are drawn as they are: the frame
	// pass keeps every attribute of our styling.
	if raw := h.m.frame(); look.FrameFilter().Clean(raw) != raw {
		h.t.Errorf("the frame pass changed our own view:\n%q\nbecame\n%q", raw, look.FrameFilter().Clean(raw))
	}
	for _, line := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(line); w > h.m.size.width {
			h.t.Errorf("a line is %d cells wide on a %d-cell screen: %q", w, h.m.size.width, line)
		}
	}
	if n := strings.Count(got, "\n") + 1; n > h.m.size.height {
		h.t.Errorf("the view has %d lines on a %d-line screen", n, h.m.size.height)
	}
	golden.RequireEqual(h.t, got)
}

func sessionDefaults() session.RequestOptions { return session.RequestOptions{} }

func clientConnected(info *event.ConnInfo) event.Event {
	return event.Event{Kind: event.Connected, Info: info}
}

func tea2size(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
