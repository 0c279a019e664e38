package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/wire"
)

// Writer writes a trace, one Record a line. It is safe for concurrent use;
// the first write error sticks and is returned by every later call.
type Writer struct {
	mu    sync.Mutex
	bw    *bufio.Writer
	buf   bytes.Buffer
	enc   *json.Encoder
	line  []byte // the line being written, kept for its capacity
	start time.Time
	red   *redact.Redactor
	err   error

	// The server's stderr is bounded (see StderrHeadLines): stderrLines
	// and stderrBytes were written as they came; past them, dropped lines
	// are counted and the last StderrTailLines kept in tail, written when
	// the flood is over.
	stderrLines int
	stderrBytes int
	flood       stderrFlood
	// connClosed: the connection's close was written (and no new
	// connection since), so a flood still held is over.
	connClosed bool
	// now is the clock that tells a flood is over (tests set it).
	now func() time.Time
	// sentBy and receivedBy name who sent "out" and "in" (SetSenders).
	sentBy, receivedBy string
	// positions: Judged writes an event's StreamEnd as "end"
	// (SetPositions).
	positions bool
	// tap sees every record as it is written (SetTap).
	tap func(*Record)
}

// SetTap hands f every record the writer writes, redacted, as it writes
// it (an HAR being built from the same lines as the trace). f runs under
// the writer's lock and must not keep the record's Msg, which may alias
// an event's bytes.
func (w *Writer) SetTap(f func(*Record)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tap = f
}

// SetPositions makes Judged write where each message stands in the
// server's output ("end"), for a reader that judges the trace again with
// the same facts (`inflight attach` reading a proxy's stream).
func (w *Writer) SetPositions(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.positions = on
}

// Positions reports whether SetPositions is on.
func (w *Writer) Positions() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.positions
}

// SetSenders names who sent what in a trace of traffic inflight only
// watched (`inflight proxy`): every "out" line gets "by": out, every
// "in" line "by": in.
func (w *Writer) SetSenders(out, in string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sentBy, w.receivedBy = out, in
}

// The trace keeps a server's stderr bounded, as the TUI's stderr view
// does: a server that writes gigabytes of log made a trace of gigabytes
// that `inflight replay` could not read. The first StderrHeadLines lines
// (or StderrHeadBytes) are written as they come — a server's start-up
// messages, the reason it failed — and past them only a count and the last
// StderrTailLines of each flood: once the flood is over (no line dropped
// for StderrQuiet, or the connection closed), a note says how many lines
// were left out, and the tail follows it.
const (
	StderrHeadLines = 1000
	StderrHeadBytes = 1 << 20
	StderrTailLines = 100
	StderrQuiet     = time.Second
)

// stderrFlood is the part of a stderr flood not written yet.
type stderrFlood struct {
	dropped      int // lines left out, the tail's included
	droppedBytes int
	tail         []Record
	last         time.Time // when the latest line was dropped (the Writer's clock)
}

// NewWriter returns a Writer whose "ms" count from start and which passes
// every string and message through red (nil redacts nothing).
func NewWriter(w io.Writer, start time.Time, red *redact.Redactor) *Writer {
	tw := &Writer{bw: bufio.NewWriterSize(w, 64<<10), start: start, red: red, now: time.Now}
	tw.enc = json.NewEncoder(&tw.buf)
	// HTML escaping would rewrite <, > and & in the strings this package
	// writes: harmless, but noise in a file people read.
	tw.enc.SetEscapeHTML(false)
	return tw
}

// Since converts an instant to the trace's "ms".
func (w *Writer) Since(t time.Time) float64 { return Millis(t.Sub(w.start)) }

// Millis converts a duration to milliseconds with microsecond precision.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Write writes one record after redacting its strings and message.
//
// The message goes last on the line, spliced in byte for byte:
// encoding/json would compact it (and re-escape it), and a trace must show
// the message exactly as it was on the wire — with two exceptions, both
// meaning-preserving within JSON: a secret in it is replaced however the
// server escaped it, and the whole line goes through termsafe.EscapeJSON,
// so the C1 and bidirectional controls Go's encoder leaves raw (and the
// server may have sent raw) are \u escapes, and a trace shown with cat or
// less cannot drive the terminal.
func (w *Writer) Write(rec Record) error {
	redactRecord(&rec, w.red)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if rec.By == "" {
		switch rec.Dir {
		case DirOut:
			rec.By = w.sentBy
		case DirIn:
			rec.By = w.receivedBy
		}
	}
	if rec.Event == EventStderr {
		if w.stderrLines >= StderrHeadLines || w.stderrBytes >= StderrHeadBytes {
			w.dropStderr(rec)
			return nil
		}
		w.stderrLines++
		w.stderrBytes += len(rec.Text)
	} else if rec.Event == EventTransportClosed {
		// The server's stderr is over with its connection.
		w.endFlood()
		w.connClosed = true
	} else if rec.Event == EventConnected {
		w.connClosed = false
	}
	if w.tap != nil {
		w.tap(&rec)
	}
	return w.write(rec)
}

