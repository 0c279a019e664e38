package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// TestServerPingNotHeldByQuestions: four of the server's questions
// waiting for the user at once (the TUI's handler blocks until a person
// answers) do not hold the server's ping behind them (review of issue 12:
// the four workers were all taken, and the ping waited on the user).
func TestServerPingNotHeldByQuestions(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	asked := make(chan string, 8)
	handler := func(ctx context.Context, method string, _ json.RawMessage) (json.RawMessage, *wire.Error) {
		id, _ := client.ServerRequestID(ctx)
		asked <- id.String()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return json.RawMessage(`{"action":"decline"}`), nil
	}
	_, _, p := legacyPeer(t, client.Config{ServerRequests: handler})
	for i := 1; i <= 6; i++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"q%d","method":"elicitation/create","params":{"message":"?"}}`, i))
	}
	// Every question reaches the handler, not only the first four.
	for i := 0; i < 6; i++ {
		select {
		case <-asked:
		case <-time.After(waitLimit):
			t.Fatalf("only %d of 6 questions reached the handler", i)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":"pong","method":"ping"}`)
	pong, err := wire.Decode([]byte(p.wait(t, `"id":"pong"`)))
	if err != nil || pong.Kind != wire.KindResult {
		t.Fatalf("ping answer %+v, %v", pong, err)
	}
	for _, l := range p.all() {
		if strings.Contains(l, `"id":"q`) {
			t.Errorf("a question was answered before the user did: %s", l)
		}
	}
}

// TestServerReusedOpenID: a server that sends a second request under the
// ID of its own request still waiting gets no answer for it (an answer
// under that ID would be read as the first one's); the first is answered
// once, with its own answer.
func TestServerReusedOpenID(t *testing.T) {
	release := make(chan struct{})
	calls := make(chan string, 4)
	handler := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
		calls <- string(params)
		<-release
		return json.RawMessage(`{"action":"accept","content":{"first":true}}`), nil
	}
	_, rec, p := legacyPeer(t, client.Config{ServerRequests: handler})
	p.send(`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"first"}}`)
	<-calls
	from := rec.len()
	p.send(`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"second"}}`)
	rec.waitFrom(t, from, "the note on the reused ID", func(ev event.Event) bool {
		return ev.Kind == event.Note && strings.Contains(ev.Text, "not answered, so that the two are not mixed")
	})
	select {
	case got := <-calls:
		t.Fatalf("the reused ID reached the handler: %s", got)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	p.wait(t, `"first":true`)
	quietly(100 * time.Millisecond)
	n := 0
	for _, l := range p.all() {
		if strings.Contains(l, `"id":7`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d answers under ID 7, want 1: %q", n, p.all())
	}
}
