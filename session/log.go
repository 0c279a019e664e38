package session

import (
	"time"

	"inflight/event"
	"inflight/wire"
)

// ring keeps the newest limit values. It grows by append until full, so a
// tracker that sees little traffic never pays for the whole bound, then
// overwrites the oldest slot: pushing is O(1) and allocation-free once full.
type ring[T any] struct {
	buf   []T
	limit int
	start int   // index in buf of the oldest value once full
	total int64 // values ever pushed
}

// push stores v and returns the index in buf where it went.
func (r *ring[T]) push(v T) int {
	r.total++
	if len(r.buf) < r.limit {
		if len(r.buf) == cap(r.buf) {
			r.grow()
		}
		r.buf = append(r.buf, v)
		return len(r.buf) - 1
	}
	i := r.start
	r.buf[i] = v
	r.start++
	if r.start == len(r.buf) {
		r.start = 0
	}
	return i
}

// grow makes room as append would (doubling, then a quarter at a time),
// but never past the bound: a full ring holds limit values, not the slack
// of its last growth (append's may go past any bound).
func (r *ring[T]) grow() {
	n := len(r.buf)
	c := 2 * n
	if n >= 256 {
		c = n + (n+3*256)/4
	}
	buf := make([]T, n, min(max(c, 8), r.limit))
	copy(buf, r.buf)
	r.buf = buf
}

func (r *ring[T]) len() int { return len(r.buf) }

