package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// Replay is a trace opened to be played under the user's hand: the
// tracker as it stood at any moment of the recorded run — every item up
// to that moment applied at its recorded time, as the run applied it —
// reached quickly from anywhere in the file.
//
// Opening reads the trace once, judging every event again as the run did
// (feeder) and noting where it disagrees with the trace, where the run's
// flags are (late traffic, violations, timeouts), and a checkpoint of the
// tracker every so many items (a Clone). A move to another moment plays
// on from the nearest checkpoint before it, or from where the replay
// stands when that is nearer, reading the file again from the
// checkpoint's line: the items are never held in memory, which a
// million-line trace would not fit in.
//
// A Replay is not safe for concurrent use, and the tracker it hands out
// (Tracker) is its own: the caller reads it, never changes it.
type Replay struct {
	src     io.ReaderAt
	size    int64
	start   time.Time
	cfg     session.Config
	relayed bool

	// times[i] is the latest recorded time (since start) among items
	// 0…i: a trace's lines are in the order they were applied, which can
	// put a line a little before one stamped earlier, and the moment a
	// replay shows only moves forward with the items.
	times  []time.Duration
	checks []checkpoint
	every  int
	budget int64
	flags  []Flag
	notes  []Disagreement
	damage *Damage
	// records counts the lines that were trace records.
	records int

	// The cursor: n items applied to fd.tr, the moment shown, and the
	// stream that reads item n next (nil at the end of the first reading,
	// whose stream is gone).
	fd feeder
	n  int
	at time.Time
	st *stream
}

// ReplayOptions configure OpenReplay.
type ReplayOptions struct {
	// Start is when the trace began: its "ms" count from it.
	Start time.Time
	// Tracker is the tracker's policy (timeouts, late window), as the
	// recording run had it: a trace does not say it.
	Tracker session.Config
	// Every is how many items apart checkpoints are at first (0: 4096);
	// Budget how many bytes they may take in all, estimated (0: 64 MiB).
	// Past it, every other checkpoint is dropped and the spacing doubled.
	Every  int
	Budget int64
}

// Disagreement is an item the replay's tracker judged otherwise than the
// trace says the recording tracker did.
type Disagreement struct {
	Item int
	Text string
}

// Damage is what was wrong with a trace that opened anyway: lines that
// are not records (skipped; a last line cut short by a process killed
// while writing), or a reading that broke off.
type Damage struct {
	// Skipped counts the lines that are not trace records; First is the
	// first of them.
	Skipped int
	First   *trace.LineError
	// Broke is why the reading stopped before the end of the file, after
	// line BrokeAfter (nil: it read to the end).
	Broke      error
	BrokeAfter int
}

func (d *Damage) Error() string {
	var s string
	if d.Skipped > 0 {
		s = fmt.Sprintf("line %d is not a trace record", d.First.Line)
		if d.Skipped > 1 {
			s = fmt.Sprintf("%d lines are not trace records (the first: line %d)", d.Skipped, d.First.Line)
		}
		s += ", skipped"
	}
	if d.Broke != nil {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("the trace breaks off after line %d: %v", d.BrokeAfter, d.Broke)
	}
	return s
}

type checkpoint struct {
	n    int
	off  int64
	line int
	tr   *session.Tracker
}

// ErrNotATrace is OpenReplay's error for a file with no trace record.
var ErrNotATrace = errors.New("not an inflight trace")

// OpenReplay reads the trace in src (size bytes) and stands at its end.
// It fails only when src holds no trace record at all (ErrNotATrace) or
// cannot be read; a damaged trace opens as far as it goes, and Damage
// says what was wrong.
func OpenReplay(src io.ReaderAt, size int64, o ReplayOptions) (*Replay, error) {
	rp := &Replay{src: src, size: size, start: o.Start, cfg: o.Tracker, every: o.Every, budget: o.Budget}
	if rp.every <= 0 {
		rp.every = 4096
	}
	if rp.budget <= 0 {
		rp.budget = 64 << 20
	}
	rp.relayed = sniffRelayed(src, size)
	rp.fd = feeder{tr: session.NewTracker(o.Tracker), relayed: rp.relayed, judge: true, mine: map[string]int{}, theirs: map[string]int{},
		disagree: func(text string) { rp.notes = append(rp.notes, Disagreement{Item: len(rp.times), Text: text}) },
		flag:     func(f Flag) { rp.flags = append(rp.flags, f) }}
	st := rp.newStream(0, 0)
	st.bad = rp.skipped
	stop := make(chan struct{})
	defer close(stop)
	st.piped(stop)
	rp.fd.ahead = st.lookAhead()
	for {
		e, ok := st.next()
		if !ok {
			break
		}
		rp.checkpoint(e)
		rp.fd.apply(&e.it, len(rp.times))
		t := e.it.Time().Sub(rp.start)
		if n := len(rp.times); n > 0 && t < rp.times[n-1] {
			t = rp.times[n-1]
		}
		rp.times = append(rp.times, t)
	}
	rp.records = st.records
	if st.err != nil && !errors.Is(st.err, io.EOF) {
		if st.records == 0 && rp.damage == nil {
			return nil, fmt.Errorf("read the trace: %w", st.err)
		}
		rp.damaged().Broke, rp.damaged().BrokeAfter = st.err, st.errLine
	}
	if rp.records == 0 {
		return nil, ErrNotATrace
	}
	rp.fd.ended()
	rp.fd.judge = false
	rp.n, rp.at = len(rp.times), rp.End()
	return rp, nil
}

