// Package httptap watches HTTP exchanges as they go: an http.RoundTripper
// that keeps each request and its response, whole but bounded (bodies to
// event.MaxExchangeBody, an event stream to event.MaxExchangeEvents
// events, each stamped with the time it was read), and reports them as one
// event.HTTPExchange when the response's body ends, is closed, or the
// request fails. It only watches: the bytes the transport sends and reads
// are the ones it would have without it, and nothing it does waits on
// anything but its own small copies.
//
// The client records its own requests with it (for a trace or an HAR), and
// the HTTP proxy the exchanges between a host and the upstream.
package httptap

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"inflight/event"
)

// Transport is the http.RoundTripper that taps every exchange going
// through Next (http.DefaultTransport when nil).
type Transport struct {
	Next http.RoundTripper
	// Report receives each exchange once it is over, on the goroutine that
	// ended it (a body's reader, its closer, or RoundTrip's caller). req
	// is the request as RoundTrip was given it (its context says whose it
	// is). Report must not block: the wire waits for it.
	Report func(req *http.Request, x *event.HTTPExchange)
	// Bodies keeps the responses' bodies and event streams (for an HAR);
	// without it an exchange has its request, the response's head, its
	// size and its times, and says the rest was left out
	// (HTTPExchange.BodiesLeftOut): what a stream carried is in the
	// trace's message lines already, and a flood's would double it.
	Bodies bool
}

// RoundTrip sends req through Next and taps it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	x := &event.HTTPExchange{Start: time.Now(), Method: req.Method, URL: req.URL.String(), Proto: req.Proto,
		RequestHeaders: headerList(req.Header), BodiesLeftOut: !t.Bodies}
	sent := req
	var body *bodyCopy
	switch {
	case req.GetBody != nil:
		// The body can be had again: read a copy of it, and leave the one
		// the transport sends alone.
		if b, err := req.GetBody(); err == nil {
			x.RequestBody, _ = io.ReadAll(io.LimitReader(b, event.MaxExchangeBody))
			b.Close()
		}
	case req.Body != nil && req.Body != http.NoBody:
		// A body that streams (the proxy's host's): kept as the transport
		// reads it.
		body = &bodyCopy{ReadCloser: req.Body}
		sent = req.Clone(req.Context())
		sent.Body = body
	}
	report := func() {
		if body != nil {
			x.RequestBody = body.kept()
		}
		t.Report(req, x)
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(sent)
	if err != nil {
		x.End = time.Now()
		x.Err = plainErr(err).Error()
		report()
		return nil, err
	}
	x.Responded = time.Now()
	x.Proto, x.Status = resp.Proto, resp.StatusCode
	x.StatusText = http.StatusText(resp.StatusCode)
	if len(resp.Status) > 4 {
		x.StatusText = resp.Status[4:]
	}
	x.ResponseHeaders = headerList(resp.Header)
	tb := &tappedBody{ReadCloser: resp.Body, x: x, done: report}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media == "text/event-stream" && t.Bodies {
		tb.sse = &sseTap{}
	}
	resp.Body = tb
	return resp, nil
}

// plainErr strips net/http's "Post <url>:" wrapper, whose URL may carry a
// secret in its query.
func plainErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
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

// bodyCopy is a request body that keeps the first MaxExchangeBody bytes
// the transport reads of it. The transport may still be reading it (a
// full-duplex exchange) when the response ends: kept takes a copy.
type bodyCopy struct {
	io.ReadCloser
	mu  sync.Mutex
	buf []byte
}

func (b *bodyCopy) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.mu.Lock()
		keep := min(n, event.MaxExchangeBody-len(b.buf))
		b.buf = append(b.buf, p[:keep]...)
		b.mu.Unlock()
	}
	return n, err
}

func (b *bodyCopy) kept() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
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
		switch {
		case b.x.BodiesLeftOut: // counted, not kept
		case b.sse != nil:
			b.sse.feed(p[:n], now, b.x)
		default:
			keep := min(n, event.MaxExchangeBody-len(b.x.ResponseBody))
			b.x.ResponseBody = append(b.x.ResponseBody, p[:keep]...)
			b.x.Truncated += int64(n - keep)
		}
	}
	if err != nil {
		// A body whose request's context ended was closed by the one that
		// made it (the client's cancel, a late window's end, the
		// connection's close; the proxy's host gone).
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
