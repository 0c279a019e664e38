package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"inflight/event"
	"inflight/wire"
)

// ErrNoRawSend: SendRaw on modern Streamable HTTP, which defines no
// client-to-server notifications to carry raw messages in.
var ErrNoRawSend = errors.New("modern Streamable HTTP has no way to send a raw message")

// CanSendRaw reports whether SendRaw can write on this connection: stdio,
// legacy HTTP (a POST in the session) and HTTP+SSE (a POST to the
// endpoint), not modern HTTP.
func (c *Client) CanSendRaw() bool {
	return !(c.kind == event.TransportHTTP && c.era() == event.EraModern)
}

// SendRaw writes raw, one message exactly as given (malformed or not), on
// the connection's transport: a line on stdio, a POST in the legacy HTTP
// session, whose HTTP status it returns (0 on stdio) — a server may well
// refuse what it cannot read, and that is an answer, not a failure. It is
// for what a well-behaved
// client never sends and Cancel refuses to — the check battery's cancel of
// a finished request, of an ID never issued, malformed cancels — and it is
// reported as an event.Sent like every message the client writes
// (Internal: the tracker logs it and follows nothing), so the protocol log
// and the trace show it where it went.
func (c *Client) SendRaw(ctx context.Context, raw []byte) (status int, err error) {
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.leave()
	if !c.CanSendRaw() {
		return 0, ErrNoRawSend
	}
	info := c.Info()
	msg, _ := wire.Decode(raw)
	out := outgoing{method: msg.Method, raw: raw, internal: true, version: info.ProtocolVersion}
	if out.method == "" {
		out.method = "raw message"
	}
	c.emitOwnSent(wire.ID{}, raw, time.Now())
	if st, ok := c.t.(*sseTransport); ok {
		status, err := st.post(ctx, out)
		var se *HTTPStatusError
		if errors.As(err, &se) {
			return status, nil
		}
		return status, err
	}
	if ht, ok := c.t.(*httpTransport); ok {
		status, err := ht.postOneWay(ctx, out)
		var se *HTTPStatusError
		if errors.As(err, &se) {
			return status, nil
		}
		return status, err
	}
	if err := c.t.send(ctx, out); err != nil {
		return 0, fmt.Errorf("send raw message: %w", err)
	}
	return 0, nil
}
