package ui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// fakeTicks makes a clock whose ticks are recorded instead of waited for.
func fakeTicks() (*clock, *[]time.Duration, *[]func(time.Time) tea.Msg) {
	c := newClock()
	var ds []time.Duration
	var fns []func(time.Time) tea.Msg
	c.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		ds = append(ds, d)
		fns = append(fns, fn)
		return func() tea.Msg { return fn(time.Time{}) }
	}
	return c, &ds, &fns
}

func TestClockKeepsOneTickAtTheNearestDeadline(t *testing.T) {
	c, ds, fns := fakeTicks()
	if cmd := c.schedule(t0); cmd != nil || len(*ds) != 0 {
		t.Fatalf("no deadline made a tick (%v)", *ds)
	}
	if c.schedule(t0, time.Time{}, t0.Add(3*time.Second), t0.Add(time.Second)) == nil {
		t.Fatal("deadlines made no tick")
	}
	if want := []time.Duration{time.Second}; fmt.Sprint(*ds) != fmt.Sprint(want) {
		t.Fatalf("ticks %v, want %v (the nearest of the deadlines)", *ds, want)
	}
	if cmd := c.schedule(t0, t0.Add(2*time.Second)); cmd != nil || len(*ds) != 1 {
		t.Fatalf("a later deadline replaced the pending tick (ticks %v)", *ds)
	}
	if c.schedule(t0, t0.Add(500*time.Millisecond)) == nil || len(*ds) != 2 {
		t.Fatalf("a nearer deadline made no tick (ticks %v)", *ds)
	}
	stale, current := (*fns)[0](t0).(tickMsg), (*fns)[1](t0).(tickMsg)
	if c.fired(stale) {
		t.Error("the superseded tick counted as the pending one")
	}
	if !c.fired(current) {
		t.Fatal("the pending tick did not count")
	}
	// Fired, nothing is pending: any deadline makes a tick again, and one
	// already due waits the least a timer can.
	if c.schedule(t0, t0.Add(-time.Second)) == nil || (*ds)[2] != time.Millisecond {
		t.Fatalf("a past deadline after the tick: ticks %v, want a new one of 1ms", *ds)
	}
}

func TestClockStopReleasesWhatWaits(t *testing.T) {
	c := newClock()
	tick := c.tick(time.Hour, func(time.Time) tea.Msg { return tickMsg{} })
	got := make(chan tea.Msg, 1)
	go func() { got <- tick() }()
	c.stop()
	c.stop() // a second stop (a quit, then the program's owner) is harmless
	select {
	case msg := <-got:
		if msg != nil {
			t.Errorf("a stopped tick delivered %v", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an hour's tick still waits after stop")
	}
	select {
	case <-c.done():
	default:
		t.Error("done is not closed after stop")
	}
	if _, ok := c.end()().(tea.QuitMsg); !ok {
		t.Error("end does not quit")
	}
}
