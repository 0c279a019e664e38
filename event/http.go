package event

import "time"

// HTTPExchange is one HTTP request the client made and its response, as
// they went on the wire: what an HAR entry is made of. The strings are
// raw (a server's headers and body, the user's own headers, credentials
// included): whatever writes them out redacts them first (trace does).
// Bodies are bounded (MaxExchangeBody); what was not kept is counted.
type HTTPExchange struct {
	// Start is when the request was handed to the connection, Responded
	// when the response's headers were read (zero: none came), End when
	// its body ended — read to its end, closed by the client, or broken —
	// or when the request failed.
	Start, Responded, End time.Time
	Method                string
	URL                   string
	// Proto is the response's protocol ("HTTP/1.1"), else the request's.
	Proto          string
	RequestHeaders []Header
	RequestBody    []byte
	// Status and StatusText are the response's ("200", "OK"); 0 when the
	// request failed before one came (Err says why).
	Status          int
	StatusText      string
	ResponseHeaders []Header
	// ResponseBody is the body as read, for a response that is not an
	// event stream; an event stream's events are in SSE instead.
	ResponseBody []byte
	// ResponseSize counts the body's bytes read in all; Truncated those
	// of the body or the events' data not kept.
	ResponseSize int64
	Truncated    int64
	// SSE are the events of a text/event-stream response, each stamped
	// with the time its end was read; SSEDropped counts those past
	// MaxExchangeEvents.
	SSE        []SSEEvent
	SSEDropped int
	// ClosedByClient: the client closed the body before its end (a
	// modern cancel, the end of a late window, the connection's close).
	ClosedByClient bool
	// Err is why the request or its body failed, if it did.
	Err string
	// BodiesLeftOut: the response's body (or event stream) was not kept,
	// only counted (no HAR was being written; httptap.Transport.Bodies).
	BodiesLeftOut bool
}

// Header is one header line.
type Header struct {
	Name, Value string
}

// SSEEvent is one event of an event stream: its type (empty for the
// default, "message"), its id and its data, as the server sent them.
type SSEEvent struct {
	Time  time.Time
	Event string
	ID    string
	Data  string
}

// Bounds of what an HTTPExchange keeps: each body (and an event stream's
// data in all) to MaxExchangeBody bytes, an event stream to
// MaxExchangeEvents events.
const (
	MaxExchangeBody   = 1 << 20
	MaxExchangeEvents = 10000
)