// sniffRelayed reports whether the trace is a proxy's: its messages say
// who sent them. The first message line tells.
func sniffRelayed(src io.ReaderAt, size int64) bool {
	rd := trace.NewReader(io.NewSectionReader(src, 0, size))
	for range 10_000 {
		rec, err := rd.Next()
		var le *trace.LineError
		switch {
		case errors.As(err, &le):
			continue
		case err != nil:
			return false
		case rec.Dir == trace.DirOut || rec.Dir == trace.DirIn:
			if len(rec.Msg) > 0 || rec.Event != "" && rec.Dir != trace.DirLocal {
				return rec.By != ""
			}
		}
	}
	return false
}

func (rp *Replay) damaged() *Damage {
	if rp.damage == nil {
		rp.damage = &Damage{}
	}
	return rp.damage
}

func (rp *Replay) skipped(le *trace.LineError) {
	d := rp.damaged()
	if d.First == nil {
		d.First = le
	}
	d.Skipped++
}

// checkpoint keeps the tracker before the item e holds when the last
// checkpoint is far enough behind, and thins the checkpoints out when
// they grow past the budget.
func (rp *Replay) checkpoint(e *entry) {
	n := len(rp.times)
	if len(rp.checks) > 0 && n-rp.checks[len(rp.checks)-1].n < rp.every {
		return
	}
	rp.checks = append(rp.checks, checkpoint{n: n, off: e.off, line: e.line, tr: rp.fd.tr.Clone()})
	for len(rp.checks) > 2 && rp.checkpointBytes() > rp.budget {
		kept := rp.checks[:1]
		for i, c := range rp.checks[1:] {
			if i%2 == 1 {
				kept = append(kept, c)
			}
		}
		clear(rp.checks[len(kept):])
		rp.checks = kept
		rp.every *= 2
	}
}

// checkpointBytes estimates what the checkpoints take: a request with its
// bookkeeping, a log entry, a stderr line and a violation, by what
// TestFinishedRequestFootprint and the types' sizes say (the bytes of
// messages are shared with the cursor's tracker, not copied).
func (rp *Replay) checkpointBytes() int64 {
	var n int64
	for _, c := range rp.checks {
		n += 4096 + int64(c.tr.Len())*1024 + int64(c.tr.Log().Len())*256 + int64(c.tr.Stderr().Len())*96 + int64(c.tr.Violations().Len())*160
	}
	return n
}

// Len is how many items the trace holds.
func (rp *Replay) Len() int { return len(rp.times) }

// Start is when the trace began; End is the time of its last item.
func (rp *Replay) Start() time.Time { return rp.start }

// End is the time of the trace's last item (Start for an empty trace).
func (rp *Replay) End() time.Time {
	if len(rp.times) == 0 {
		return rp.start
	}
	return rp.start.Add(rp.times[len(rp.times)-1])
}

// Relayed reports whether the trace is of traffic a proxy relayed.
func (rp *Replay) Relayed() bool { return rp.relayed }

// Damage says what was wrong with the trace (nil: nothing).
func (rp *Replay) Damage() *Damage { return rp.damage }

// Flags are the run's flags, in the trace's order.
func (rp *Replay) Flags() []Flag { return rp.flags }

// Disagreements counts the items up to the replay's position that it
// judged otherwise than the trace, and says the latest of them.
func (rp *Replay) Disagreements() (n int, latest string) {
	i := sort.Search(len(rp.notes), func(i int) bool { return rp.notes[i].Item >= rp.n })
	if i == 0 {
		return 0, ""
	}
	return i, rp.notes[i-1].Text
}

