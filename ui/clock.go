package ui

import (
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// clock is the UI's one timer: a single pending tick, at the nearest
// deadline the model has, tagged with a generation so that a tick a nearer
// deadline superseded is ignored. Its stop channel is closed when the
// program ends, so that no pending tick (nor any other command that waits
// on it) keeps a goroutine and a timer alive after it.
type clock struct {
	// tick makes the pending tick; tests replace it so that no command
	// sleeps.
	tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
	gen  int       // the pending tick's; an older tickMsg is stale
	at   time.Time // when the pending tick fires; zero: none is pending

	stopped  chan struct{}
	stopOnce sync.Once
}

// tickMsg is the clock's tick, tagged with its generation.
type tickMsg struct {
	gen int
}

// newClock returns a clock whose ticks are real timers.
func newClock() *clock {
	c := &clock{stopped: make(chan struct{})}
	c.tick = c.stoppableTick
	return c
}

// stoppableTick is tea.Tick that gives up when the program ends: tea.Tick
// waits on its timer whatever happens, which would leave goroutines behind
// for up to the longest timeout.
func (c *clock) stoppableTick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	stop := c.stopped
	return func() tea.Msg {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case now := <-t.C:
			return fn(now)
		case <-stop:
			return nil
		}
	}
}

// schedule keeps exactly one tick pending, at the nearest of wants (zero
// times are no deadline): it returns the command of a new tick only when
// none is pending or the pending one comes too late.
func (c *clock) schedule(now time.Time, wants ...time.Time) tea.Cmd {
	var want time.Time
	for _, t := range wants {
		if !t.IsZero() && (want.IsZero() || t.Before(want)) {
			want = t
		}
	}
	if want.IsZero() {
		return nil
	}
	if !c.at.IsZero() && !want.Before(c.at) {
		return nil // the pending tick comes soon enough
	}
	c.gen++
	c.at = want
	gen := c.gen
	d := want.Sub(now)
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return c.tick(d, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// fired reports whether msg is the pending tick (not a superseded one),
// which is then no longer pending.
func (c *clock) fired(msg tickMsg) bool {
	if msg.gen != c.gen {
		return false
	}
	c.at = time.Time{}
	return true
}

// stop releases the pending tick, and whatever else waits on done, for
// good. It may be called more than once.
func (c *clock) stop() { c.stopOnce.Do(func() { close(c.stopped) }) }

// done is closed once the clock is stopped: a command that waits for
// something that may never come waits on it too.
func (c *clock) done() <-chan struct{} { return c.stopped }

// end stops the clock and returns the command that ends the program.
func (c *clock) end() tea.Cmd {
	c.stop()
	return tea.Quit
}
