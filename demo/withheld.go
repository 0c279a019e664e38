package demo

// Holding back the answer to a cancelled request.
//
// The spec says a server SHOULD NOT answer a request the client cancelled,
// and the demo's well-behaved tools must show that. The go-sdk server,
// however, always writes a response once a handler returns, even when the
// request was cancelled (go-sdk issues 1235 and 1259; see processResult in
// its internal/jsonrpc2/conn.go), and offers no hook between the handler and
// the wire. Once the SDK stops answering requests the peer cancelled (go-sdk
// pull request 1267), the filters below become redundant.
//
// So a handler that honours cancellation returns errWithheld: a JSON-RPC
// error carrying a private code and a marker message that includes a random
// nonce, which no peer can guess or provoke. Every byte the demo sends passes
// a filter that drops responses carrying that marker:
//
//   - stdio: withholdingConn wraps the SDK's connection, and its Write drops
//     such responses before they are encoded;
//   - HTTP: withholdingWriter wraps the http.ResponseWriter, parses the SSE
//     stream (or JSON body) the SDK writes, and drops such events.
//
// Handlers that ignore cancellation (stubborn) simply return their result,
// which goes out as a late response. If the filter ever failed, the client
// would see an honest error saying the response was withheld, not a bogus
// result.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeWithheld lies in the implementation-defined range (-32000 to -32019)
// of the 2026-07-28 error code policy.
const codeWithheld = -32019

// withheldMarker identifies responses the filters drop. The nonce makes it
// unique to this process.
var withheldMarker = "inflight-demo: response withheld because the request was cancelled [" + rand.Text() + "]"

// errWithheld is returned by handlers whose request was cancelled; the
// output filters drop the response it becomes.
var errWithheld = &jsonrpc.Error{Code: codeWithheld, Message: withheldMarker}

// isWithheldError reports whether err is (or wraps) errWithheld's marker.
func isWithheldError(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == codeWithheld && strings.Contains(werr.Message, withheldMarker)
}

// isWithheldMessage reports whether msg is a response carrying the marker.
func isWithheldMessage(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	return ok && resp.Error != nil && isWithheldError(resp.Error)
}

// isWithheldJSON reports whether data is one encoded JSON-RPC response
// carrying the marker.
func isWithheldJSON(data []byte) bool {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return false
	}
	var resp struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &resp); err != nil || resp.Error == nil {
		return false
	}
	return resp.Error.Code == codeWithheld && strings.Contains(resp.Error.Message, withheldMarker)
}

// withholdingConn is the stdio side of the filter: an mcp.Connection whose
// Write drops withheld responses. It also records when the connection is gone
// (its reads failed or it was closed), which stubborn watches.
//
// Wrapping hides the SDK's unexported session-state hook of its stdio
// connection, which only serves to refuse JSON-RPC batches after 2025-06-18;
// MCP clients do not send batches any more.
type withholdingConn struct {
	mcp.Connection
	gone     chan struct{}
	goneOnce sync.Once
	// shut is set when the demo itself closes the connection (Close, or
	// ServeStdio's context), after which read and write errors are expected.
	shut atomic.Bool

	// inflight holds the IDs of requests read but not yet answered (or
	// withheld), so that Server.Close can let them finish: once the SDK's
	// session is closing it refuses to write any response, including the
	// final result of a listen the server is ending.
	mu       sync.Mutex
	inflight map[jsonrpc.ID]struct{}
	changed  chan struct{} // closed and replaced whenever inflight shrinks

	// The task layer (taskwire.go): srv answers the requests it
	// intercepts, on goroutines counted by taskWG, for the tasks of owner;
	// rewrites (guarded by mu) names the requests whose SDK answers it
	// amends. A nil srv leaves every message to the SDK.
	srv      *Server
	owner    string
	taskWG   sync.WaitGroup
	rewrites map[jsonrpc.ID]string
	// session is the SDK's session on the connection, through which the
	// task layer asks a legacy task's question (taskwire.go).
	session atomic.Pointer[mcp.ServerSession]
}

func newWithholdingConn(c mcp.Connection) *withholdingConn {
	return &withholdingConn{
		Connection: c,
		gone:       make(chan struct{}),
		inflight:   make(map[jsonrpc.ID]struct{}),
		changed:    make(chan struct{}),
		rewrites:   make(map[jsonrpc.ID]string),
	}
}

// Read implements mcp.Connection. The requests the task layer answers never
// reach the SDK.
func (c *withholdingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.markGone()
			return msg, err
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if c.interceptStdio(req) {
				continue
			}
			c.noteRewrite(req)
			c.mu.Lock()
			c.inflight[req.ID] = struct{}{}
			c.mu.Unlock()
		}
		return msg, nil
	}
}

// Write implements mcp.Connection, dropping withheld responses and amending
// the answers the task layer rewrites.
func (c *withholdingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		defer c.answered(resp.ID)
		msg = c.rewrite(resp)
	}
	if isWithheldMessage(msg) {
		return nil
	}
	return c.Connection.Write(ctx, msg)
}

