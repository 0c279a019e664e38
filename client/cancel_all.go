package client

import (
	"time"

	"inflight/wire"
)

// CancelAll cancels ids in order, each with the signal its transport and
// era require, and returns once every signal went out or within has
// passed, whichever comes first. A person quitting waits at most within;
// the cancels still going then carry on, each bounded as every Cancel is,
// and Close waits for them like any call in progress.
func (c *Client) CancelAll(ids []wire.ID, reason string, within time.Duration) {
	if len(ids) == 0 || c.enter() != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer c.leave()
		defer close(done)
		for _, id := range ids {
			_, _ = c.Cancel(id, reason)
		}
	}()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
