package client_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/hostile"
	"inflight/session"
	"inflight/wire"
)

// TestServerRequestFloodBoundedStdio (issue 14, item 5): a legacy server
// that floods ping and stops reading its stdin. Before, each ping got a
// goroutine of its own, with no limit (300 000 pings took 740 MB); now a
// small pool answers them in order, and past a bound they are refused with
// a JSON-RPC error and reported as event.ServerRequestRefused, for the
// session to flag.
func TestServerRequestFloodBoundedStdio(t *testing.T) {
	sv := hostile.Serve(hostile.PingFlood)
	defer sv.Stop()
	before := runtime.NumGoroutine()
	c, rec, _ := connectClient(t, client.Config{Pipes: &client.Pipes{Stdin: sv.Stdin, Stdout: sv.Stdout},
		ProtocolVersion: wire.Version20251125, WriteTimeout: 10 * time.Second})
	send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
	isPing := func(ev event.Event) bool { return ev.Kind == event.Received && ev.Msg.Method == wire.MethodPing }
	deadline := time.Now().Add(waitLimit)
	for rec.count(isPing) < 1000 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d pings read", rec.count(isPing))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine() - before; n > 100 {
		t.Errorf("%d more goroutines while %d pings wait for an answer: one per request", n, rec.count(isPing))
	}
	ev := rec.wait(t, "a refused request", kind(event.ServerRequestRefused))
	if ev.Msg.Method != wire.MethodPing || !strings.HasPrefix(ev.RequestID.Raw(), `"flood-`) || !strings.Contains(ev.Text, "refused") {
		t.Errorf("refusal %+v", ev)
	}
	tr := session.NewTracker(session.Config{})
	(&feeder{tr: tr, rec: rec}).feed()
	if tr.Violations().Count(session.ViolationServerRequestFlood) == 0 {
		t.Errorf("the tracker flagged no %s: %v", session.ViolationServerRequestFlood, tr.Violations().Counts())
	}
}

// TestServerRequestFloodHTTPReusesConnections (issue 14, item 5): on
// legacy HTTP every answer to a server's request is a POST of its own.
// Before, 3 000 pings were answered by 3 000 concurrent POSTs, each on a
// new connection; now a small pool answers them, every response body is
// drained so its connection goes back to the pool, and every ping gets an
// answer or a refusal.
func TestServerRequestFloodHTTPReusesConnections(t *testing.T) {
	const n = 2000
	peer := hostile.PingFloodHTTP(n)
	ts := hostile.NewServer(peer, false)
	defer ts.Close()
	c, rec, _ := connectClient(t, client.Config{URL: ts.URL, ProtocolVersion: wire.Version20251125})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
	rec.wait(t, "the tool's result", responseTo(id))
	deadline := time.Now().Add(waitLimit)
	for peer.Answers() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the peer got %d answers to its %d pings", peer.Answers(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := peer.Conns(); got > 16 {
		t.Errorf("%d connections for %d answers: they are not reused", got, n)
	}
	t.Logf("%d answers over %d connections, %d refused", peer.Answers(), peer.Conns(), rec.count(kind(event.ServerRequestRefused)))
}
