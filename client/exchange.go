package client

import (
	"net/http"

	"inflight/event"
	"inflight/httptap"
	"inflight/wire"
)

// recordHTTP is the http.RoundTripper under every HTTP request of the
// client when Config.RecordHTTP is set: it reports each exchange whole
// (bounded) as one event.Exchange when the response's body ends or the
// request fails (package httptap). It only watches: the bytes the
// transport reads are the ones it would have read.
func recordHTTP(c *Client, next http.RoundTripper) http.RoundTripper {
	return &httptap.Transport{Next: next, Bodies: c.cfg.RecordHTTPBodies, Report: func(req *http.Request, x *event.HTTPExchange) {
		id := wire.ID{}
		if ref, ok := req.Context().Value(requestKey{}).(requestRef); ok {
			id = ref.id
		}
		if m, err := wire.Decode(x.RequestBody); err == nil && id.IsZero() && m.Kind == wire.KindRequest {
			id = m.ID
		}
		c.emit(event.Event{Kind: event.Exchange, Time: x.End, RequestID: id, HTTP: x, Status: x.Status})
	}}
}
