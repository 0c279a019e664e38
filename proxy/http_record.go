package proxy

import (
	"context"
	"net/http"

	"inflight/event"
	"inflight/httptap"
	"inflight/wire"
)

// This file records each HTTP exchange between a host and the upstream
// whole (Options.RecordHTTP): the request as it went upstream (the host's
// headers and body), the upstream's status, headers and body or event
// stream with the time of each event, as an http_exchange line of the
// --trace file, which an HAR is made of. The tap (package httptap) sits
// under the proxy's upstream client: it copies what passes, bounded as the
// client's own (event.MaxExchangeBody, event.MaxExchangeEvents), and hands
// the exchange to the recorder's queue at its end, which never blocks;
// the forwarding does not change and never waits for it.

// tapKey carries, in an upstream request's context, the host session and
// POST its exchange belongs to (tapRef).
type tapKey struct{}

type tapRef struct {
	session string
	seq     uint64
}

// withTapRef marks ctx as the context of the host's request of session
// sess, POST seq (0: not a POST).
func withTapRef(ctx context.Context, sess string, seq uint64) context.Context {
	return context.WithValue(ctx, tapKey{}, tapRef{session: sess, seq: seq})
}

// recordExchanges puts the tap under the proxy's upstream client.
func (p *httpProxy) recordExchanges(bodies bool) {
	p.client.Transport = &httptap.Transport{Next: p.client.Transport, Report: p.exchangeOver, Bodies: bodies}
}

// exchangeOver queues an exchange that is over for the recorder. A
// request of the proxy's own (a rule's cancel POST) has no host POST
// behind it: its session is the header it carries.
func (p *httpProxy) exchangeOver(req *http.Request, x *event.HTTPExchange) {
	ref, ok := req.Context().Value(tapKey{}).(tapRef)
	if !ok {
		ref.session = req.Header.Get("Mcp-Session-Id")
	}
	p.q.pushExchange(line{ctl: ctlExchange, at: x.End, http: x, session: ref.session, tap: ref.seq})
}

// exchangeSize is what an exchange weighs against the queue's bound.
func exchangeSize(x *event.HTTPExchange) int {
	n := 256 + len(x.RequestBody) + len(x.ResponseBody)
	for _, h := range x.RequestHeaders {
		n += len(h.Name) + len(h.Value)
	}
	for _, h := range x.ResponseHeaders {
		n += len(h.Name) + len(h.Value)
	}
	for _, e := range x.SSE {
		n += 64 + len(e.Event) + len(e.ID) + len(e.Data)
	}
	return n
}

// pushExchange queues an exchange's line like push does a message's:
// never waiting, and, past the queue's bound, left out and counted (as
// the server's: what is lost is its answer's record).
func (q *queue) pushExchange(l line) {
	size := exchangeSize(l.http)
	q.mu.Lock()
	if q.bytes+size > q.maxBytes {
		q.gap.other[FromServer]++
		q.mu.Unlock()
		return
	}
	q.lines = append(q.lines, l)
	q.bytes += size
	q.peak = max(q.peak, q.bytes)
	q.mu.Unlock()
	q.wakeRecorder()
}

// exchange writes an exchange's line to the --trace file (the attach
// socket's viewers are not sent the bodies again). Its request is the
// JSON-RPC request its body carried, if any.
func (r *recorder) exchange(l *line) {
	if r.httpTrace == nil || l.http == nil {
		return
	}
	ev := event.Event{Kind: event.Exchange, Time: l.at, HTTP: l.http, Status: l.http.Status, SessionID: l.session}
	if m, err := wire.Decode(l.http.RequestBody); err == nil && m.Kind == wire.KindRequest {
		ev.RequestID = m.ID
	}
	_ = r.httpTrace.Event(ev)
}