// Position is how many items are applied, and the moment shown.
func (rp *Replay) Position() (n int, at time.Time) { return rp.n, rp.at }

// Tracker is the tracker at the moment shown. It is the replay's own:
// read it, never change it, and ask again after every move.
func (rp *Replay) Tracker() *session.Tracker { return rp.fd.tr }

// ItemTime is the moment item i stands at (the latest time up to it).
func (rp *Replay) ItemTime(i int) time.Time { return rp.start.Add(rp.times[i]) }

// SeekTime shows the moment at (kept within the trace): every item
// recorded up to it applied.
func (rp *Replay) SeekTime(at time.Time) {
	if at.After(rp.End()) {
		at = rp.End()
	}
	if at.Before(rp.start) {
		at = rp.start
	}
	d := at.Sub(rp.start)
	rp.seek(sort.Search(len(rp.times), func(i int) bool { return rp.times[i] > d }))
	rp.at = at
}

// SeekItem shows the moment of item n-1, with the n first items applied
// (0: the start, before any).
func (rp *Replay) SeekItem(n int) {
	n = max(min(n, len(rp.times)), 0)
	rp.seek(n)
	rp.at = rp.start
	if n > 0 {
		rp.at = rp.ItemTime(n - 1)
	}
}

// Step moves one item forward (delta 1) or back (-1): forward applies
// the next item; back shows the moment of the last one applied when the
// moment shown is later, else the one before it.
func (rp *Replay) Step(delta int) {
	switch {
	case delta > 0:
		rp.SeekItem(rp.n + 1)
	case delta < 0 && rp.n > 0 && rp.at.After(rp.ItemTime(rp.n-1)):
		rp.SeekItem(rp.n)
	case delta < 0:
		rp.SeekItem(rp.n - 1)
	}
}

// NextFlag moves to the first flag after the moment shown, and says it;
// ok is false when there is none (and nothing moves).
func (rp *Replay) NextFlag() (f Flag, ok bool) {
	i := sort.Search(len(rp.flags), func(i int) bool { return rp.flags[i].Item >= rp.n })
	if i == len(rp.flags) {
		return Flag{}, false
	}
	rp.SeekItem(rp.flags[i].Item + 1)
	return rp.flags[i], true
}

// PrevFlag moves to the last flag before the moment shown.
func (rp *Replay) PrevFlag() (f Flag, ok bool) {
	i := sort.Search(len(rp.flags), func(i int) bool { return rp.flags[i].Item >= rp.n }) - 1
	for ; i >= 0; i-- {
		f := rp.flags[i]
		if f.Item < rp.n-1 || rp.at.After(rp.ItemTime(f.Item)) {
			rp.SeekItem(f.Item + 1)
			return f, true
		}
	}
	return Flag{}, false
}

// seek brings the tracker to n items applied: on from where it stands
// when no checkpoint lies between, else on from the nearest checkpoint
// before n.
func (rp *Replay) seek(n int) {
	if n == rp.n {
		return
	}
	i := sort.Search(len(rp.checks), func(i int) bool { return rp.checks[i].n > n }) - 1
	cp := rp.checks[i]
	if n < rp.n || cp.n > rp.n || rp.st == nil {
		rp.fd.tr = cp.tr.Clone()
		rp.n = cp.n
		rp.st = rp.newStream(cp.off, cp.line)
		rp.fd.ahead = rp.st.lookAhead()
	}
	for rp.n < n {
		e, ok := rp.st.next()
		if !ok {
			// The file changed under the replay: stand where it ends.
			break
		}
		rp.fd.apply(&e.it, rp.n)
		rp.n++
	}
}

// stream reads a trace's items from a line on.
type stream struct {
	rd  *trace.Reader
	dec Decoder
	// ahead[head:] are items read, not yet handed out (params looks
	// ahead); ahead[head-1] is the one handed out last.
	ahead []entry
	head  int
	// bad is told of every line that is not a record (nil: skip it).
	bad     func(le *trace.LineError)
	records int
	// err is what ended the reading (io.EOF at the end), after line
	// errLine.
	err     error
	errLine int
	// pipe, when set, delivers what a goroutine of the stream's own read
	// (piped); used batches go back on free.
	pipe, free chan batch
}

// batch is a run of items the piped reader read, with the lines it
// skipped among them and, on the last one, what ended the reading.
type batch struct {
	entries []entry
	bad     []*trace.LineError
	records int
	err     error
	errLine int
}

// batchItems is how many items a batch of the piped reader holds.
const batchItems = 256

