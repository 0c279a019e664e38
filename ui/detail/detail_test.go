package detail

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"

	"github.com/charmbracelet/x/ansi"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// fixture is a tracker with a request of a slow tool in flight, and the
// detail open on it, driven by hand as the root does.
type fixture struct {
	t       *testing.T
	tracker *session.Tracker
	keys    keymap.KeyMap
	now     time.Time
	dark    bool
	id      wire.ID
	m       Model
	w, h    int
}

func newFixture(t *testing.T, w, h int) *fixture {
	t.Helper()
	f := &fixture{t: t, tracker: session.NewTracker(session.DefaultConfig()), keys: keymap.Default(), now: t0, dark: true, w: w, h: h}
	params := json.RawMessage(`{"name":"slow","arguments":{}}`)
	r := f.tracker.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, f.now)
	raw := wire.Request(r.ID, wire.MethodToolsCall, params)
	msg, _ := wire.Decode(raw)
	f.apply(event.Event{Kind: event.Sent, RequestID: r.ID, Raw: raw, Msg: msg})
	f.id = r.ID
	f.m = New(r.ID, w, h)
	f.layout()
	return f
}

func (f *fixture) env() screen.Env {
	return screen.Env{Tracker: f.tracker, Now: f.now, Styles: look.NewStyles(f.dark), Keys: &f.keys, Line: termsafe.Line, Block: termsafe.Block}
}

// apply applies one event and lays the detail out again, as the root does
// after every message.
func (f *fixture) apply(ev event.Event) {
	f.t.Helper()
	if ev.Time.IsZero() {
		ev.Time = f.now
	}
	f.tracker.Apply(ev)
	if !f.m.id.IsZero() {
		f.layout()
	}
}

func (f *fixture) layout() {
	f.m = f.m.Layout(f.env(), Input{Dark: f.dark}, f.w, f.h)
}

func (f *fixture) progress(v, total float64, message string) {
	f.t.Helper()
	token, _ := f.id.Int()
	params, _ := json.Marshal(map[string]any{"progressToken": token, "progress": v, "total": total, "message": message})
	raw := wire.Notification(wire.NotifyProgress, params)
	msg, _ := wire.Decode(raw)
	p, _ := wire.DecodeProgress(msg.Params)
	f.apply(event.Event{Kind: event.Received, Raw: raw, Msg: msg, Progress: &p})
}

func (f *fixture) answer(result string) {
	f.t.Helper()
	raw := wire.ResultResponse(f.id, json.RawMessage(result))
	msg, err := wire.Decode(raw)
	if err != nil {
		f.t.Fatal(err)
	}
	f.apply(event.Event{Kind: event.Received, RequestID: f.id, Raw: raw, Msg: msg})
}

func (f *fixture) screen() string { return ansi.Strip(f.m.View(f.env(), f.w, f.h)) }

// The detail's body is built once per change of what it shows: progress
// (shown in the header) leaves it alone, and each thing the body does show
// — the response, a violation, the palette — rebuilds it, so it is never
// stale.
func TestDetailBodyRebuiltOnlyWhenItsSourceChanges(t *testing.T) {
	f := newFixture(t, 120, 38)
	body := func() string { return f.m.content }
	built := f.m.built
	first := body()
	if !strings.Contains(first, "REQUEST") || !strings.Contains(first, "(none)") {
		t.Fatalf("body before the answer:\n%s", first)
	}

	for v := 1.0; v <= 5; v++ {
		f.progress(v, 10, "step")
	}
	if !f.m.built.same(&built) || body() != first {
		t.Fatal("progress rebuilt the body, which does not show it")
	}
	if !strings.Contains(f.screen(), "5 progress (┼)") {
		t.Fatalf("the header does not show the progress:\n%s", f.screen())
	}

	f.progress(2, 10, "backwards") // a violation the body lists
	if !strings.Contains(body(), "VIOLATIONS") || !strings.Contains(body(), "progress_not_increasing") {
		t.Fatalf("the body does not list the new violation:\n%s", body())
	}

	f.answer(`{"resultType":"complete","content":[{"type":"text","text":"the answer"}]}`)
	if !strings.Contains(body(), `"the answer"`) || !strings.Contains(f.screen(), "RESPONSE") {
		t.Fatalf("the body does not show the response:\n%s", body())
	}

	dark := body()
	f.dark = false // a light terminal
	f.layout()
	if f.m.built.dark || body() == dark {
		t.Fatal("the body kept the dark palette's styling on a light terminal")
	}

	// A resize cuts the same body to the new width without building it.
	built = f.m.built
	f.w = 50
	f.layout()
	if !f.m.built.same(&built) || f.m.wrapped != 50 {
		t.Fatalf("a resize rebuilt the body (or did not rewrap it: %d)", f.m.wrapped)
	}
}

func TestCellGlyph(t *testing.T) {
	for _, c := range []struct {
		n    int
		want rune
	}{{1, '*'}, {2, '2'}, {9, '9'}, {10, '+'}} {
		if got := cellGlyph("*", c.n); got != c.want {
			t.Errorf("cellGlyph(*, %d) = %c, want %c", c.n, got, c.want)
		}
	}
}

// At 80 columns a header line too long for the width wraps at its words
// rather than being cut mid-word ("reason \"user requested cancellatio…"),
// the screen keeps its height, and the body's long lines wrap at words too.
func TestDetailHeaderWrapsAtWords(t *testing.T) {
	f := newFixture(t, 80, 24)
	f.now = t0.Add(500 * time.Millisecond)
	if _, err := f.tracker.RequestCancel(f.id, "user requested cancellation: no longer needed", session.CauseUser, f.now); err != nil {
		t.Fatal(err)
	}
	f.layout()
	s := f.screen()
	lines := strings.Split(s, "\n")
	if len(lines) != f.h {
		t.Errorf("the detail is %d lines high, want %d:\n%s", len(lines), f.h, s)
	}
	flat := strings.Join(strings.Fields(s), " ")
	if !strings.Contains(flat, `reason "user requested cancellation: no longer needed"`) {
		t.Errorf("the cancel's reason is not said whole:\n%s", s)
	}
	for _, l := range lines {
		if strings.HasSuffix(strings.TrimSpace(l), "…") {
			t.Errorf("a line is cut: %q", l)
		}
		if ansi.StringWidth(l) > f.w {
			t.Errorf("a line is wider than the screen: %q", l)
		}
	}
	bar := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "  ●") {
			bar = i
			break
		}
	}
	if bar < 0 || !strings.Contains(lines[bar-2], "needed") {
		t.Errorf("the timeline does not follow the wrapped cancel line:\n%s", s)
	}
}
