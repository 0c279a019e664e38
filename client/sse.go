package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	ID    string // the event's own id field ("" when it had none)
	HasID bool
	Type  string
	Data  []byte
}

// errSSECut reports a stream that ended in the middle of an event: the bytes
// of the unfinished event are lost, which a debugger must say rather than
// silently drop.
var errSSECut = errors.New("SSE stream ended in the middle of an event")

// sseReader parses text/event-stream as the WHATWG specification describes.
//
// We parse SSE ourselves instead of using github.com/tmaxmax/go-sse because
// its public reader ignores the retry field (legacy Streamable HTTP requires
// the client to honour it before resuming) and silently discards an event cut
// off by the end of the stream, which is exactly what inflight must report.
type sseReader struct {
	r        *bufio.Reader
	maxEvent int
	// Retry is the last retry: value the server sent (0 if none).
	Retry time.Duration
	// LastID is the last event id seen, as EventSource tracks it.
	LastID string
	// Comments counts comment lines (keep-alives).
	Comments int
	// pending is true while an event is being accumulated.
	pending bool
	// queued holds lines split off a line that contained lone CRs.
	queued [][]byte
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), maxEvent: maxEvent}
}

// Next returns the next event. At the end of the stream it returns io.EOF,
// or errSSECut when the stream ended inside an event.
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	size := 0
	for {
		line, err := s.readLine(&size)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if s.pending || len(line) > 0 {
					return sseEvent{}, errSSECut
				}
				return sseEvent{}, io.EOF
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			// A blank line dispatches the event, if it carried data.
			s.pending = false
			if !hasData {
				ev = sseEvent{}
				size = 0
				continue
			}
			ev.Data = data.Bytes()
			return ev, nil
		}
		if line[0] == ':' {
			s.Comments++
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
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "event":
			ev.Type = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID, ev.HasID = string(value), true
				s.LastID = ev.ID
			}
		case "retry":
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 {
				s.Retry = time.Duration(n) * time.Millisecond
			}
		}
	}
}

// readLine reads one line without its terminator (CRLF, LF or a lone CR),
// counting bytes into size and failing once an event grows past maxEvent.
func (s *sseReader) readLine(size *int) ([]byte, error) {
	if len(s.queued) > 0 {
		line := s.queued[0]
		s.queued = s.queued[1:]
		return line, nil
	}
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		*size += len(chunk)
		if s.maxEvent > 0 && *size > s.maxEvent {
			return nil, fmt.Errorf("SSE event larger than %d bytes", s.maxEvent)
		}
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 && errors.Is(err, io.EOF) {
			// An unterminated final line is an incomplete event.
			return line, io.EOF
		}
		return line, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	// A lone CR also ends a line: split and queue the rest.
	if bytes.IndexByte(line, '\r') >= 0 {
		parts := bytes.Split(line, []byte{'\r'})
		line, s.queued = parts[0], append(s.queued, parts[1:]...)
	}
	return line, nil
}
