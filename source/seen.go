package source

import (
	"errors"
	"fmt"
	"io"
	"time"

	"inflight/event"
	"inflight/session"
)

// FeedOptions configure Feed.
type FeedOptions struct {
	// Start is when the trace began: its "ms" count from it.
	Start time.Time
	// Tracker is the tracker's policy (timeouts, late window), as the
	// recording run had it.
	Tracker session.Config
	// Seen is handed every event after the tracker applied it, with what
	// it changed, and what the run changed outside an event (ev nil), in
	// the trace's order and at its times — what a live run hands its
	// trace writer. The changes are reused by the next call.
	Seen func(tr *session.Tracker, ev *event.Event, changes []session.Change)
}

// Feed reads the trace in src (size bytes) once, start to end, applying
// its items to a new tracker as OpenReplay's first reading does, and
// hands each to o.Seen: the tracker the recording run had, rebuilt from
// the file, for a consumer that derives what it writes from the tracker
// (an OTLP export of a trace). Nothing is kept: no checkpoint, no flag,
// no item. It returns the tracker as it stands at the end, and the
// damage of a trace that was read anyway (nil: none); it fails only when
// src holds no trace record at all (ErrNotATrace) or cannot be read.
func Feed(src io.ReaderAt, size int64, o FeedOptions) (*session.Tracker, *Damage, error) {
	rp := &Replay{src: src, size: size, start: o.Start}
	rp.relayed = sniffRelayed(src, size)
	fd := feeder{tr: session.NewTracker(o.Tracker), relayed: rp.relayed, seen: o.Seen}
	st := rp.newStream(0, 0)
	st.bad = rp.skipped
	stop := make(chan struct{})
	defer close(stop)
	st.piped(stop)
	fd.ahead = st.lookAhead()
	n := 0
	for {
		e, ok := st.next()
		if !ok {
			break
		}
		fd.apply(&e.it, n)
		n++
	}
	if st.err != nil && !errors.Is(st.err, io.EOF) {
		if st.records == 0 && rp.damage == nil {
			return nil, nil, fmt.Errorf("read the trace: %w", st.err)
		}
		rp.damaged().Broke, rp.damaged().BrokeAfter = st.err, st.errLine
	}
	if st.records == 0 {
		return nil, nil, ErrNotATrace
	}
	return fd.tr, rp.damage, nil
}
