package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// failFirstAnswer is a legacy server's front that refuses the first
// response the client POSTs (as an unreachable or failing server would)
// and passes everything else.
type failFirstAnswer struct {
	next   http.Handler
	mu     sync.Mutex
	failed bool
}

func (f *failFirstAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if m, err := wire.Decode(body); err == nil && r.Method == http.MethodPost && m.IsResponse() {
		f.mu.Lock()
		first := !f.failed
		f.failed = true
		f.mu.Unlock()
		if first {
			http.Error(w, "down for a moment", http.StatusServiceUnavailable)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// TestServerAnswerRetriedAfterAFailedPost: the POST of the answer to the
// server's question fails; the client reports it (an internal
// RequestFailed under the server's ID) and asks the handler's
// OnAnswerFailed for another answer, which it sends.
func TestServerAnswerRetriedAfterAFailedPost(t *testing.T) {
	f := newLegacyFake(t)
	f.call = func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		sseWrite(w, "data: "+string(wire.Request(wire.StringID("q1"), wire.MethodElicitationCreate, json.RawMessage(`{"message":"?"}`)))+"\n\n")
		<-r.Context().Done()
	}
	srv := httptest.NewServer(&failFirstAnswer{next: f})
	t.Cleanup(srv.Close)
	failures := make(chan error, 2)
	handler := func(ctx context.Context, method string, _ json.RawMessage) (json.RawMessage, *wire.Error) {
		client.OnAnswerFailed(ctx, func(err error) (json.RawMessage, *wire.Error, bool) {
			select {
			case failures <- err:
			default:
				t.Errorf("asked for another try again: %v", err)
				return nil, nil, false
			}
			return json.RawMessage(`{"action":"accept","content":{"try":2}}`), nil, true
		})
		return json.RawMessage(`{"action":"accept","content":{"try":1}}`), nil
	}
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125, ServerRequests: handler})
	send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	select {
	case err := <-failures:
		if err == nil {
			t.Error("OnAnswerFailed without the error")
		}
	case <-time.After(waitLimit):
		t.Fatal("the failed answer was never reported to the handler")
	}
	rec.wait(t, "the failure as an internal RequestFailed", func(ev event.Event) bool {
		return ev.Kind == event.RequestFailed && ev.Internal && ev.RequestID == wire.StringID("q1")
	})
	got := f.waitPost(t, "the second answer", func(m wire.Message) bool { return m.IsResponse() && m.ID == wire.StringID("q1") })
	if !strings.Contains(string(got.Result), `"try":2`) {
		t.Errorf("the server got %s, want the second answer", got.Result)
	}
}

// TestServerWithdrawnIDUsedAgainIsAnswered: the server withdraws its
// request 7 and at once sends another under ID 7 (both in one write); the
// first handler returns on ctx.Done, as ui.Questions.Serve does. Its end
// must not take the second's entry in serverCalls with it: the second is
// answered.
func TestServerWithdrawnIDUsedAgainIsAnswered(t *testing.T) {
	firstSeen := make(chan struct{})
	handler := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
		if strings.Contains(string(params), "first") {
			close(firstSeen)
			<-ctx.Done()
			return nil, &wire.Error{Code: wire.CodeInternalError, Message: "withdrawn"}
		}
		time.Sleep(20 * time.Millisecond) // a person answering
		return json.RawMessage(`{"action":"accept","content":{"second":true}}`), nil
	}
	_, _, p := legacyPeer(t, client.Config{ServerRequests: handler})
	p.send(`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"first"}}`)
	<-firstSeen
	p.sendRaw([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"gave up"}}` + "\n" +
		`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"second"}}` + "\n"))
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		for _, l := range p.all() {
			if strings.Contains(l, `"second":true`) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the second question under ID 7 was never answered")
}

// TestServerCloseCancelsARequestUnderAWithdrawnID: after the same
// sequence (a withdrawal, then the ID used again), Close cancels the
// second handler's ctx rather than waiting for it (the TUI's Serve waits
// up to its 5-minute bound).
func TestServerCloseCancelsARequestUnderAWithdrawnID(t *testing.T) {
	firstSeen := make(chan struct{})
	secondSeen := make(chan struct{})
	handler := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
		if strings.Contains(string(params), "first") {
			close(firstSeen)
			<-ctx.Done()
			return nil, &wire.Error{Code: wire.CodeInternalError, Message: "withdrawn"}
		}
		close(secondSeen)
		select { // as ui.Questions.Serve: the user, ctx, or the bound
		case <-ctx.Done():
		case <-time.After(3 * time.Second):
		}
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "withdrawn"}
	}
	c, _, p := legacyPeer(t, client.Config{ServerRequests: handler})
	p.send(`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"first"}}`)
	<-firstSeen
	p.sendRaw([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}` + "\n" +
		`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"second"}}` + "\n"))
	<-secondSeen
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v: the second handler's ctx was never cancelled", d)
	}
}

// TestServerRequestAtIsItsReceivedTime: the handler's ctx says when the
// request was read, the Time of its Received event (the tracker's
// ServerRequest.At), so that the TUI ties a question to its own record
// and not to another the server sent under the same ID.
func TestServerRequestAtIsItsReceivedTime(t *testing.T) {
	ats := make(chan time.Time, 1)
	handler := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
		at, ok := client.ServerRequestAt(ctx)
		if !ok {
			t.Error("no read time in the handler's ctx")
		}
		ats <- at
		return json.RawMessage(`{"action":"decline"}`), nil
	}
	_, rec, p := legacyPeer(t, client.Config{ServerRequests: handler})
	from := rec.len()
	p.send(`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"when?"}}`)
	at := <-ats
	ev := rec.waitFrom(t, from, "the request's Received", func(ev event.Event) bool {
		return ev.Kind == event.Received && ev.Msg.Method == wire.MethodElicitationCreate
	})
	if at.IsZero() || !at.Equal(ev.Time) {
		t.Errorf("handler's read time %v, Received at %v", at, ev.Time)
	}
}
