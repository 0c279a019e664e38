package client

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"inflight/wire"
)

// Errors of DropStream.
var (
	// ErrNoEventID: the server gave none of the stream's events an ID, so
	// there is nothing to resume from (Last-Event-ID); dropping it would
	// only lose the request.
	ErrNoEventID = errors.New("the server gives its events no IDs, so nothing can be resumed")
	// ErrNothingRead: no event has come on the stream yet, so whether the
	// server gives its events IDs is not known; try again after one has.
	ErrNothingRead = errors.New("no event has come on the stream yet")
	// ErrNotResumable: the request has no legacy SSE response stream to
	// drop (stdio, HTTP+SSE, the modern era — whose streams are never
	// resumed — or an answer sent as one JSON body).
	ErrNotResumable = errors.New("only a legacy Streamable HTTP request's own SSE response stream can be dropped and resumed")
)

// errDropped is how a stream inflight dropped on purpose ended.
var errDropped = errors.New("inflight dropped the connection to see the stream resumed")

// resumable is what DropStream needs of a request's legacy SSE stream: the
// connection now read (nil between two), how many events were read on it
// (priming events included), and the last event ID.
type resumable struct {
	dropMu      sync.Mutex
	body        io.Closer
	events      int
	lastEventID string
	// dropped: DropStream closed the connection; readSSE resumes it.
	dropped atomic.Bool
	// jsonReply: the server answered with one JSON body, no stream.
	jsonReply atomic.Bool
}

// reading records the connection now read (nil once it ended).
func (r *resumable) reading(body io.Closer) {
	r.dropMu.Lock()
	r.body = body
	r.dropMu.Unlock()
}

// sawEventID records the last event ID read, before the event is handed on.
func (r *resumable) sawEventID(id string) {
	r.dropMu.Lock()
	r.events++
	r.lastEventID = id
	r.dropMu.Unlock()
}

// DropStream closes the connection that carries legacy request id's SSE
// response stream, without cancelling the request, as a network failure
// would: the client then resumes the stream with a GET carrying
// Last-Event-ID (at once, or after the server's retry: if it gave one),
// and what the server sends on the resumed stream is the request's again.
// It returns the last event ID read, which the resumption sends. It fails
// with ErrNoEventID when the server gave no event an ID, with
// ErrNothingRead before any event came on the stream, with
// ErrNotResumable when the request has no such stream, and with
// ErrNotInFlight when the request is over or not known.
func (c *Client) DropStream(id wire.ID) (lastEventID string, err error) {
	if err := c.enter(); err != nil {
		return "", fmt.Errorf("drop the stream of request %s: %w", id, err)
	}
	defer c.leave()
	t, ok := c.t.(*httpTransport)
	if !ok {
		return "", ErrNotResumable
	}
	return t.drop(id)
}

func (t *httpTransport) drop(id wire.ID) (string, error) {
	t.mu.Lock()
	st := t.streams[id]
	t.mu.Unlock()
	switch {
	case st == nil, st.cancelled.Load(), st.closedByClient.Load():
		return "", ErrNotInFlight
	case st.modern:
		return "", ErrNotResumable
	}
	if st.jsonReply.Load() {
		return "", ErrNotResumable
	}
	st.dropMu.Lock()
	defer st.dropMu.Unlock()
	switch {
	case st.body == nil, st.events == 0:
		// Not open yet, between two connections, or nothing read on it.
		return "", ErrNothingRead
	case st.lastEventID == "":
		return "", ErrNoEventID
	}
	st.dropped.Store(true)
	_ = st.body.Close()
	st.body = nil
	return st.lastEventID, nil
}
