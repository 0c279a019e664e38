package source

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"inflight/event"
	"inflight/trace"
)

// File is a trace file read whole (as `call --trace`, the TUI's --trace
// and `proxy --trace` write it): its items, each at the time it was
// recorded, for a Player to release at a chosen pace.
type File struct {
	items []Item
	// relayed: the trace is a proxy's (its messages name who sent them).
	relayed bool
}

// ReadFile reads a trace whose "ms" count from start (a trace keeps no
// clock time of its own: start places it). A line that is not a record —
// a last line cut short by a process that was killed while writing — is
// skipped, and said in the error, which joins one *trace.LineError per
// such line: the file holds every record read, whatever the error. An
// error reading r ends the reading there.
func ReadFile(r io.Reader, start time.Time) (*File, error) {
	recs, bad, err := trace.ReadAll(r)
	f := &File{}
	for i := range recs {
		if (recs[i].Dir == trace.DirOut || recs[i].Dir == trace.DirIn) && recs[i].By != "" {
			f.relayed = true
			break
		}
	}
	dec := Decoder{Start: start, Relayed: f.relayed}
	for i := range recs {
		if it, ok := dec.Decode(&recs[i]); ok {
			f.items = append(f.items, it)
		}
	}
	errs := make([]error, 0, len(bad)+1)
	for _, le := range bad {
		errs = append(errs, le)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("read the trace: %w", err))
	}
	return f, errors.Join(errs...)
}

// Relayed reports whether the trace is of traffic a proxy relayed.
func (f *File) Relayed() bool { return f.relayed }

// Items are everything the trace says, in its order, at its times.
func (f *File) Items() []Item { return f.items }

// Events are the trace's events, in its order, at their recorded times.
func (f *File) Events() []event.Event {
	evs := make([]event.Event, 0, len(f.items))
	for i := range f.items {
		if f.items[i].HasEvent() {
			evs = append(evs, f.items[i].Event)
		}
	}
	return evs
}

// Time is when the item happened: its event's time, or its Info's.
func (it *Item) Time() time.Time {
	if it.HasEvent() || it.Info == nil {
		return it.Event.Time
	}
	return it.Info.at()
}

func (i TrackerState) at() time.Time     { return i.At }
func (i TrackerViolation) at() time.Time { return i.At }
func (i HostClosedStream) at() time.Time { return i.At }
func (i HostGone) at() time.Time         { return i.At }
func (i HostResumed) at() time.Time      { return i.At }
func (i HostReopened) at() time.Time     { return i.At }
func (i HostEndedSession) at() time.Time { return i.At }
func (i UpstreamEnded) at() time.Time    { return i.At }
func (i WindowOver) at() time.Time       { return i.At }
func (i Injected) at() time.Time         { return i.At }
func (i Reply) at() time.Time            { return i.At }

// Player releases a trace's items as they happened, at a chosen speed:
// an item recorded d after the play's position is due d/speed after the
// play was last anchored. It keeps no clock of its own — every call says
// what time it is — so a tick-driven view and Play drive it alike, and a
// test with a fixed clock. It is not safe for concurrent use.
type Player struct {
	items []Item
	next  int
	speed float64
	// Anchor: at wall time began the play stood at the recorded time pos.
	began, pos time.Time
}

// NewPlayer returns a player of items (in order) at speed (1 is as
// recorded, 2 twice as fast; at most 0 means 1), whose play begins at
// now with the first item.
func NewPlayer(items []Item, speed float64, now time.Time) *Player {
	p := &Player{items: items, speed: normalSpeed(speed), began: now}
	if len(items) > 0 {
		p.pos = items[0].Time()
	}
	return p
}

func normalSpeed(s float64) float64 {
	if s <= 0 {
		return 1
	}
	return s
}

// Position is the recorded time the play has reached at now.
func (p *Player) Position(now time.Time) time.Time {
	return p.pos.Add(time.Duration(float64(now.Sub(p.began)) * p.speed))
}

// Speed is the play's speed.
func (p *Player) Speed() float64 { return p.speed }

// SetSpeed changes the speed from now on: what was due stays due.
func (p *Player) SetSpeed(now time.Time, speed float64) {
	p.pos, p.began = p.Position(now), now
	p.speed = normalSpeed(speed)
}

// Due returns the items whose time has come at now, in order, and moves
// past them.
func (p *Player) Due(now time.Time) []Item {
	pos := p.Position(now)
	from := p.next
	for p.next < len(p.items) && !p.items[p.next].Time().After(pos) {
		p.next++
	}
	return p.items[from:p.next]
}

// Next is the wall time at which the next item is due; ok is false when
// every item was released.
func (p *Player) Next() (at time.Time, ok bool) {
	if p.next >= len(p.items) {
		return time.Time{}, false
	}
	ahead := p.items[p.next].Time().Sub(p.pos)
	return p.began.Add(time.Duration(float64(ahead) / p.speed)), true
}

// Clock is what Play releases items against.
type Clock interface {
	Now() time.Time
	// After delivers once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Playing is a Player run against a clock, as a Source: a goroutine
// delivers each item when it is due.
type Playing struct {
	items    chan Item
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// Play runs p against clock until every item was delivered or Close; it
// owns p from then on.
func Play(p *Player, clock Clock) *Playing {
	pl := &Playing{items: make(chan Item, itemBuffer), stop: make(chan struct{}), done: make(chan struct{})}
	go pl.run(p, clock)
	return pl
}

func (pl *Playing) run(p *Player, clock Clock) {
	defer close(pl.done)
	defer close(pl.items)
	for {
		for _, it := range p.Due(clock.Now()) {
			select {
			case pl.items <- it:
			case <-pl.stop:
				return
			}
		}
		at, ok := p.Next()
		if !ok {
			return
		}
		select {
		case <-clock.After(at.Sub(clock.Now())):
		case <-pl.stop:
			return
		}
	}
}

// Items delivers the trace's items as they fall due; it is closed after
// the last, or on Close.
func (pl *Playing) Items() <-chan Item { return pl.items }

// Err is nil: a file read whole has nothing left to fail.
func (pl *Playing) Err() error { return nil }

// Close stops the play and waits for its goroutine to end.
func (pl *Playing) Close() {
	pl.stopOnce.Do(func() { close(pl.stop) })
	<-pl.done
}
