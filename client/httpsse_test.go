package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/demo"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// demoSSE serves the demo (Streamable HTTP at /mcp, HTTP+SSE at /sse) and
// returns the base URL.
func demoSSE(t testing.TB) (string, *httpLog) {
	t.Helper()
	d := demo.New(demo.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", d.HTTPHandler())
	mux.Handle("/sse", d.SSEHandler())
	srv, log := serveHTTP(t, mux)
	t.Cleanup(func() { d.Close() })
	return srv.URL, log
}

// posted returns the JSON-RPC messages the server received by POST.
func posted(log *httpLog) []wire.Message {
	var out []wire.Message
	for _, r := range log.all() {
		if r.Method != http.MethodPost {
			continue
		}
		if m, err := wire.Decode(r.Body); err == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestSSEDemoConnectAndCall(t *testing.T) {
	base, log := demoSSE(t)
	c, rec, info := connectClient(t, client.Config{URL: base + "/sse", SSE: true, RoundTrips: 2})
	if info.Transport != event.TransportSSE || info.Era != event.EraLegacy || info.ProtocolVersion != wire.Version20241105 {
		t.Fatalf("connected %s %s %s, want sse legacy 2024-11-05", info.Transport, info.Era, info.ProtocolVersion)
	}
	if info.ServerName != "inflight-demo" {
		t.Errorf("server name %q", info.ServerName)
	}
	rec.wait(t, "Connected", kind(event.Connected))
	if n := rec.count(kind(event.RoundTrip)); n != 2 {
		t.Errorf("%d round trips timed, want 2", n)
	}
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("slow", map[string]any{"seconds": 0.2, "steps": 3}))
	resp := rec.wait(t, "the response", responseTo(id))
	if resp.Msg.Kind != wire.KindResult || resp.Time.IsZero() {
		t.Fatalf("response %s at %v", resp.Raw, resp.Time)
	}
	if n := rec.count(progressFor(id)); n != 3 {
		t.Errorf("%d progress notifications, want 3", n)
	}
	// Every message was POSTed to the endpoint the stream named, never to
	// the stream's URL, and the one GET was the stream.
	for _, r := range log.all() {
		switch r.Method {
		case http.MethodPost:
			if !strings.Contains(r.URL, "sessionid=") {
				t.Errorf("POST to %s, not the endpoint", r.URL)
			}
		case http.MethodGet:
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
		}
	}
}

// TestSSECancelStubborn: the cancel is notifications/cancelled POSTed to the
// endpoint; stubborn's progress and answer after it come on the shared
// stream, carry their read times, and the tracker flags them late.
func TestSSECancelStubborn(t *testing.T) {
	base, log := demoSSE(t)
	c, rec, _ := connectClient(t, client.Config{URL: base + "/sse", SSE: true, RoundTrips: 3})
	tr := session.NewTracker(session.Config{LateWindow: 3 * time.Second})
	fd := &feeder{tr: tr, rec: rec}
	fd.feed()
	params := toolCall("stubborn", map[string]any{"seconds": 0.6, "steps": 6})
	r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id := send(t, c, 1, wire.MethodToolsCall, params)
	if r.ID != id {
		t.Fatalf("tracker ID %s, client ID %s", r.ID, id)
	}
	rec.wait(t, "first progress", progressFor(id))
	fd.feed()
	if _, err := tr.RequestCancel(id, "test", session.CauseUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	sig, err := c.Cancel(id, "test")
	if err != nil || sig != event.SignalNotification {
		t.Fatalf("Cancel = %s, %v; want notifications/cancelled", sig, err)
	}
	log.wait(t, "the POSTed cancel", func(r *httpRecord) bool {
		return r.Method == http.MethodPost && r.rpcMethod() == wire.NotifyCancelled && strings.Contains(r.URL, "sessionid=")
	})
	resp := rec.wait(t, "the late response", responseTo(id))
	fd.feed()
	got, _ := tr.Get(id)
	if !got.Late.Response || got.Late.Crossed {
		t.Errorf("late response not flagged: %+v", got.Late)
	}
	if got.Late.ProgressAfterCancel == 0 {
		t.Errorf("no late progress counted: %+v", got.Late)
	}
	if resp.Time.IsZero() {
		t.Error("the late response carries no read time")
	}
	var cp wire.Message
	for _, m := range posted(log) {
		if m.Method == wire.NotifyCancelled {
			cp = m
		}
	}
	p, err := wire.DecodeCancelled(cp.Params)
	if err != nil || p.RequestID != id {
		t.Errorf("cancel params %s: %v", cp.Params, err)
	}
}

// TestSSEStreamDropped: a server whose stream ends takes every request in
// flight with it.
func TestSSEStreamDropped(t *testing.T) {
	drop := make(chan struct{})
	var srv *httptest.Server
	srv = httptest.NewServer(fakeSSE(t, func(w http.ResponseWriter, m wire.Message, stream func(string)) {
		switch m.Method {
		case wire.MethodInitialize:
			stream(string(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`))))
		case wire.MethodToolsCall:
			close(drop)
		}
	}, drop))
	t.Cleanup(srv.Close)
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL + "/sse", SSE: true})
	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}
	params := toolCall("x", nil)
	tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id := send(t, c, 1, wire.MethodToolsCall, params)
	closed := rec.wait(t, "the transport closed", kind(event.TransportClosed))
	if closed.Err == nil || !strings.Contains(closed.Err.Error(), "requests in flight are lost") {
		t.Errorf("closed with %v", closed.Err)
	}
	fd.feed()
	if got, _ := tr.Get(id); got.State != session.StateConnectionLost {
		t.Errorf("request %s, want connection_lost", got.State)
	}
	if err := c.Send(context.Background(), client.Request{ID: wire.IntID(2), Method: wire.MethodPing}); err == nil {
		t.Error("Send after the stream ended succeeded")
	}
}

// TestSSEEndpointOtherOrigin: an endpoint event naming another host (or
// scheme, or port) is refused; nothing is POSTed there.
func TestSSEEndpointOtherOrigin(t *testing.T) {
	for _, ep := range []string{"http://evil.example/messages", "//evil.example/x", "https://127.0.0.1/x"} {
		t.Run(ep, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet {
					t.Errorf("%s %s: nothing may be sent after a refused endpoint", r.Method, r.URL)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", ep)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			t.Cleanup(srv.Close)
			c, _ := newClient(t, client.Config{URL: srv.URL + "/sse", SSE: true})
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			_, err := c.Connect(ctx)
			if err == nil || !strings.Contains(err.Error(), "another origin") {
				t.Fatalf("Connect = %v, want the other origin refused", err)
			}
		})
	}
}

// TestSSEDetected: a Streamable HTTP URL whose POST is refused (the
// go-sdk's SSE handler answers 400 without a session) but whose GET opens
// an HTTP+SSE stream is spoken to over HTTP+SSE, as the backwards-
// compatibility steps say.
func TestSSEDetected(t *testing.T) {
	base, log := demoSSE(t)
	c, rec, info := connectClient(t, client.Config{URL: base + "/sse"})
	if info.Transport != event.TransportSSE || info.ProtocolVersion != wire.Version20241105 {
		t.Fatalf("connected over %s %s, want sse 2024-11-05\n%s", info.Transport, info.ProtocolVersion, rec.dump())
	}
	connected := rec.wait(t, "Connected", kind(event.Connected))
	if connected.Info.Transport != event.TransportSSE {
		t.Errorf("Connected says %s", connected.Info.Transport)
	}
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("slow", map[string]any{"seconds": 0.05, "steps": 1}))
	rec.wait(t, "the response", responseTo(id))
	// The Streamable HTTP attempts came first, to the URL itself.
	first := log.all()[0]
	if first.Method != http.MethodPost || strings.Contains(first.URL, "sessionid") {
		t.Errorf("first request %s %s", first.Method, first.URL)
	}

	t.Run("not sse either", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}))
		t.Cleanup(srv.Close)
		c, _ := newClient(t, client.Config{URL: srv.URL})
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_, err := c.Connect(ctx)
		if err == nil || !strings.Contains(err.Error(), "405") || !strings.Contains(err.Error(), "nor is it an HTTP+SSE server") {
			t.Fatalf("Connect = %v", err)
		}
	})
	t.Run("no fallback", func(t *testing.T) {
		c, _ := newClient(t, client.Config{URL: base + "/sse", NoSSEFallback: true})
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if _, err := c.Connect(ctx); err == nil {
			t.Fatal("connected with the fallback turned off")
		}
	})
}

// TestSSEBoundedEvent: an event past MaxMessageBytes ends the stream, and
// with it the connection, with a reason.
func TestSSEBoundedEvent(t *testing.T) {
	srv := httptest.NewServer(fakeSSE(t, func(w http.ResponseWriter, m wire.Message, stream func(string)) {
		switch m.Method {
		case wire.MethodInitialize:
			stream(string(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`))))
		case wire.MethodToolsCall:
			stream(strings.Repeat("x", 64<<10))
		}
	}, nil))
	t.Cleanup(srv.Close)
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL + "/sse", SSE: true, MaxMessageBytes: 16 << 10})
	send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	closed := rec.wait(t, "the transport closed", kind(event.TransportClosed))
	if closed.Err == nil || !strings.Contains(closed.Err.Error(), "message limit") {
		t.Errorf("closed with %v", closed.Err)
	}
}