// piped makes the stream read on a goroutine of its own, so that the
// first reading of a trace parses and decodes lines on one core while
// the tracker applies them on another. The goroutine ends at the end of
// the file, or when stop is closed.
func (s *stream) piped(stop <-chan struct{}) {
	s.pipe, s.free = make(chan batch, 4), make(chan batch, 6)
	go func() {
		defer close(s.pipe)
		for {
			var b batch
			select {
			case b = <-s.free:
				b.entries, b.bad, b.records = b.entries[:0], b.bad[:0], 0
			default:
				b.entries = make([]entry, 0, batchItems)
			}
			for len(b.entries) < batchItems && b.err == nil {
				rec, err := s.rd.Next()
				var le *trace.LineError
				switch {
				case errors.As(err, &le):
					b.bad = append(b.bad, le)
				case err != nil:
					b.err, b.errLine = err, s.rd.Line()
				default:
					b.records++
					if it, ok := s.dec.Decode(&rec); ok {
						b.entries = append(b.entries, entry{it: it, off: s.rd.Offset(), line: s.rd.Line() - 1})
					}
				}
			}
			select {
			case s.pipe <- b:
			case <-stop:
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
}

// receive takes the next batch from the pipe into ahead.
func (s *stream) receive() bool {
	for s.err == nil {
		b, ok := <-s.pipe
		if !ok {
			s.err = io.ErrUnexpectedEOF
			return false
		}
		for _, le := range b.bad {
			if s.bad != nil {
				s.bad(le)
			}
		}
		s.records += b.records
		s.ahead = append(s.ahead, b.entries...)
		s.err, s.errLine = b.err, b.errLine
		clear(b.entries)
		select {
		case s.free <- b:
		default:
		}
		if len(b.entries) > 0 {
			return true
		}
	}
	return false
}

// entry is an item with where its line is in the file: the offset it
// begins at, and how many lines come before it.
type entry struct {
	it   Item
	off  int64
	line int
}

func (rp *Replay) newStream(off int64, line int) *stream {
	return &stream{
		rd:  trace.NewReaderAt(io.NewSectionReader(rp.src, off, rp.size-off), off, line),
		dec: Decoder{Start: rp.start, Relayed: rp.relayed},
	}
}

// read reads the next item into ahead (a batch of them, from a pipe);
// false at the end.
func (s *stream) read() bool {
	if s.pipe != nil {
		return s.receive()
	}
	for s.err == nil {
		rec, err := s.rd.Next()
		var le *trace.LineError
		switch {
		case errors.As(err, &le):
			if s.bad != nil {
				s.bad(le)
			}
			continue
		case err != nil:
			s.err, s.errLine = err, s.rd.Line()
			return false
		}
		s.records++
		if it, ok := s.dec.Decode(&rec); ok {
			s.ahead = append(s.ahead, entry{it: it, off: s.rd.Offset(), line: s.rd.Line() - 1})
			return true
		}
	}
	return false
}

// next hands out the next item; it stays valid until the next call.
func (s *stream) next() (*entry, bool) {
	if s.head == len(s.ahead) {
		// Everything read ahead was handed out: the array is used again.
		clear(s.ahead)
		s.ahead, s.head = s.ahead[:0], 0
		if !s.read() {
			return nil, false
		}
	}
	s.head++
	return &s.ahead[s.head-1], true
}

// maxAhead bounds how far the stream looks ahead for a line.
const maxAhead = 256

// find is the first event ahead that match accepts, reading ahead as far
// as maxAhead items; nil when none does.
func (s *stream) find(match func(ev *event.Event) bool) *event.Event {
	for i := s.head; i < s.head+maxAhead; i++ {
		if i == len(s.ahead) && !s.read() {
			return nil
		}
		if ev := &s.ahead[i].it.Event; match(ev) {
			return ev
		}
	}
	return nil
}

// lookAhead is what the feeder learns from the lines ahead: the params a
// request is sent with (the "out" line after the one that began it), the
// reason its cancel gave (its cancel_sent, when the line that cancelled
// it does not say: the TUI's export).
func (s *stream) lookAhead() lookAhead {
	return lookAhead{
		params: func(id wire.ID) json.RawMessage {
			if ev := s.find(func(ev *event.Event) bool {
				return ev.Kind == event.Sent && ev.RequestID == id && ev.Msg.Kind == wire.KindRequest
			}); ev != nil {
				return ev.Msg.Params
			}
			return nil
		},
		reason: func(id wire.ID) string {
			if ev := s.find(func(ev *event.Event) bool { return ev.Kind == event.CancelSent && ev.RequestID == id }); ev != nil {
				return ev.Reason
			}
			return ""
		},
	}
}
