package httptap

import (
	"bytes"
	"time"

	"inflight/event"
)

// sseTap cuts an event stream into its events as the bytes are read, and
// stamps each with the time its end was read. It keeps the fields the
// HAR wants (event, id, data) and ignores retry: and comments.
type sseTap struct {
	line    []byte
	lineCut bool // the line passed the bound; the rest of it is dropped
	lastCR  bool // the last chunk ended in \r: a \n starting the next ends nothing
	cur     event.SSEEvent
	data    bytes.Buffer
	// dataLines counts the event's data: lines, joined by \n.
	dataLines int
	has       bool
	kept      int // bytes of data kept in all
}

func (s *sseTap) feed(b []byte, now time.Time, x *event.HTTPExchange) {
	if s.lastCR && len(b) > 0 && b[0] == '\n' {
		b = b[1:]
	}
	s.lastCR = false
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			s.appendLine(b)
			return
		}
		s.appendLine(b[:i])
		s.field(now, x)
		if b[i] == '\r' {
			if i+1 == len(b) {
				s.lastCR = true
			} else if b[i+1] == '\n' {
				i++
			}
		}
		b = b[i+1:]
	}
}

func (s *sseTap) appendLine(b []byte) {
	if room := event.MaxExchangeBody - len(s.line); room < len(b) {
		b, s.lineCut = b[:max(room, 0)], true
	}
	s.line = append(s.line, b...)
}

// field takes the line just ended: a field of the event, or, empty, the
// event's end.
func (s *sseTap) field(now time.Time, x *event.HTTPExchange) {
	line := s.line
	s.line, s.lineCut = s.line[:0], false
	if len(line) == 0 {
		s.dispatch(now, x)
		return
	}
	if line[0] == ':' {
		return
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		s.cur.Event, s.has = string(value), true
	case "id":
		s.cur.ID, s.has = string(value), true
	case "data":
		if s.dataLines > 0 {
			s.data.WriteByte('\n')
		}
		s.data.Write(value)
		s.dataLines++
		s.has = true
	}
}

func (s *sseTap) dispatch(now time.Time, x *event.HTTPExchange) {
	if !s.has {
		return
	}
	ev := s.cur
	ev.Time = now
	data := s.data.Bytes()
	s.cur, s.has, s.dataLines = event.SSEEvent{}, false, 0
	s.data.Reset()
	if len(x.SSE) >= event.MaxExchangeEvents {
		x.SSEDropped++
		x.Truncated += int64(len(data))
		return
	}
	if keep := min(len(data), event.MaxExchangeBody-s.kept); keep < len(data) {
		x.Truncated += int64(len(data) - keep)
		data = data[:max(keep, 0)]
	}
	s.kept += len(data)
	ev.Data = string(data)
	x.SSE = append(x.SSE, ev)
}

// flush ends a stream cut in the middle of an event: what came of it is
// kept, as a reader of the stream would not (a partial event is no
// event), because it is what the server sent.
func (s *sseTap) flush(now time.Time, x *event.HTTPExchange) {
	if len(s.line) > 0 {
		s.field(now, x)
	}
	s.dispatch(now, x)
}
