package client

import (
	"context"
	"time"

	"inflight/event"
	"inflight/wire"
)

// postCancel sends notifications/cancelled for id as one POST, the cancel
// of legacy Streamable HTTP and of HTTP+SSE, with post (the transport's
// one-way POST), and reports it as the other transports do.
//
// The cancel leaves when the POST starts. Its CancelSent can only be sent
// once the POST is over (it carries the POST's error), but it is stamped
// with the start, and CancelLeaving is said before the POST, so that what a
// stream brings during a slow POST is judged against the moment the cancel
// left (found in review: it was all taken for crossed until the POST's
// end). The POST's status is reported after the cancel, which it answers.
func (c *Client) postCancel(ctx context.Context, id wire.ID, reason string, post func(context.Context, outgoing) (int, error)) error {
	raw := wire.Notification(wire.NotifyCancelled, wire.CancelledParams(id, reason))
	info := c.Info()
	at := time.Now()
	c.emit(event.Event{Kind: event.CancelLeaving, Time: at, RequestID: id, Signal: event.SignalNotification})
	c.emitOwnSent(id, raw, at)
	var status *event.Event
	_, err := post(ctx, outgoing{method: wire.NotifyCancelled, raw: raw, version: info.ProtocolVersion,
		status: func(ev event.Event) { status = &ev }})
	c.emit(event.Event{Kind: event.CancelSent, Time: at, RequestID: id, Signal: event.SignalNotification, Reason: reason, Err: err})
	if status != nil {
		c.emit(*status)
	}
	return err
}
