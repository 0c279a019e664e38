package client_test

import (
	"context"
	"testing"

	"inflight/client"
	"inflight/event"
)

// SendRaw writes a message exactly as given, malformed or not, and reports
// it as an ordinary event.Sent, so the protocol log and the trace show what
// the check battery sent (it used to write beside the client, unseen).
func TestSendRawIsSentAndReported(t *testing.T) {
	p, pipes := newStdioPeer(t, legacyHandshake)
	c, rec, _ := connectClient(t, client.Config{Pipes: pipes})
	raw := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"not a number"`
	if !c.CanSendRaw() {
		t.Fatal("stdio cannot send raw messages")
	}
	if status, err := c.SendRaw(context.Background(), []byte(raw)); err != nil || status != 0 {
		t.Fatalf("SendRaw = %d, %v", status, err)
	}
	if got := p.wait(t, `"not a number"`); got != raw {
		t.Errorf("the server read %q, want the bytes as given: %q", got, raw)
	}
	ev := rec.wait(t, "the raw message's Sent event", func(ev event.Event) bool {
		return ev.Kind == event.Sent && string(ev.Raw) == raw
	})
	if !ev.Internal {
		t.Error("a raw message is the client's own traffic (Internal), not a tracked request")
	}
}