// at returns the i-th value, oldest first.
func (r *ring[T]) at(i int) *T {
	j := r.start + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

// Direction says which way a log entry went (event.Direction).
type Direction = event.Direction

// The directions of log entries.
const (
	DirLocal = event.DirLocal
	DirOut   = event.DirOut
	DirIn    = event.DirIn
)

// LogEntry is one applied event in the protocol log. Raw and the strings are
// as the server sent them: sanitise before display.
type LogEntry struct {
	Time time.Time
	Dir  Direction
	// Kind is the client event kind; MsgKind the JSON-RPC kind when the
	// event carried a message.
	Kind    event.Kind
	MsgKind wire.Kind
	// Internal marks the client's own housekeeping traffic.
	Internal bool
	// Signal is the cancel signal of an EventCancelSent.
	Signal event.CancelSignal
	// Method is the message's method; for a response, the method of the
	// request it answers when the tracker knows it.
	Method string
	// ID is the request the entry concerns (message ID or event RequestID).
	ID wire.ID
	// Violation is the code of the first protocol violation this event
	// caused, "" when none.
	Violation string
	// Text is the stderr line, note, HTTP status text, cancel reason or
	// error text of the event.
	Text string
	// Status is the HTTP status of an HTTP event.
	Status int
	// Raw is the exact bytes, at most Config.LogEntryBytes of them.
	Raw []byte
	// Truncated counts the bytes of Raw dropped, by the client or here.
	Truncated int
	// ByClient: for a closed stream, inflight closed it.
	ByClient bool
	// Info is the connection an EventConnected established.
	Info *event.ConnInfo
	// Parent is the task request the entry's request serves (a tasks/get,
	// tasks/result or tasks/cancel; see Request.Parent), on its sent
	// message and its state entries.
	Parent wire.ID
	// IsState marks an entry the tracker wrote itself: request ID moved
	// From one state to State (Kind is then zero).
	IsState     bool
	From, State State
	// Coalesced counts the later progress notifications for the same
	// request merged into this one's entry; Raw is then the latest one's
	// bytes and LastTime its time. See LogProgressPerRequest.
	Coalesced int
	LastTime  time.Time
	// Verdict is the tracker's judgement of a message that arrived for a
	// request given up (cancelled, timed out, lost): "late" or "crossed",
	// as Verdict says it for the trace; "" for everything else. AfterCancel
	// is then how long after the cancel was requested it arrived (after
	// the request was given up, when it was given up without a cancel).
	Verdict     string
	AfterCancel time.Duration
	// RTT is the measured round trip of an event.RoundTrip (Text names
	// what was timed).
	RTT time.Duration
}

// LogProgressPerRequest is how many timely progress notifications of one
// request the protocol log keeps one by one. After that they are merged
// into one entry that counts them and shows the latest, so that a flood
// (the demo's flood sends 200 000) cannot push the rest of the log — the
// requests, cancels and late responses a person is debugging — out of its
// bound. Progress that breaks a rule (late, not increasing, unknown) is
// always logged on its own.
const LogProgressPerRequest = 100

// ProtocolLog is the bounded log of every event applied, Internal ones too.
type ProtocolLog struct {
	ring     ring[logRec]
	rawLimit int
}

// logRec is how the log keeps an entry: what nearly every entry has, in
// 120 bytes, and what few have (a violation, a verdict, a coalesced run,
// an HTTP status, a task's parent…) behind a pointer, nil when none of it
// is set. A full log holds Config.LogEntries of them per server, and a
// LogEntry is twice the size. At builds the LogEntry.
type logRec struct {
	Time     time.Time
	Method   string
	ID       wire.ID
	Text     string
	Raw      []byte
	more     *logMore
	Dir      Direction
	Kind     event.Kind
	MsgKind  wire.Kind
	Internal bool
	Signal   event.CancelSignal
	ByClient bool
	IsState  bool
	From     State
	State    State
}

// logMore is the part of a LogEntry few entries have (see LogEntry).
type logMore struct {
	Violation, Verdict string
	Status, Truncated  int
	Coalesced          int
	Info               *event.ConnInfo
	Parent             wire.ID
	LastTime           time.Time
	AfterCancel, RTT   time.Duration
}

// noMore is what a record without its logMore reads.
var noMore logMore

// extra returns the record's logMore, made on first use: for writing.
func (e *logRec) extra() *logMore {
	if e.more == nil {
		e.more = new(logMore)
	}
	return e.more
}

// peek returns the record's logMore for reading, never nil; it must not be
// written through (extra is for that).
func (e *logRec) peek() *logMore {
	if e.more == nil {
		return &noMore
	}
	return e.more
}

// pack is the record of e.
func pack(e LogEntry) logRec {
	r := logRec{Time: e.Time, Method: e.Method, ID: e.ID, Text: e.Text, Raw: e.Raw,
		Dir: e.Dir, Kind: e.Kind, MsgKind: e.MsgKind, Internal: e.Internal, Signal: e.Signal,
		ByClient: e.ByClient, IsState: e.IsState, From: e.From, State: e.State}
	m := logMore{Violation: e.Violation, Verdict: e.Verdict, Status: e.Status, Truncated: e.Truncated,
		Coalesced: e.Coalesced, Info: e.Info, Parent: e.Parent, LastTime: e.LastTime,
		AfterCancel: e.AfterCancel, RTT: e.RTT}
	if m != (logMore{}) {
		r.more = &m
	}
	return r
}

// entry is the LogEntry the record keeps.
func (e *logRec) entry() LogEntry {
	m := e.peek()
	return LogEntry{Time: e.Time, Dir: e.Dir, Kind: e.Kind, MsgKind: e.MsgKind, Internal: e.Internal,
		Signal: e.Signal, Method: e.Method, ID: e.ID, Violation: m.Violation, Text: e.Text,
		Status: m.Status, Raw: e.Raw, Truncated: m.Truncated, ByClient: e.ByClient, Info: m.Info,
		Parent: m.Parent, IsState: e.IsState, From: e.From, State: e.State, Coalesced: m.Coalesced,
		LastTime: m.LastTime, Verdict: m.Verdict, AfterCancel: m.AfterCancel, RTT: m.RTT}
}

// clone copies the log, and each record's logMore, which is written in
// place.
func (l ProtocolLog) clone() ProtocolLog {
	l.ring = l.ring.clone()
	for i := range l.ring.buf {
		if m := l.ring.buf[i].more; m != nil {
			cp := *m
			l.ring.buf[i].more = &cp
		}
	}
	return l
}

// Len is the number of entries kept.
func (l *ProtocolLog) Len() int { return l.ring.len() }

// At returns the i-th entry kept, oldest first (0 ≤ i < Len).
func (l *ProtocolLog) At(i int) LogEntry { return l.ring.at(i).entry() }

// Total counts every entry ever appended; Total-Len were dropped.
func (l *ProtocolLog) Total() int64 { return l.ring.total }

// append logs an event and returns the slot index, so that a violation found
// while applying the event can mark it. It allocates nothing unless the raw
// bytes must be clipped, because every message passes through here.
func (l *ProtocolLog) append(ev *event.Event) int {
	return l.ring.push(pack(l.entry(ev)))
}

// slot is the buf index of the entry at position pos (Total right after it
// was appended), if it is still kept.
func (l *ProtocolLog) slot(pos int64) (int, bool) {
	first := l.ring.total - int64(l.ring.len()) // position of the oldest kept, minus one
	if pos <= first || pos > l.ring.total {
		return 0, false
	}
	j := l.ring.start + int(pos-first-1)
	if j >= len(l.ring.buf) {
		j -= len(l.ring.buf)
	}
	return j, true
}

// entry builds the log entry of an event.
func (l *ProtocolLog) entry(ev *event.Event) LogEntry {
	e := LogEntry{
		Time:      ev.Time,
		Dir:       ev.Kind.Direction(),
		Kind:      ev.Kind,
		MsgKind:   ev.Msg.Kind,
		Internal:  ev.Internal,
		Signal:    ev.Signal,
		Method:    ev.Msg.Method,
		ID:        ev.RequestID,
		Status:    ev.Status,
		Raw:       ev.Raw,
		Truncated: ev.Truncated,
		ByClient:  ev.ByClient,
		Info:      ev.Info,
		RTT:       ev.RTT,
	}
	if e.ID.IsZero() {
		e.ID = ev.Msg.ID
	}
	switch {
	case ev.Kind == event.CancelSent:
		e.Text = ev.Reason
	case ev.Text != "":
		e.Text = ev.Text
	case ev.Err != nil:
		e.Text = ev.Err.Error()
	}
	if len(e.Raw) > l.rawLimit {
		// Copy rather than reslice: a slice of a 30 MB response would keep
		// all of it alive for as long as the entry lives.
		e.Truncated += len(e.Raw) - l.rawLimit
		e.Raw = append([]byte(nil), e.Raw[:l.rawLimit]...)
	}
	return e
}

// StderrLine is one line a stdio server wrote to its stderr (raw: sanitise
// before display).
type StderrLine struct {
	Time time.Time
	Text string
	// Truncated counts bytes the client dropped from a very long line.
	Truncated int
}

// StderrLog is the bounded list of the server's stderr lines.
type StderrLog struct {
	ring ring[StderrLine]
}

// Len is the number of lines kept.
func (l *StderrLog) Len() int { return l.ring.len() }

// At returns the i-th line kept, oldest first (0 ≤ i < Len).
func (l *StderrLog) At(i int) StderrLine { return *l.ring.at(i) }

// Total counts every line ever received; Total-Len were dropped.
func (l *StderrLog) Total() int64 { return l.ring.total }
