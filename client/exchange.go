package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"sort"
	"sync"
	"time"

	"inflight/event"
	"inflight/wire"
)

// recorder is the http.RoundTripper under every HTTP request of the
// client when Config.RecordHTTP is set: it keeps the request and the
// response, whole but bounded, and reports them as one event.Exchange
// when the response's body ends (or the request fails). It only watches:
// the bytes the transport reads are the ones it would have read.
type recorder struct {
	c    *Client
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	x := &event.HTTPExchange{Start: time.Now(), Method: req.Method, URL: req.URL.String(), Proto: req.Proto,
		RequestHeaders: headerList(req.Header)}
	id := wire.ID{}
	if ref, ok := req.Context().Value(requestKey{}).(requestRef); ok {
		id = ref.id
	}
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			x.RequestBody, _ = io.ReadAll(io.LimitReader(body, event.MaxExchangeBody))
			body.Close()
		}
		if m, err := wire.Decode(x.RequestBody); err == nil && id.IsZero() && m.Kind == wire.KindRequest {
			id = m.ID
		}
	}
	next := r.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		x.End = time.Now()
		x.Err = plainErr(err).Error()
		r.report(id, x)
		return nil, err
	}
	x.Responded = time.Now()
	x.Proto, x.Status = resp.Proto, resp.StatusCode
	x.StatusText = http.StatusText(resp.StatusCode)
	if len(resp.Status) > 4 {
		x.StatusText = resp.Status[4:]
	}
	x.ResponseHeaders = headerList(resp.Header)
	tb := &tappedBody{ReadCloser: resp.Body, x: x, done: func() { r.report(id, x) }}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media == "text/event-stream" {
		tb.sse = &sseTap{}
	}
	resp.Body = tb
	return resp, nil
}

func (r *recorder) report(id wire.ID, x *event.HTTPExchange) {
	r.c.emit(event.Event{Kind: event.Exchange, Time: x.End, RequestID: id, HTTP: x, Status: x.Status})
}

// headerList is h as a list, sorted by name (a map has no order).
func headerList(h http.Header) []event.Header {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []event.Header
	for _, k := range names {
		for _, v := range h[k] {
			out = append(out, event.Header{Name: k, Value: v})
		}
	}
	return out
}

// tappedBody is a response body that keeps what is read of it (an event
// stream as its events) and reports the exchange once, at its end, its
// close or its failure.
type tappedBody struct {
	io.ReadCloser
	mu   sync.Mutex
	x    *event.HTTPExchange
	sse  *sseTap
	done func()
	over bool
}

func (b *tappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		return n, err
	}
	now := time.Now()
	if n > 0 {
		b.x.ResponseSize += int64(n)
		if b.sse != nil {
			b.sse.feed(p[:n], now, b.x)
		} else {
			keep := min(n, event.MaxExchangeBody-len(b.x.ResponseBody))
			b.x.ResponseBody = append(b.x.ResponseBody, p[:keep]...)
			b.x.Truncated += int64(n - keep)
		}
	}
	if err != nil {
		// A body whose request's context ended was closed by inflight (a
		// cancel, a late window's end, the connection's close).
		closed := errors.Is(err, context.Canceled)
		if err != io.EOF && !closed {
			b.x.Err = plainErr(err).Error()
		}
		b.end(now, closed)
	}
	return n, err
}

func (b *tappedBody) Close() error {
	err := b.ReadCloser.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.end(time.Now(), true)
	return err
}

// end reports the exchange, once; b.mu is held.
func (b *tappedBody) end(now time.Time, closed bool) {
	if b.over {
		return
	}
	b.over = true
	b.x.End = now
	b.x.ClosedByClient = closed
	if b.sse != nil {
		b.sse.flush(now, b.x)
	}
	b.done()
}

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
