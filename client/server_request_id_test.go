package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"inflight/client"
	"inflight/wire"
)

// TestServerRequestIDInHandlerContext: a ServerRequests handler that
// hands the question on (the TUI) learns the server's ID for it from its
// ctx, the ID the tracker's ServerRequest carries.
func TestServerRequestIDInHandlerContext(t *testing.T) {
	p, pipes := newStdioPeer(t, legacyHandshake)
	got := make(chan wire.ID, 1)
	handler := func(ctx context.Context, method string, _ json.RawMessage) (json.RawMessage, *wire.Error) {
		id, ok := client.ServerRequestID(ctx)
		if !ok {
			t.Error("no server request ID in the handler's ctx")
		}
		got <- id
		return json.RawMessage(`{"action":"decline"}`), nil
	}
	connectClient(t, client.Config{Pipes: pipes, ServerRequests: handler})
	p.send(`{"jsonrpc":"2.0","id":"srv-7","method":"elicitation/create","params":{"message":"?"}}`)
	select {
	case id := <-got:
		if id != wire.StringID("srv-7") {
			t.Errorf("ID %s, want srv-7", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was never called")
	}
	if _, ok := client.ServerRequestID(context.Background()); ok {
		t.Error("an ID in a ctx that has none")
	}
}
