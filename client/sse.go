package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	ID    string // the last event ID in force when the event was dispatched
	HasID bool   // the event carried an id field itself
	Type  string
	Data  []byte
}

// errSSECut reports a stream that ended in the middle of an event: the bytes
// of the unfinished event are lost, which a debugger must say rather than
// silently drop.
var errSSECut = errors.New("SSE stream ended in the middle of an event")

// maxRetry caps a server's retry: field. The legacy transport says the client
// MUST wait as long as the server asks before reconnecting; a hostile or
// buggy value (retry: 99999999999) must not stall a resume for days.
const maxRetry = time.Minute

// sseReader parses text/event-stream as the WHATWG specification describes.
//
// We parse SSE ourselves instead of using github.com/tmaxmax/go-sse because
// its public reader ignores the retry field (legacy Streamable HTTP requires
// the client to honour it before resuming) and silently discards an event cut
// off by the end of the stream, which is exactly what inflight must report.
type sseReader struct {
	r        *bufio.Reader
	maxEvent int
	// Retry is the last valid retry: value the server sent (0 if none),
	// capped at maxRetry.
	Retry time.Duration
	// LastID is the last event ID string, as EventSource tracks it: set
	// when an event is dispatched (even one without data), so an event cut
	// off mid-way never moves it. It is what Last-Event-ID resumes from.
	LastID string
	// Comments counts comment lines (keep-alives).
	Comments int
	// dispatched, when set, is told the last event ID string each time an
	// event is dispatched, a priming event (no data) included.
	dispatched func(lastID string)

	idBuf   string // the last event ID buffer (set by id: fields)
	pending bool   // a field of an undispatched event has been read
	skipLF  bool   // the previous line ended with CR: a following LF belongs to it
	started bool   // the first line has been read (for the BOM)
	line    []byte
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), maxEvent: maxEvent}
}

// resumeFrom carries the last event ID over from a previous connection of
// the same stream, as EventSource keeps it across reconnections.
func (s *sseReader) resumeFrom(id string) { s.LastID, s.idBuf = id, id }

// Next returns the next event. At the end of the stream it returns io.EOF,
// or errSSECut when the stream ended inside an event. Data is the reader's
// own copy; the caller may keep it.
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
	var data []byte
	hasData := false
	size := 0
	for {
		before := size
		line, err := s.readLine(&size)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if s.pending || (len(line) > 0 && line[0] != ':') {
					s.pending = false
					return sseEvent{}, errSSECut
				}
				return sseEvent{}, io.EOF
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			// A blank line dispatches the event. The last event ID string
			// moves even when there is no data (a priming event).
			s.pending = false
			s.LastID = s.idBuf
			if s.dispatched != nil {
				s.dispatched(s.LastID)
			}
			if !hasData {
				ev = sseEvent{}
				size = 0
				continue
			}
			ev.ID = s.idBuf
			ev.Data = data
			return ev, nil
		}
		if line[0] == ':' {
			s.Comments++
			// A comment is dropped as soon as it is read, so it takes no
			// room in the event: a server sending keep-alives with no event
			// between them for a long time (or a flood of them) must not
			// end the stream as if one event were too large. readLine
			// still bounds a single comment line.
			size = before
			continue
		}
		s.pending = true
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "event":
			ev.Type = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.idBuf = string(value)
				ev.HasID = true
			}
		case "retry":
			if d, ok := parseRetry(value); ok {
				s.Retry = d
			}
		}
	}
}

// parseRetry reads a retry: value, which the SSE specification allows to be
// ASCII digits only (no sign, no space).
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var ms int64
	for _, b := range v {
		if b < '0' || b > '9' {
			return 0, false
		}
		if ms < int64(maxRetry/time.Millisecond) {
			ms = ms*10 + int64(b-'0')
		}
	}
	return min(time.Duration(ms)*time.Millisecond, maxRetry), true
}

// readLine reads one line without its terminator (CRLF, LF or a lone CR),
// counting bytes into size and failing once an event grows past maxEvent.
// A line is returned as soon as its terminator arrives, even a lone CR whose
// possible LF has not been sent yet: the LF is skipped when it comes. At the
// end of input it returns the unterminated rest (maybe empty) with io.EOF.
// The slice is valid until the next call.
func (s *sseReader) readLine(size *int) ([]byte, error) {
	if cap(s.line) > 1<<20 {
		s.line = nil // do not pin one huge event's memory
	}
	line := s.line[:0]
	defer func() { s.line = line[:0] }()
	if !s.started {
		// A stream may open with a UTF-8 BOM, which is not part of the first
		// line. Waiting for three bytes delays nothing real: no field line
		// is shorter.
		s.started = true
		if b, _ := s.r.Peek(3); string(b) == "\xef\xbb\xbf" {
			_, _ = s.r.Discard(3)
		}
	}
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return line, err
			}
		}
		chunk, _ := s.r.Peek(s.r.Buffered())
		if s.skipLF {
			s.skipLF = false
			if chunk[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(chunk, "\r\n")
		n := len(chunk)
		if i >= 0 {
			n = i + 1
		}
		*size += n
		if s.maxEvent > 0 && *size > s.maxEvent {
			return nil, fmt.Errorf("an SSE event exceeds the %d-byte message limit", s.maxEvent)
		}
		if i < 0 {
			line = append(line, chunk...)
			_, _ = s.r.Discard(n)
			continue
		}
		line = append(line, chunk[:i]...)
		s.skipLF = chunk[i] == '\r'
		_, _ = s.r.Discard(n)
		return line, nil
	}
}