func TestSSEModernRefused(t *testing.T) {
	_, err := client.New(client.Config{URL: "http://127.0.0.1:1/sse", SSE: true, ProtocolVersion: wire.VersionModern})
	if err == nil || !strings.Contains(err.Error(), "no HTTP+SSE binding") {
		t.Fatalf("New = %v", err)
	}
	if _, err := client.New(client.Config{URL: "http://127.0.0.1:1/mcp", ProtocolVersion: wire.Version20241105}); err == nil {
		t.Fatal("2024-11-05 accepted on Streamable HTTP")
	}
}

// TestSSESecretsRedacted: a failing GET names the URL without its
// credentials or query.
func TestSSESecretsRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	u := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/sse?token=s3cret"
	c, _ := newClient(t, client.Config{URL: u, SSE: true})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := c.Connect(ctx)
	if err == nil {
		t.Fatal("connected")
	}
	if s := err.Error(); strings.Contains(s, "hunter2") || strings.Contains(s, "s3cret") || !strings.Contains(s, "404") {
		t.Errorf("error %q", s)
	}
}

// fakeSSE is a minimal HTTP+SSE server: GET /sse opens the stream (endpoint
// /messages), POST /messages hands each request to answer, which may write
// messages to the stream. drop, when closed, ends the stream.
func fakeSSE(t *testing.T, answer func(w http.ResponseWriter, m wire.Message, stream func(string)), drop chan struct{}) http.Handler {
	h, _ := fakeSSEPush(t, answer, drop)
	return h
}