// dropStderr keeps a stderr line past the head in the flood's tail.
func (w *Writer) dropStderr(rec Record) {
	f := &w.flood
	f.dropped++
	f.droppedBytes += len(rec.Text)
	f.last = w.now()
	if len(f.tail) == StderrTailLines {
		copy(f.tail, f.tail[1:])
		f.tail = f.tail[:StderrTailLines-1]
	}
	f.tail = append(f.tail, rec)
}

// endFlood writes what a stderr flood left: the note of how many lines
// were left out, then its tail.
func (w *Writer) endFlood() {
	f := w.flood
	if f.dropped == 0 {
		return
	}
	left := f.dropped - len(f.tail)
	tail := f.tail
	// The tail's array is reused by the next flood, once written.
	w.flood = stderrFlood{tail: f.tail[:0]}
	if left > 0 {
		note := Record{MS: tail[0].MS, Dir: DirLocal, Event: EventNote, Dropped: left,
			Text: fmt.Sprintf("the server wrote more to stderr than a trace keeps: %d lines (%d bytes) left out here; the last %d follow",
				left, f.droppedBytes-tailBytes(tail), len(tail))}
		if w.write(note) != nil {
			return
		}
	}
	for _, r := range tail {
		if w.write(r) != nil {
			return
		}
	}
}

func tailBytes(tail []Record) int {
	n := 0
	for _, r := range tail {
		n += len(r.Text)
	}
	return n
}

// write writes one redacted record; w.mu is held.
func (w *Writer) write(rec Record) error {
	msg := rec.Msg
	rec.Msg = nil
	line, ok := appendRecord(w.line[:0], &rec)
	if !ok {
		w.buf.Reset()
		slow := rec // only this copy escapes to encoding/json's heap
		if err := w.enc.Encode(&slow); err != nil {
			w.err = fmt.Errorf("write trace: %w", err)
			return w.err
		}
		line = append(line[:0], bytes.TrimRight(w.buf.Bytes(), "\n")...)
	}
	if len(msg) > 0 {
		line = append(line[:len(line)-1], `,"msg":`...)
		line = append(line, msg...)
		line = append(line, '}')
	}
	w.line = line
	line = append(termsafe.EscapeJSON(line), '\n')
	if _, err := w.bw.Write(line); err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
	}
	return w.err
}

// Flush writes buffered lines to the underlying writer, and what is left
// of a stderr flood that is over (nothing dropped for StderrQuiet, or the
// connection closed: stderr lines read after its close are not held past
// the runner's last Flush).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.flood.dropped > 0 && (w.connClosed || w.now().Sub(w.flood.last) >= StderrQuiet) {
		w.endFlood()
	}
	return w.flush()
}

// Close writes everything still held — a stderr flood's tail — and
// flushes. It closes nothing underneath: Write still works after it, and
// a later Close writes what came since.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.endFlood()
	return w.flush()
}

// flush flushes the buffer; w.mu is held.
func (w *Writer) flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
	}
	return w.err
}

// Judged writes one client event with the tracker's verdict on it
// ("late", "crossed"; "" for none), so that replay shows what the tracker
// judged rather than judging again.
func (w *Writer) Judged(ev event.Event, verdict string) error {
	// The record is written before Judged returns, so it may alias the
	// event's bytes instead of copying them.
	rec := fromEvent(&ev, w.Since(ev.Time), false)
	rec.Verdict = verdict
	if w.Positions() {
		rec.End = int(ev.StreamEnd)
	}
	return w.Write(rec)
}

// Event writes one client event.
func (w *Writer) Event(ev event.Event) error { return w.Judged(ev, "") }

