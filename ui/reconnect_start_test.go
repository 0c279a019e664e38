package ui

import (
	"errors"
	"testing"

	"inflight/event"
)

// After R, the first requests wait for the new connection's
// event.Connected, as they do on the first connection: the tracker's own
// "connected" outlives a connection, and trusting it sent them before the
// new connection's set-up was applied (found in review).
func TestReconnectWaitsForConnected(t *testing.T) {
	h := newHarness(t, 120, 35)
	if n := len(h.fake.sent); n != 0 {
		t.Fatalf("first connection: %d requests sent before Connected was applied", n)
	}
	h.connect()
	startSlow(h)
	h.events(event.Event{Kind: event.TransportClosed, Err: errors.New("the server exited: exit status 1")})
	h.fake = newFake()
	h.key("R")
	if n := len(h.fake.sent); n != 0 {
		t.Fatalf("reconnect: %d request(s) (%s) sent before the new connection's Connected was applied", n, h.fake.sent[0].Method)
	}
	info := h.fake.info
	h.events(event.Event{Kind: event.Connected, Info: &info})
	if n := len(h.fake.sent); n != 1 {
		t.Errorf("reconnect: %d requests sent once Connected was applied, want tools/list", n)
	}
}
