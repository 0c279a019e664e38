package source

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/event"
	"inflight/trace"
	"inflight/wire"
)

// session is a client's traffic as call --trace records it.
func recordedSession(t *testing.T) ([]event.Event, []byte) {
	t.Helper()
	call := wire.Request(wire.IntID(1), "tools/call", []byte(`{"name":"slow"}`))
	cmsg, _ := wire.Decode(call)
	prog := wire.Notification(wire.NotifyProgress, []byte(`{"progressToken":1,"progress":1}`))
	pmsg, p, _ := wire.DecodeLine(prog)
	answer := wire.ResultResponse(wire.IntID(1), []byte(`{"content":[]}`))
	amsg, _ := wire.Decode(answer)
	info := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ProtocolVersion: wire.VersionModern, ServerName: "demo"}
	evs := []event.Event{
		{Kind: event.Connected, Time: t0.Add(2 * time.Millisecond), Info: &info},
		{Kind: event.Sent, Time: t0.Add(10*time.Millisecond + 250*time.Microsecond), RequestID: wire.IntID(1), Raw: call, Msg: cmsg},
		{Kind: event.Stderr, Time: t0.Add(400 * time.Millisecond), Text: "working"},
		{Kind: event.Received, Time: t0.Add(1500 * time.Millisecond), Raw: prog, Msg: pmsg, Progress: p},
		{Kind: event.Received, Time: t0.Add(3 * time.Second), RequestID: wire.IntID(1), Raw: answer, Msg: amsg},
	}
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, t0, nil)
	for _, ev := range evs {
		if err := tw.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	id := wire.IntID(1)
	_ = tw.Write(trace.Record{MS: 3000, Dir: trace.DirLocal, Event: trace.EventState, ID: &id, State: "completed", From: "running"})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return evs, buf.Bytes()
}

// TestFileReadsATrace: a trace written by trace.Writer reads back as the
// events it was written from, at their times (to the microsecond a trace
// keeps), with the tracker's lines as information.
func TestFileReadsATrace(t *testing.T) {
	evs, data := recordedSession(t)
	f, err := ReadFile(bytes.NewReader(data), t0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Relayed() {
		t.Error("inflight's own trace read as a proxy's")
	}
	got := f.Events()
	if len(got) != len(evs) {
		t.Fatalf("%d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if got[i].Kind != evs[i].Kind || !got[i].Time.Equal(evs[i].Time) || !bytes.Equal(got[i].Raw, evs[i].Raw) || got[i].RequestID != evs[i].RequestID {
			t.Errorf("event %d: got %s at %v id %v, want %s at %v id %v", i, got[i].Kind, got[i].Time, got[i].RequestID, evs[i].Kind, evs[i].Time, evs[i].RequestID)
		}
	}
	if got[3].Progress == nil || got[3].Progress.Token != wire.IntID(1) {
		t.Errorf("progress: %+v", got[3].Progress)
	}
	items := f.Items()
	if in, ok := items[len(items)-1].Info.(TrackerState); !ok || in.State != "completed" || !in.At.Equal(t0.Add(3*time.Second)) {
		t.Errorf("last item %+v", items[len(items)-1])
	}
	// Placed elsewhere in time, the trace keeps its offsets.
	later := t0.Add(time.Hour)
	f2, _ := ReadFile(bytes.NewReader(data), later)
	if d := f2.Events()[1].Time.Sub(later); d != 10*time.Millisecond+250*time.Microsecond {
		t.Errorf("offset %v", d)
	}
}

// TestFileTruncatedLastLine: a trace whose last line was cut short says
// so, and keeps every event before it.
func TestFileTruncatedLastLine(t *testing.T) {
	evs, data := recordedSession(t)
	lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	last := lines[len(lines)-1]
	cut := append(bytes.Join(lines[:len(lines)-1], nil), last[:len(last)/2]...)
	f, err := ReadFile(bytes.NewReader(cut), t0)
	var le *trace.LineError
	if !errors.As(err, &le) || le.Line != len(lines) {
		t.Fatalf("err %v; want the line error of line %d", err, len(lines))
	}
	if got := f.Events(); len(got) != len(evs) {
		t.Errorf("%d events kept, want %d", len(got), len(evs))
	}
	if n := len(f.Items()); n != len(evs) {
		t.Errorf("%d items: the cut state line made one", n)
	}
}

// TestFileRelayed: a proxy's --trace reads as relayed traffic.
func TestFileRelayed(t *testing.T) {
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, t0, nil)
	tw.SetSenders("host", "server")
	call := wire.Request(wire.IntID(1), "tools/call", []byte(`{"name":"slow"}`))
	msg, _ := wire.Decode(call)
	_ = tw.Event(event.Event{Kind: event.Sent, Time: t0, RequestID: wire.IntID(1), Raw: call, Msg: msg})
	_ = tw.Write(trace.Record{MS: 5, Dir: trace.DirLocal, Event: trace.EventNote, Text: trace.NoteHostClosed})
	_ = tw.Close()
	f, err := ReadFile(&buf, t0)
	if err != nil || !f.Relayed() {
		t.Fatalf("relayed %v, err %v", f.Relayed(), err)
	}
	if _, ok := f.Items()[1].Info.(HostGone); !ok {
		t.Errorf("the host's end: %+v", f.Items()[1])
	}
}

