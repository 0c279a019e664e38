package proxy

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
)

// FuzzSplitter: however a stream is cut into reads, the splitter gives
// back its lines as a model says — a line's bytes without its newline
// (and without the CR of a CRLF), the first max bytes of a longer one with
// its whole length, the offset of each line's end — and the last,
// unterminated one from rest.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), uint8(1), uint8(3))
	f.Add([]byte("\r\n\r\r\nx\r"), uint8(2), uint8(2))
	f.Add(bytes.Repeat([]byte("0123456789\n"), 50), uint8(7), uint8(13))
	f.Fuzz(func(t *testing.T, data []byte, step, max8 uint8) {
		maxLine := int(max8%32) + 1
		sp := &splitter{from: FromServer, max: maxLine}
		var got []line
		n := int(step%17) + 1
		for i := 0; i < len(data); i += n {
			for _, l := range sp.feed(data[i:min(i+n, len(data))], time.Time{}, 0) {
				l.raw = bytes.Clone(l.raw)
				got = append(got, l)
			}
		}
		got = append(got, sp.rest(time.Time{})...)

		type model struct {
			raw   []byte
			total int
			end   int64
		}
		var want []model
		off := int64(0)
		for rest := data; len(rest) > 0; {
			c, after, terminated := bytes.Cut(rest, []byte("\n"))
			off += int64(len(c))
			m := model{raw: c, total: len(c)}
			if terminated {
				off++
			}
			m.end = off
			switch {
			case len(c) > maxLine:
				m.raw = c[:maxLine]
			case terminated && bytes.HasSuffix(c, []byte("\r")):
				m.raw, m.total = c[:len(c)-1], len(c)-1
			}
			want = append(want, m)
			rest = after
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i, w := range want {
			if g := got[i]; !bytes.Equal(g.raw, w.raw) || g.total != w.total || g.end != w.end {
				t.Fatalf("line %d: %q (total %d, end %d), want %q (total %d, end %d)", i, g.raw, g.total, g.end, w.raw, w.total, w.end)
			}
		}
	})
}

// TestQueueSkipsThenDrops: past half its bound the queue skips the
// server's progress, past the bound anything; it never blocks, it counts
// every line it did not keep, and it holds no more than its bound.
func TestQueueSkipsThenDrops(t *testing.T) {
	q := newQueue(1000)
	progress := line{from: FromServer, raw: []byte(`{"method":"notifications/progress"}`)}
	answer := line{from: FromServer, raw: []byte(`{"id":1,"result":{}}`)}
	host := line{from: FromHost, raw: []byte(`{"id":2,"method":"ping"}`)}
	for range 20 {
		q.push([]line{progress, answer, host})
	}
	ls, g, closed := q.take(nil)
	if closed {
		t.Fatal("closed")
	}
	if q.peakBytes() > 1000 {
		t.Errorf("peak %d over the bound", q.peakBytes())
	}
	if g.progress == 0 || g.other[FromServer] == 0 || g.other[FromHost] == 0 {
		t.Errorf("gap %+v: want progress skipped and both sides dropped", g)
	}
	if total := len(ls) + g.progress + g.other[FromServer] + g.other[FromHost]; total != 60 {
		t.Errorf("kept %d + skipped %d + dropped %v ≠ the 60 lines pushed", len(ls), g.progress, g.other)
	}
	q.pushControl(line{ctl: ctlHostGone})
	q.close()
	ls, g, closed = q.take(nil)
	if len(ls) != 1 || ls[0].ctl != ctlHostGone || !g.empty() || !closed {
		t.Errorf("after close: %d lines, gap %+v, closed %v; want the control line alone", len(ls), g, closed)
	}
}

// TestRecorderFailureKeepsForwarding: a recorder that panics stops
// recording, says so, and drains the queue; it never stops the wire.
func TestRecorderFailureKeepsForwarding(t *testing.T) {
	var stderr syncBuffer
	q := newQueue(1 << 20)
	calls := 0
	rec := &recorder{q: q, tr: session.NewTracker(session.Config{}), stderr: &stderr, name: "p", done: make(chan struct{}), transport: event.TransportStdio,
		onEvent: func(event.Event, []session.Change, *session.Tracker) {
			calls++
			panic("boom")
		}}
	go rec.run()
	for range 3 {
		q.push([]line{{from: FromHost, raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}})
	}
	q.close()
	<-rec.done
	if calls != 1 || !strings.Contains(stderr.String(), "inflight proxy p: the recorder failed (boom): forwarding goes on, unrecorded") {
		t.Errorf("%d calls, stderr %q", calls, stderr.String())
	}
}

// TestQueueReleasesOnceRecorded: what an exchange asks to be done once its
// lines are recorded (releasing the credentials that mask them) waits for
// the recorder to come back for more after taking them — by then it has
// written them — and a release registered while the recorder idles wakes
// it, so that nothing is held until the next traffic.
func TestQueueReleasesOnceRecorded(t *testing.T) {
	q := newQueue(1 << 20)
	var released atomic.Int32
	q.push([]line{{from: FromServer, raw: []byte(`{"id":1,"result":{}}`)}})
	q.afterRecorded(func() { released.Add(1) })
	select {
	case <-q.wake:
	default:
		t.Fatal("the queue did not wake the recorder")
	}
	if ls, _, _ := q.take(nil); len(ls) != 1 || released.Load() != 0 {
		t.Fatalf("first take: %d lines, released %d; want the line, nothing released while it is being recorded", len(ls), released.Load())
	}
	select {
	case <-q.wake:
	default:
		t.Fatal("a release waits and the recorder was not woken to come back")
	}
	q.take(nil)
	if released.Load() != 1 {
		t.Fatalf("released %d times after the recorder came back, want 1", released.Load())
	}
	q.take(nil)
	if released.Load() != 1 {
		t.Fatalf("released %d times, want once", released.Load())
	}
}