func (c *withholdingConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.inflight[id]; ok {
		delete(c.inflight, id)
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

// drain waits until every request read has been answered (or withheld), the
// connection is gone, or expired fires. It reports whether nothing is left.
func (c *withholdingConn) drain(expired <-chan time.Time) bool {
	for {
		c.mu.Lock()
		n, changed := len(c.inflight), c.changed
		c.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-changed:
		case <-c.gone:
			return true
		case <-expired:
			return false
		}
	}
}

// shutdown closes the connection on the demo's own initiative.
func (c *withholdingConn) shutdown() {
	c.shut.Store(true)
	_ = c.Close()
}

// Close implements mcp.Connection.
func (c *withholdingConn) Close() error {
	c.markGone()
	return c.Connection.Close()
}

func (c *withholdingConn) markGone() {
	c.goneOnce.Do(func() { close(c.gone) })
}

// connTransport hands an already connected mcp.Connection to Server.Connect.
type connTransport struct{ conn mcp.Connection }

// Connect implements mcp.Transport.
func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// goneKey carries a connection's gone channel into its handlers' contexts.
type goneKey struct{}

// connectionGone returns a channel closed when the request's stdio connection
// is gone, or nil (which blocks forever) on other transports.
func connectionGone(ctx context.Context) <-chan struct{} {
	gone, _ := ctx.Value(goneKey{}).(chan struct{})
	return gone
}

// withholdingWriter is the HTTP side of the filter. It passes everything
// through except withheld responses: in a text/event-stream body it drops the
// whole SSE event whose data is one, and in an application/json body the
// single write that is one (the SDK writes a JSON body in one piece).
//
// SSE bytes are passed on one complete event at a time, so a partial event is
// held back until its terminating blank line arrives; finish passes on any
// remainder when the handler returns.
type withholdingWriter struct {
	w       http.ResponseWriter
	pending []byte // the start of an incomplete SSE event
	// rewriteID and rewriteMethod name the response the task layer amends
	// (see rewriteResult); a nil rewriteID amends nothing.
	rewriteID     json.RawMessage
	rewriteMethod string
}

// amend applies the task layer's rewrite to one encoded message.
func (f *withholdingWriter) amend(data []byte) ([]byte, bool) {
	if f.rewriteID == nil {
		return data, false
	}
	return rewriteMessage(data, f.rewriteID, f.rewriteMethod)
}

// Header implements http.ResponseWriter.
func (f *withholdingWriter) Header() http.Header { return f.w.Header() }

// WriteHeader implements http.ResponseWriter.
func (f *withholdingWriter) WriteHeader(code int) { f.w.WriteHeader(code) }

// Write implements http.ResponseWriter.
func (f *withholdingWriter) Write(p []byte) (int, error) {
	switch mediaType(f.w.Header().Get("Content-Type")) {
	case "text/event-stream":
		return f.writeSSE(p)
	case "application/json":
		if isWithheldJSON(p) {
			return len(p), nil
		}
		if out, ok := f.amend(p); ok {
			if _, err := f.w.Write(out); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return f.w.Write(p)
}

func (f *withholdingWriter) writeSSE(p []byte) (int, error) {
	f.pending = append(f.pending, p...)
	var out []byte
	rest := f.pending
	for {
		n := nextEvent(rest)
		if n < 0 {
			break
		}
		data := eventData(rest[:n])
		switch amended, ok := f.amend(data); {
		case isWithheldJSON(data):
		case ok:
			out = append(out, replaceEventData(rest[:n], amended)...)
		default:
			out = append(out, rest[:n]...)
		}
		rest = rest[n:]
	}
	f.pending = append(f.pending[:0], rest...)
	if len(out) > 0 {
		if _, err := f.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// finish passes on an incomplete event left when the handler returned, so
// the filter never loses bytes that were not a withheld response.
func (f *withholdingWriter) finish() {
	if len(f.pending) > 0 {
		_, _ = f.w.Write(f.pending)
		f.pending = nil
	}
}

// Flush implements http.Flusher, which the SDK uses (through
// http.ResponseController) after every event. Only complete events have been
// passed on, so only they are flushed.
func (f *withholdingWriter) Flush() {
	_ = http.NewResponseController(f.w).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (f *withholdingWriter) Unwrap() http.ResponseWriter { return f.w }

// mediaType returns the lower-cased media type of a Content-Type value,
// without parameters.
func mediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// nextEvent returns the length of the first complete SSE event in b,
// including the blank line that ends it, or -1 if b holds no complete event.
// Lines end with "\r\n", "\n" or "\r", as the SSE specification allows; a
// trailing "\r" is not taken as a line end yet, since a "\n" may follow in the
// next write.
func nextEvent(b []byte) int {
	lineStart := 0
	for i := 0; i < len(b); i++ {
		var end int
		switch b[i] {
		case '\n':
			end = i + 1
		case '\r':
			if i+1 == len(b) {
				return -1
			}
			end = i + 1
			if b[i+1] == '\n' {
				end = i + 2
			}
		default:
			continue
		}
		if i == lineStart {
			return end
		}
		lineStart = end
		i = end - 1
	}
	return -1
}

// eventData returns the data of one SSE event: its "data" fields joined with
// newlines, as an SSE client would see it.
func eventData(event []byte) []byte {
	var data []byte
	first := true
	for len(event) > 0 {
		line := event
		next := len(event)
		if i := bytes.IndexAny(event, "\r\n"); i >= 0 {
			line = event[:i]
			next = i + 1
			if event[i] == '\r' && i+1 < len(event) && event[i+1] == '\n' {
				next = i + 2
			}
		}
		event = event[next:]
		field, value, found := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		if !first {
			data = append(data, '\n')
		}
		data = append(data, value...)
		first = false
	}
	return data
}