// State writes a request's change of state in the tracker. The request's
// method and target go on the line too, so that a reader learns what the
// request was even when its "out" line is missing.
func (w *Writer) State(at time.Time, r *session.Request, from, to session.State) error {
	id := r.ID
	rec := Record{MS: w.Since(at), Dir: DirLocal, Event: EventState, ID: &id, State: to.String(),
		Method: r.Method, Target: r.Target}
	if from != to {
		rec.From = from.String()
	}
	if !r.Parent.IsZero() {
		p := r.Parent
		rec.Parent = &p
	}
	if n := r.Round(); n > 1 {
		first := r.Conv.Rounds[0].ID
		rec.Round, rec.Conversation = n, &first
	}
	switch {
	case r.LocalError != "" && to.IsFinal():
		rec.Error = r.LocalError
	case r.Cancel != nil && to == session.StateCancelRequested:
		rec.Reason = r.Cancel.Reason
	}
	return w.Write(rec)
}

// Changes writes what the tracker just changed: a state line for every
// transition, a violation line for every violation (late and crossed
// arrivals go on their message's own line, as its verdict).
func (w *Writer) Changes(tr *session.Tracker, changes []session.Change) error {
	for _, ch := range changes {
		switch ch.Kind {
		case session.ChangeState:
			if r, ok := tr.Get(ch.ID); ok {
				if err := w.State(ch.At, r, ch.From, ch.To); err != nil {
					return err
				}
			}
		case session.ChangeViolation:
			if err := w.Violation(ch.Violation); err != nil {
				return err
			}
		case session.ChangeRenamed:
			// Said for a reader: what follows under the ID is the later
			// request's; the earlier one's lines came before.
			id := ch.Was
			if err := w.Write(Record{MS: w.Since(ch.At), Dir: DirLocal, Event: EventNote, ID: &id,
				Text: "the host used ID " + ch.Was.String() + " again: the earlier request with it is " + ch.ID.String() + " from here on"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Violation writes a protocol violation the tracker recorded.
func (w *Writer) Violation(v session.Violation) error {
	rec := Record{MS: w.Since(v.Time), Dir: DirLocal, Event: EventViolation, Code: v.Code, Text: v.Detail}
	if !v.RequestID.IsZero() {
		id := v.RequestID
		rec.ID = &id
	}
	return w.Write(rec)
}

// FromEvent converts a client event to a record at ms. The record owns
// its bytes.
func FromEvent(ev event.Event, ms float64) Record { return fromEvent(&ev, ms, true) }

// fromEvent is FromEvent; with own unset the record's Msg may alias the
// event's Raw (read-only, as every event's bytes are).
func fromEvent(ev *event.Event, ms float64, own bool) Record {
	rec := Record{MS: ms, Dir: ev.Kind.Direction().String(), Internal: ev.Internal || isClientID(ev.RequestID), Truncated: ev.Truncated,
		SessionID: ev.SessionID}
	if !ev.RequestID.IsZero() {
		id := ev.RequestID
		rec.ID = &id
	}
	setStream(&rec, ev)
	switch ev.Kind {
	case event.Sent, event.Received:
		m := &ev.Msg
		if m.Kind == wire.KindInvalid {
			// Bytes the client could not decode (written raw on purpose):
			// they say themselves what they are, if anything.
			setMessage(&rec, ev.Raw, ev.Kind.String())
			msg, ok := rec.Message()
			if !ok {
				return rec
			}
			m = &msg
		} else {
			// The client decoded these bytes, so they are valid JSON and
			// their message is at hand. The profile of `call --trace` on a
			// flood had this decoding them three more times (json.Valid,
			// wire.Decode, DecodeProgress for the token): 35 % of the CPU.
			setJSON(&rec, ev.Raw, own)
		}
		userCancel(&rec, *m)
		if (rec.Dir == DirIn && m.Kind == wire.KindRequest) || (rec.Dir == DirOut && m.IsResponse()) {
			// The server's own request IDs live in another namespace.
			rec.ID = nil
		} else if rec.ID == nil {
			if ev.Progress != nil {
				id := ev.Progress.Token
				rec.ID = &id
			} else if id, ok := messageID(*m); ok {
				rec.ID = &id
			}
		}
		return rec
	case event.Malformed:
		rec.Event = EventMalformed
		rec.Raw = string(ev.Raw)
	case event.CancelSent:
		rec.Event = EventCancelSent
		rec.Signal = ev.Signal.String()
		rec.Reason = ev.Reason
	case event.StreamClosed:
		rec.Event = EventStreamClosed
		rec.ByClient = ev.ByClient
	case event.RequestFailed:
		rec.Event = EventRequestFailed
		rec.Lost = ev.LostConnection
	case event.Exchange:
		return exchangeRecord(rec, ev, ms)
	case event.CancelLeaving: // what is read after it is judged against it
		rec.Event, rec.Signal = EventCancelLeaving, ev.Signal.String()
	case event.RoundTrip:
		rec.Event, rec.RTT = EventRoundTrip, Millis(ev.RTT)
	case event.Connected:
		rec.Event = EventConnected
		connected(&rec, ev.Info)
	default:
		rec.Event = ev.Kind.String()
	}
	if ev.Kind == event.Stderr && len(ev.Text) < event.MaxRawKept {
		// The client counts a line's terminator as dropped bytes; only a
		// line cut at MaxRawKept really lost any.
		rec.Truncated = 0
	}
	rec.Status = ev.Status
	rec.ContentType = ev.ContentType
	rec.Text = ev.Text
	if ev.Err != nil {
		rec.Error = ev.Err.Error()
	}
	return rec
}

// connected records a connection's details.
func connected(rec *Record, in *event.ConnInfo) {
	if in == nil {
		return
	}
	rec.Transport = in.Transport.String()
	rec.Era = in.Era.String()
	rec.ProtocolVersion = in.ProtocolVersion
	rec.Server = serverName(in.ServerName, in.ServerVersion)
	rec.SessionID = in.SessionID
}

// setStream records which request's HTTP response stream carried a
// message, and a stream resumed with Last-Event-ID: what the tracker
// judges a message of another request on a stream by (session/streams.go),
// and a replay judges it by again.
func setStream(rec *Record, ev *event.Event) {
	if !ev.Owner.IsZero() {
		owner := ev.Owner
		rec.Owner = &owner
	}
	rec.Resumed = ev.Resumed
}

// userCancel clears the internal mark of the notifications/cancelled a
// cancel sent: the client marks it internal (it is not a tracked request),
// but in a trace it is the cancel itself, not housekeeping.
func userCancel(rec *Record, m wire.Message) {
	if rec.Dir == DirOut && m.Method == wire.NotifyCancelled && (rec.ID == nil || !isClientID(*rec.ID)) {
		rec.Internal = false
	}
}

// isClientID reports the IDs the client gives its own requests (the era
// probe, initialize): strings starting with "inflight-". The client marks
// their messages internal but not the HTTP stream events around them.
func isClientID(id wire.ID) bool { return strings.HasPrefix(id.Raw(), `"inflight-`) }

func serverName(name, version string) string {
	switch {
	case name == "":
		return ""
	case version == "":
		return name
	}
	return name + " " + version
}

// setMessage puts raw bytes on a record: as "msg" when they are JSON (one
// line of it, compacted if the bytes spanned several), else as "raw" with
// the event name given.
func setMessage(rec *Record, raw []byte, event string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && json.Valid(raw) {
		if bytes.ContainsAny(raw, "\r\n") {
			var buf bytes.Buffer
			_ = json.Compact(&buf, raw)
			raw = buf.Bytes()
			rec.Compacted = true
		}
		rec.Msg = bytes.Clone(raw)
		return
	}
	// Truncated or otherwise invalid bytes: kept readable, not as JSON.
	rec.Event = event
	rec.Raw = string(raw)
}

// setJSON puts bytes known to be valid JSON on a record as "msg" (one
// line of it, compacted if the bytes spanned several), copied when own is
// set.
func setJSON(rec *Record, raw []byte, own bool) {
	raw = bytes.TrimSpace(raw)
	if bytes.ContainsAny(raw, "\r\n") {
		var buf bytes.Buffer
		_ = json.Compact(&buf, raw)
		rec.Msg, rec.Compacted = buf.Bytes(), true
		return
	}
	if own {
		raw = bytes.Clone(raw)
	}
	rec.Msg = raw
}

// redactRecord replaces secrets in every string a record carries. A message
// that would no longer be valid JSON after redaction (a secret outside a
// string, which no sane server sends) is kept as raw text instead.
func redactRecord(rec *Record, red *redact.Redactor) {
	if rec.HTTP != nil {
		h := *rec.HTTP
		h.RequestHeaders = slices.Clone(h.RequestHeaders)
		h.ResponseHeaders = slices.Clone(h.ResponseHeaders)
		h.SSE = slices.Clone(h.SSE)
		redactHTTP(&h, red)
		rec.HTTP = &h
	}
	if red.Empty() {
		return
	}
	if len(rec.Msg) > 0 {
		if m := red.Bytes(rec.Msg); !bytes.Equal(m, rec.Msg) {
			if json.Valid(m) {
				rec.Msg = m
			} else {
				rec.Msg = nil
				rec.Raw = string(m)
				if rec.Event == "" {
					rec.Event = "message"
				}
			}
		}
	}
	for _, s := range []*string{&rec.Raw, &rec.Text, &rec.Error, &rec.Reason, &rec.Target, &rec.Server, &rec.SessionID, &rec.ContentType} {
		*s = red.String(*s)
	}
}

// WriteLog writes a tracker's protocol log as a trace: every entry kept,
// oldest first, with "ms" counted from start, and a note first when the
// log had already dropped older entries. See WriteEntries.
func WriteLog(w io.Writer, log *session.ProtocolLog, start time.Time, red *redact.Redactor) error {
	entries := make([]session.LogEntry, log.Len())
	for i := range entries {
		entries[i] = log.At(i)
	}
	return WriteEntries(w, entries, log.Total()-int64(log.Len()), start, red)
}

// WriteEntries writes protocol log entries as a trace, for the TUI's export
// key (which takes a copy of the log, since the log lives in the UI's
// model): entries oldest first, with "ms" counted from start. dropped is how
// many older entries the log had already let go; when there were any, a
// note says so first, so that nobody reads the trace as the whole story.
// Log entries keep at most session.Config.LogEntryBytes of each message; a
// message cut short is written as "raw" text with its "truncated" count.
func WriteEntries(w io.Writer, entries []session.LogEntry, dropped int64, start time.Time, red *redact.Redactor) error {
	tw := NewWriter(w, start, red)
	if dropped > 0 {
		first := start
		if len(entries) > 0 {
			first = entries[0].Time
		}
		if err := tw.Write(Record{MS: tw.Since(first), Dir: DirLocal, Event: EventNote,
			Text: fmt.Sprintf("the protocol log had dropped its %d oldest entries before this export", dropped)}); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if err := tw.Write(FromLogEntry(e, tw.Since(e.Time))); err != nil {
			return err
		}
	}
	return tw.Close()
}

// FromLogEntry converts one protocol log entry to a record at ms.
func FromLogEntry(e session.LogEntry, ms float64) Record {
	rec := Record{MS: ms, Dir: e.Dir.String(), Internal: e.Internal, Truncated: e.Truncated, Violation: e.Violation, Verdict: e.Verdict}
	if !e.ID.IsZero() {
		id := e.ID
		rec.ID = &id
	}
	if !e.Parent.IsZero() {
		p := e.Parent
		rec.Parent = &p
	}
	if e.IsState {
		rec.Event = EventState
		rec.State = e.State.String()
		rec.From = e.From.String()
		rec.Method = e.Method
		return rec
	}
	switch e.Kind {
	case event.StreamClosed:
		rec.Event = EventStreamClosed
		rec.ByClient = e.ByClient
		rec.Text = e.Text
		rec.Status = e.Status
		return rec
	case event.Connected:
		rec.Event = EventConnected
		if in := e.Info; in != nil {
			rec.Transport = in.Transport.String()
			rec.Era = in.Era.String()
			rec.ProtocolVersion = in.ProtocolVersion
			rec.Server = serverName(in.ServerName, in.ServerVersion)
			rec.SessionID = in.SessionID
		}
		return rec
	case event.Sent, event.Received:
		if e.Truncated > 0 {
			rec.Event = e.Kind.String()
			rec.Raw = string(e.Raw)
		} else {
			setMessage(&rec, e.Raw, e.Kind.String())
		}
		if e.Coalesced > 0 {
			rec.Coalesced = e.Coalesced
			rec.LastMS = ms + float64(e.LastTime.Sub(e.Time).Microseconds())/1000
		}
		if m, ok := rec.Message(); ok {
			userCancel(&rec, m)
			if (rec.Dir == DirIn && m.Kind == wire.KindRequest) || (rec.Dir == DirOut && m.IsResponse()) {
				rec.ID = nil
			}
		}
		return rec
	case event.Malformed:
		rec.Event = EventMalformed
		rec.Raw = string(e.Raw)
		rec.Error = e.Text
		return rec
	case event.CancelSent:
		rec.Event = EventCancelSent
		rec.Signal = e.Signal.String()
		rec.Reason = e.Text
		return rec
	case event.RequestFailed, event.TransportClosed:
		rec.Event = e.Kind.String()
		rec.Error = e.Text
		rec.Status = e.Status
		return rec
	}
	rec.RTT = Millis(e.RTT) // a round_trip's; zero on every other line
	rec.Event = e.Kind.String()
	rec.Text = e.Text
	rec.Status = e.Status
	return rec
}
