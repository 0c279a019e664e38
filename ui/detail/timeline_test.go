package detail

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"

	"github.com/charmbracelet/x/ansi"
)

// timelineOf is the fixture's timeline, its bar and rows unstyled.
func (f *fixture) timelineOf() []string {
	r, _ := f.tracker.Get(f.id)
	var out []string
	for _, l := range f.m.timeline(f.env(), r, f.w) {
		out = append(out, strings.TrimRight(ansi.Strip(l), " "))
	}
	return out
}

// Late progress in the cancel's own cell does not hide the cancel: the ✕
// keeps its cell and the late mark takes the next free one.
func TestTimelineCancelWinsItsCell(t *testing.T) {
	f := newFixture(t, 80, 24)
	f.now = t0.Add(time.Second)
	if _, err := f.tracker.RequestCancel(f.id, "user requested cancellation", session.CauseUser, f.now); err != nil {
		t.Fatal(err)
	}
	f.apply(event.Event{Kind: event.CancelSent, RequestID: f.id, Signal: event.SignalNotification, Reason: "user requested cancellation"})
	f.now = f.now.Add(time.Millisecond)
	f.progress(1, 10, "late")
	f.now = t0.Add(10 * time.Second)
	f.layout()
	if r, _ := f.tracker.Get(f.id); r.Late.ProgressAfterCancel != 1 {
		t.Fatalf("the progress was not judged late: %+v", r.Late)
	}
	tl := f.timelineOf()
	bar := []rune(strings.TrimSpace(tl[0]))
	cancel := -1
	for i, c := range bar {
		if c == '✕' {
			cancel = i
		}
	}
	if cancel < 0 {
		t.Fatalf("the cancel's ✕ is hidden:\n%s", strings.Join(tl, "\n"))
	}
	if cancel+1 >= len(bar) || bar[cancel+1] != '*' {
		t.Errorf("the late progress is not in the cell after the cancel:\n%s", strings.Join(tl, "\n"))
	}
	if !strings.Contains(strings.Join(tl, "\n"), "* 1 late progress") {
		t.Errorf("the late progress is not labelled:\n%s", strings.Join(tl, "\n"))
	}
}

// A task's timeline says what its glyphs mean, as the waterfall does.
func TestTimelineOfATaskHasALegend(t *testing.T) {
	f := newFixture(t, 100, 30)
	f.tracker.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &event.ConnInfo{Era: event.EraLegacy, Transport: event.TransportStdio}})
	params := json.RawMessage(`{"name":"report","arguments":{},"task":{"ttl":60000}}`)
	r := f.tracker.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, f.now)
	raw := wire.Request(r.ID, wire.MethodToolsCall, params)
	msg, _ := wire.Decode(raw)
	f.apply(event.Event{Kind: event.Sent, RequestID: r.ID, Raw: raw, Msg: msg})
	f.id = r.ID
	f.m = New(r.ID, f.w, f.h)
	f.now = t0.Add(300 * time.Millisecond)
	f.answer(`{"task":{"taskId":"t-1","status":"working","statusMessage":"started","createdAt":"2026-11-30T09:00:00Z","lastUpdatedAt":"2026-11-30T09:00:00Z","ttl":60000,"pollInterval":1000}}`)
	f.now = t0.Add(5 * time.Second)
	f.layout()
	if r, _ := f.tracker.Get(f.id); r.Task == nil {
		t.Fatalf("no task: %s", r.State)
	}
	tl := f.timelineOf()
	if !strings.Contains(tl[0], "◆") {
		t.Fatalf("no ◆ on the task's bar:\n%s", strings.Join(tl, "\n"))
	}
	if !strings.Contains(strings.Join(tl, "\n"), "◆ task status") {
		t.Errorf("no legend says what ◆ is:\n%s", strings.Join(tl, "\n"))
	}
	// A request that is no task keeps its timeline as it was.
	g := newFixture(t, 100, 30)
	if s := strings.Join(g.timelineOf(), "\n"); strings.Contains(s, "task status") {
		t.Errorf("a plain request's timeline has the task legend:\n%s", s)
	}
}

// Late progress is timed from the cancel, as the protocol log times it:
// a burst a few milliseconds after a cancel at 1s reads "+0.3ms…+12ms
// after the cancel", not "+1.0s…+1.0s".
func TestTimelineTimesLateProgressFromTheCancel(t *testing.T) {
	f := newFixture(t, 120, 35)
	f.now = t0.Add(time.Second)
	cancelAt := f.now
	if _, err := f.tracker.RequestCancel(f.id, "", session.CauseUser, f.now); err != nil {
		t.Fatal(err)
	}
	f.apply(event.Event{Kind: event.CancelSent, RequestID: f.id, Signal: event.SignalNotification})
	for i, after := range []time.Duration{300 * time.Microsecond, 4 * time.Millisecond, 12 * time.Millisecond} {
		f.now = cancelAt.Add(after)
		f.progress(float64(i+1), 10, "late")
	}
	f.now = t0.Add(3 * time.Second)
	f.layout()
	s := strings.Join(f.timelineOf(), "\n")
	if !strings.Contains(s, "* 3 late progress +0.3ms…+12ms after the cancel") {
		t.Errorf("the late progress is not timed from the cancel:\n%s", s)
	}
}

// Every timeline has a legend of the marks it draws, and only those: a
// cell holding more than nine marks shows "+", which the legend says.
func TestTimelineLegendSaysWhatIsDrawn(t *testing.T) {
	f := newFixture(t, 60, 24)
	f.now = t0.Add(time.Second)
	cancelAt := f.now
	if _, err := f.tracker.RequestCancel(f.id, "", session.CauseUser, f.now); err != nil {
		t.Fatal(err)
	}
	f.apply(event.Event{Kind: event.CancelSent, RequestID: f.id, Signal: event.SignalNotification})
	for i := range 12 {
		f.now = cancelAt.Add(time.Duration(i+1) * 100 * time.Microsecond)
		f.progress(float64(i+1), 20, "late")
	}
	f.now = t0.Add(3 * time.Second)
	f.layout()
	tl := f.timelineOf()
	legend := tl[len(tl)-1]
	if !strings.Contains(tl[0], "+") {
		t.Fatalf("no cell counts more than nine:\n%s", strings.Join(tl, "\n"))
	}
	for _, want := range []string{"● sent", "✕ cancel", "* late", "+ more than 9", "▶ now"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the legend lacks %q: %q", want, legend)
		}
	}
	for _, not := range []string{"◆", "· poll", "■ end", "that many"} {
		if strings.Contains(legend, not) {
			t.Errorf("the legend says %q, which the bar does not draw: %q", not, legend)
		}
	}
}
