package client_test

import (
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// CancelAll sends every cancel, in order, and returns once they went out;
// with a write stuck it returns at its bound instead, and the stuck cancel
// still reports when it goes out (the client, not its caller, owns the
// goroutine that bounds the wait).
func TestCancelAll(t *testing.T) {
	_, pipes := newStdioPeer(t, legacyHandshake)
	gate := newGate(pipes.Stdin, true)
	pipes.Stdin = gate
	c, rec, _ := connectClient(t, client.Config{Pipes: pipes, WriteTimeout: time.Minute})
	gate.openAtCleanup(t)
	a := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	b := send(t, c, 2, wire.MethodToolsCall, toolCall("x", nil))
	start := time.Now()
	c.CancelAll([]wire.ID{a}, "quit", time.Minute)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("CancelAll of a cancel that could go out took %s", d)
	}
	rec.wait(t, "the cancel", func(ev event.Event) bool { return ev.Kind == event.CancelSent && ev.RequestID == a })
	gate.arm()
	const within = 100 * time.Millisecond
	start = time.Now()
	c.CancelAll([]wire.ID{b}, "quit", within)
	if d := time.Since(start); d < within || d > 20*within {
		t.Errorf("CancelAll with a stuck write returned after %s, want about %s", d, within)
	}
	gate.open()
	rec.wait(t, "the stuck cancel, once its write went through", func(ev event.Event) bool {
		return ev.Kind == event.CancelSent && ev.RequestID == b
	})
}
