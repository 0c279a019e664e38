package client

import (
	"context"
	"time"

	"inflight/event"
	"inflight/wire"
)

// DefaultRoundTrips is how many plain requests inflight's commands have
// Connect time (Config.RoundTrips).
const DefaultRoundTrips = 3

// roundTripTimeout bounds one timed request. A server that does not answer
// a ping that soon is not waited for: the tracker then learns the round
// trip from the answers to tracked requests instead.
const roundTripTimeout = time.Second

// measureRoundTrip times the quickest plain request the era has, a few
// times, once the connection is up, and reports each as event.RoundTrip.
//
// Why: whether an answer after a cancel crossed it in flight or came after
// the server saw it is bounded by the round trip, and the only honest
// round trip is a measured one of a request that does no work. The era
// probe cannot serve: over stdio it includes the server's start-up (4–13 ms
// for Go servers, ~360 ms for node ones), while a loopback ping takes well
// under a millisecond, so an estimate from it once excused a go-sdk server
// that answered a cancel 1 ms late.
func (c *Client) measureRoundTrip(ctx context.Context, info event.ConnInfo) {
	method, params, modern := wire.MethodPing, []byte(nil), false
	if info.Era == event.EraModern {
		// The modern era has no ping (2026-07-28 changelog); server/discover
		// is its plain request that does no work.
		method, modern = wire.MethodDiscover, true
	}
	for range c.cfg.RoundTrips {
		pctx, cancel := context.WithTimeout(ctx, roundTripTimeout)
		msg, d, err := c.timedCall(pctx, method, params, info.ProtocolVersion, modern)
		cancel()
		switch {
		case err != nil:
			c.note("%s to time the round trip: %v; the round trip will be taken from answers to requests", method, err)
			return
		case msg.Kind == wire.KindError:
			// An error answer is still a full round trip through the server.
			c.note("%s to time the round trip was answered with an error (%s)", method, msg.Error.Message)
		}
		c.emit(event.Event{Kind: event.RoundTrip, Time: time.Now(), RTT: d, Text: method})
	}
}