// fakeSSEPush is fakeSSE that also returns how to write a message to the
// stream.
func fakeSSEPush(t *testing.T, answer func(w http.ResponseWriter, m wire.Message, stream func(string)), drop chan struct{}) (http.Handler, func(string)) {
	msgs := make(chan string, 16)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": hello\n\nevent: endpoint\ndata: /messages?s=1\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case m := <-msgs:
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
					w.(http.Flusher).Flush()
				case <-drop:
					return
				case <-r.Context().Done():
					return
				}
			}
		case r.Method == http.MethodPost && r.URL.Path == "/messages":
			body, _ := io.ReadAll(r.Body)
			m, err := wire.Decode(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if m.Method == "test/refuse" {
				http.Error(w, "refused by the fake", http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusAccepted)
			if m.Method == wire.MethodPing {
				msgs <- string(wire.ResultResponse(m.ID, json.RawMessage(`{}`)))
				return
			}
			answer(w, m, func(s string) { msgs <- s })
		default:
			http.Error(w, "not here", http.StatusNotFound)
		}
	}), func(m string) { msgs <- m }
}

// TestSSEServerRequestsAndRaw: a server's own request (ping) on the stream
// is answered by a POST to the endpoint; SendRaw POSTs there too and
// returns the status; a request whose POST is refused fails Send with the
// status; Close with a request in flight reports the connection closed.
func TestSSEServerRequestsAndRaw(t *testing.T) {
	answers := make(chan wire.Message, 4)
	h, push := fakeSSEPush(t, func(w http.ResponseWriter, m wire.Message, stream func(string)) {
		switch {
		case m.Method == wire.MethodInitialize:
			stream(string(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`))))
		case m.IsResponse():
			answers <- m
		}
	}, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, rec, info := connectClient(t, client.Config{URL: srv.URL + "/sse", SSE: true})
	if info.ProtocolVersion != wire.Version20250618 {
		t.Errorf("version %s: the server's choice among those inflight speaks is taken", info.ProtocolVersion)
	}
	push(string(wire.Request(wire.StringID("srv-1"), wire.MethodPing, nil)))
	select {
	case m := <-answers:
		if m.ID != wire.StringID("srv-1") || m.Kind != wire.KindResult {
			t.Errorf("answer %+v", m)
		}
	case <-time.After(waitLimit):
		t.Fatal("the server's ping was never answered")
	}
	status, err := c.SendRaw(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`))
	if err != nil || status != http.StatusAccepted {
		t.Errorf("SendRaw = %d, %v", status, err)
	}
	status, err = c.SendRaw(context.Background(), []byte(`not json`))
	if err != nil || status != http.StatusBadRequest {
		t.Errorf("SendRaw of a malformed message = %d, %v; want the server's 400 as the answer", status, err)
	}
	err = c.Send(context.Background(), client.Request{ID: wire.IntID(7), Method: "test/refuse"})
	var se *client.HTTPStatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest || !strings.Contains(err.Error(), "refused by the fake") {
		t.Errorf("Send of a refused request = %v", err)
	}

	id := send(t, c, 1, wire.MethodToolsCall, toolCall("hang", nil))
	c.Close()
	closed := rec.wait(t, "the transport closed", kind(event.TransportClosed))
	if closed.Err != nil {
		t.Errorf("Close reported %v", closed.Err)
	}
	if n := rec.count(failed(id)); n != 0 {
		t.Errorf("the request in flight failed on its own (%d); it is lost with the connection", n)
	}
}

// TestSSENoEndpoint: a stream that never names its endpoint holds Connect
// only as long as the handshake timeout, or until Close.
func TestSSENoEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": waiting\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, client.Config{URL: srv.URL, SSE: true, HandshakeTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := c.Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no endpoint event on the stream within the 200ms allowed for connecting") || time.Since(start) > 2*time.Second {
		t.Fatalf("Connect = %v after %s", err, time.Since(start))
	}

	c2, _ := newClient(t, client.Config{URL: srv.URL, SSE: true})
	done := make(chan error, 1)
	go func() {
		_, err := c2.Connect(context.Background())
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	c2.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Connect succeeded")
		}
	case <-time.After(waitLimit):
		t.Fatal("Close did not end a Connect waiting for the endpoint")
	}
}
