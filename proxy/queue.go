package proxy

import (
	"bytes"
	"sync"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Source says who wrote a line.
type Source uint8

// The sources of lines.
const (
	// FromHost: the host wrote it to the proxy's stdin, for the server.
	FromHost Source = iota
	// FromServer: the server wrote it to its stdout, for the host.
	FromServer
	// FromStderr: the server wrote it to its stderr.
	FromStderr
	numSources
)

// line is one complete line a forwarder copied for the recorder.
type line struct {
	from Source
	// at is when the read that completed it returned.
	at time.Time
	// raw is the line without its terminator, owned by the recorder; for
	// a line over the recording limit, its first bytes.
	raw []byte
	// total is the line's length without its terminator (> len(raw) when cut).
	total int
	// end is how many bytes of its stream precede the line's end (the
	// terminator included).
	end int64
	// serverSoFar, on a host line that may be a cancel, is how many bytes
	// the server had written to its stdout when the proxy passed it on.
	serverSoFar int64
	// ctl makes it a control line (no bytes: the host went away, the
	// server's end closed with err), which is never dropped.
	ctl control
	err error
	inj *injection
	// http is a ctlExchange line's exchange.
	http *event.HTTPExchange
	// id is the request a ctlStreamClosed line is about.
	id wire.ID
	// session is the host's Mcp-Session-Id on the HTTP request the line
	// (or the closed stream) came in ("": none).
	session string // tap numbers the HTTP POST the line (or the closed stream) came in
	// (0: none).
	tap uint64
}

// gap counts lines forwarded but not recorded, because the recorder was
// behind and the queue full: the wire never waits for the recorder.
type gap struct {
	// progress counts the server's progress notifications skipped once
	// the queue was half full (the view's progress is coalesced: the
	// next one recorded carries the latest value).
	progress int
	// other counts any other line dropped once the queue was full.
	other [numSources]int
}

func (g gap) empty() bool { return g == gap{} }

// queue is the bounded hand-over between the forwarders and the recorder.
// push never blocks and never waits for the recorder; past half its
// bound it skips the server's progress notifications, past the bound
// everything, and counts what it skipped.
type queue struct {
	mu       sync.Mutex
	lines    []line
	bytes    int
	maxBytes int
	gap      gap
	// peak is the most bytes held at once (for tests and the benchmark).
	peak   int
	closed bool
	wake   chan struct{}
	// afterPending is what waits for the lines pushed before it to be
	// taken; afterTaken, taken already, waits for the recorder to come
	// back for more (then they are written). See afterRecorded.
	afterPending, afterTaken []func()
}

func newQueue(maxBytes int) *queue {
	return &queue{maxBytes: maxBytes, wake: make(chan struct{}, 1)}
}

var progressMethod = []byte(`"notifications/progress"`)

// push hands lines to the recorder; they become the recorder's.
func (q *queue) push(ls []line) {
	if len(ls) == 0 {
		return
	}
	q.mu.Lock()
	for _, l := range ls {
		size := len(l.raw) + 64
		switch {
		case q.bytes+size > q.maxBytes:
			q.gap.other[l.from]++
			continue
		case q.bytes+size > q.maxBytes/2 && l.from == FromServer && bytes.Contains(l.raw, progressMethod):
			q.gap.progress++
			continue
		}
		q.lines = append(q.lines, l)
		q.bytes += size
	}
	q.peak = max(q.peak, q.bytes)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pushControl queues a control line: bounded by their number (a few per
// connection), not by the queue's bound.
func (q *queue) pushControl(l line) {
	q.mu.Lock()
	q.lines = append(q.lines, l)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close tells the recorder that nothing more will come.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take swaps out what is queued (reusing buf's memory), and what was
// skipped since the last take; closed says nothing more will come once
// it returns nothing. Taking again means the recorder has written what it
// took before: what waited for that (afterRecorded) is done now.
func (q *queue) take(buf []line) (ls []line, g gap, closed bool) {
	q.mu.Lock()
	ls, q.lines = q.lines, buf[:0]
	g, q.gap = q.gap, gap{}
	q.bytes = 0
	closed = q.closed
	due := q.afterTaken
	q.afterTaken, q.afterPending = q.afterPending, nil
	again := len(q.afterTaken) > 0
	q.mu.Unlock()
	for _, f := range due {
		f()
	}
	if again {
		// Have the recorder come back even if no line comes meanwhile.
		q.wakeRecorder()
	}
	return ls, g, closed
}

// afterRecorded calls f once the recorder has written every line pushed
// before it: an exchange's credentials are released then, not while a line
// that may echo them still waits to be redacted (redact.Hold). f runs on
// the recorder's goroutine and must not block; it is never called once the
// recorder has stopped.
func (q *queue) afterRecorded(f func()) {
	q.mu.Lock()
	q.afterPending = append(q.afterPending, f)
	q.mu.Unlock()
	q.wakeRecorder()
}

func (q *queue) wakeRecorder() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// peakBytes is the most the queue held at once.
func (q *queue) peakBytes() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.peak
}

// splitter cuts one stream into lines for the recorder. It belongs to the
// stream's forwarder goroutine.
type splitter struct {
	from Source
	// max bounds the bytes of one line kept; the rest is counted.
	max int
	// partial is the start of a line whose end has not been read yet;
	// partialTotal its length, kept or not.
	partial      []byte
	partialTotal int
	// off is how many bytes of the stream came before this chunk.
	off int64
	out []line
}

// feed splits a chunk just read at `at` (the forwarder's buffer: it is
// copied, never kept) and returns the complete lines, valid until the
// next feed hands them on.
func (s *splitter) feed(chunk []byte, at time.Time, serverSoFar int64) []line {
	s.out = s.out[:0]
	base := s.off
	s.off += int64(len(chunk))
	// One copy for every line wholly inside the chunk (up to its last
	// newline), made when the first of them is found.
	var own []byte
	ownBase := 0
	for i := 0; i < len(chunk); {
		j := bytes.IndexByte(chunk[i:], '\n')
		if j < 0 {
			s.keep(chunk[i:])
			break
		}
		start, seg := i, chunk[i:i+j]
		end := base + int64(i+j+1)
		i += j + 1
		var raw []byte
		total := len(seg) + s.partialTotal
		switch {
		case s.partialTotal > 0:
			s.keep(seg)
			raw, s.partial, s.partialTotal = s.partial, nil, 0
		case len(seg) > s.max:
			raw = bytes.Clone(seg[:s.max])
		default:
			if own == nil {
				ownBase = start
				own = bytes.Clone(chunk[start : bytes.LastIndexByte(chunk, '\n')+1])
			}
			o := start - ownBase
			raw = own[o : o+len(seg) : o+len(seg)]
		}
		if n := len(raw); n > 0 && raw[n-1] == '\r' && len(raw) == total {
			raw, total = raw[:n-1], total-1
		}
		s.out = append(s.out, line{from: s.from, at: at, raw: raw, total: total, end: end, serverSoFar: serverSoFar})
	}
	return s.out
}

// keep adds the start (or more) of a line not ended yet, up to max bytes.
func (s *splitter) keep(b []byte) {
	s.partialTotal += len(b)
	if room := s.max - len(s.partial); room > 0 {
		s.partial = append(s.partial, b[:min(room, len(b))]...)
	}
}

// rest is the final line of a stream that ended without a newline.
func (s *splitter) rest(at time.Time) []line {
	if s.partialTotal == 0 {
		return nil
	}
	l := line{from: s.from, at: at, raw: s.partial, total: s.partialTotal, end: s.off}
	s.partial, s.partialTotal = nil, 0
	return []line{l}
}