func itemsAt(ms ...int) []Item {
	items := make([]Item, len(ms))
	for i, m := range ms {
		items[i] = Bare(event.Event{Kind: event.Note, Time: t0.Add(time.Duration(m) * time.Millisecond), Text: string(rune('a' + i))})
	}
	return items
}

func texts(items []Item) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Event.Text)
	}
	return b.String()
}

// TestPlayer releases items as they were recorded, at a chosen speed,
// from the first item on.
func TestPlayer(t *testing.T) {
	wall := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPlayer(itemsAt(100, 100, 300, 1100), 1, wall)
	if got := texts(p.Due(wall)); got != "ab" {
		t.Errorf("at the start: %q (the first item, and those at its time)", got)
	}
	if at, ok := p.Next(); !ok || !at.Equal(wall.Add(200*time.Millisecond)) {
		t.Errorf("next at %v %v", at, ok)
	}
	if got := texts(p.Due(wall.Add(199 * time.Millisecond))); got != "" {
		t.Errorf("early: %q", got)
	}
	if got := texts(p.Due(wall.Add(200 * time.Millisecond))); got != "c" {
		t.Errorf("on time: %q", got)
	}
	// Twice as fast from 400ms (recorded 500ms): the last item, 600ms of
	// recording ahead, is due 300ms later.
	p.SetSpeed(wall.Add(400*time.Millisecond), 2)
	if pos := p.Position(wall.Add(400 * time.Millisecond)); !pos.Equal(t0.Add(500 * time.Millisecond)) {
		t.Errorf("position %v", pos.Sub(t0))
	}
	if at, _ := p.Next(); !at.Equal(wall.Add(700 * time.Millisecond)) {
		t.Errorf("next at %v", at.Sub(wall))
	}
	if got := texts(p.Due(wall.Add(700 * time.Millisecond))); got != "d" {
		t.Errorf("at double speed: %q", got)
	}
	if _, ok := p.Next(); ok {
		t.Error("a next item after the last")
	}
	if p.Speed() != 2 || NewPlayer(nil, 0, wall).Speed() != 1 {
		t.Error("speeds")
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	waiting chan struct{} // a wait began
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
	} else {
		c.waiters = append(c.waiters, waiter{c.now.Add(d), ch})
	}
	c.waiting <- struct{}{}
	return ch
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// TestPlay delivers a trace's items on a channel as a clock moves.
func TestPlay(t *testing.T) {
	clock := &fakeClock{now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), waiting: make(chan struct{}, 16)}
	pl := Play(NewPlayer(itemsAt(0, 50, 2000), 1, clock.now), clock)
	var _ Source = pl
	next := func() Item {
		t.Helper()
		select {
		case it := <-pl.Items():
			return it
		case <-time.After(5 * time.Second):
			t.Fatal("no item")
		}
		return Item{}
	}
	if got := next(); got.Event.Text != "a" {
		t.Errorf("first %q", got.Event.Text)
	}
	<-clock.waiting
	select {
	case it := <-pl.Items():
		t.Fatalf("%q came before its time", it.Event.Text)
	default:
	}
	clock.advance(50 * time.Millisecond)
	if got := next(); got.Event.Text != "b" {
		t.Errorf("second %q", got.Event.Text)
	}
	<-clock.waiting
	clock.advance(2 * time.Second)
	if got := next(); got.Event.Text != "c" {
		t.Errorf("third %q", got.Event.Text)
	}
	if _, ok := <-pl.Items(); ok {
		t.Error("the play did not end after its last item")
	}
	if pl.Err() != nil {
		t.Error(pl.Err())
	}
	pl.Close()
}

// TestPlayClose stops a play that waits.
func TestPlayClose(t *testing.T) {
	clock := &fakeClock{now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), waiting: make(chan struct{}, 16)}
	pl := Play(NewPlayer(itemsAt(0, 5000), 1, clock.now), clock)
	<-pl.Items()
	<-clock.waiting
	pl.Close()
	pl.Close()
	if _, ok := <-pl.Items(); ok {
		t.Error("an item after Close")
	}
}
