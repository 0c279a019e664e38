package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/demo"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// subscriptions/listen end to end: the demo's demo://clock changes every
// tick, so a listen on it receives notifications/resources/updated until
// the server ends it (end_subscriptions) or the client cancels it.

// clockTick is how often the demo clock changes in these tests: fast
// enough that a few updates arrive in well under a second.
const clockTick = 50 * time.Millisecond

// listenParams asks for updates of the demo clock.
var listenParams = json.RawMessage(`{"notifications":{"resourceSubscriptions":["demo://clock"]}}`)

// demoLog collects the demo server's log lines, so a test can await what the
// server decided (for instance that it sent no response to a cancelled
// listen) instead of sleeping.
type demoLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newDemoLog() *demoLog { return &demoLog{changed: make(chan struct{})} }

func (l *demoLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

// wait returns the first log line matching the regular expression.
func (l *demoLog) wait(t testing.TB, expr string) string {
	t.Helper()
	re := regexp.MustCompile(expr)
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for _, line := range strings.Split(l.buf.String(), "\n") {
			if re.MatchString(line) {
				l.mu.Unlock()
				return line
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("the demo never logged %q; it logged:\n%s", expr, l.buf.String())
		}
	}
}

// clockDemo starts a demo whose clock ticks every clockTick, logging to log.
// Its Close runs at cleanup, after the test's own cleanups registered later.
func clockDemo(t testing.TB, log io.Writer) *demo.Server {
	t.Helper()
	d := demo.New(demo.Options{TickInterval: clockTick, Logger: log})
	t.Cleanup(func() { d.Close() })
	return d
}

// clockStdio serves a clock demo over io.Pipes, with a tap on what the
// client writes.
func clockStdio(t testing.TB, log io.Writer) (*client.Pipes, *lineTap) {
	t.Helper()
	d := demo.New(demo.Options{TickInterval: clockTick, Logger: log})
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	lt := tap(serverIn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.ServeStdio(ctx, lt, serverOut)
	}()
	t.Cleanup(func() {
		cancel()
		d.Close()
		<-done
		fromServer.Close()
		<-lt.done
	})
	return &client.Pipes{Stdin: toServer, Stdout: fromServer}, lt
}

// onSubscription matches a notification of the given method carrying
// subscription id in its _meta.
func onSubscription(method string, id wire.ID) func(event.Event) bool {
	return func(ev event.Event) bool {
		if ev.Kind != event.Received || ev.Msg.Kind != wire.KindNotification || ev.Msg.Method != method {
			return false
		}
		sid, ok := wire.SubscriptionID(ev.Msg.Params)
		return ok && sid == id
	}
}

// listenRun drives one connection's listens through a tracker.
type listenRun struct {
	t   *testing.T
	c   *client.Client
	rec *recorder
	tr  *session.Tracker
	fd  *feeder
}

func newListenRun(t *testing.T, c *client.Client, rec *recorder) *listenRun {
	tr := session.NewTracker(session.Config{LateWindow: time.Second})
	return &listenRun{t: t, c: c, rec: rec, tr: tr, fd: &feeder{tr: tr, rec: rec}}
}

// begin starts a tracked request, as the UI would: tracker first, then the
// client with the tracker's ID.
func (lr *listenRun) begin(method string, params json.RawMessage) wire.ID {
	lr.t.Helper()
	r := lr.tr.Begin(method, params, session.RequestOptions{}, time.Now())
	if err := lr.c.Send(context.Background(), client.Request{ID: r.ID, Method: method, Params: params, ProgressToken: r.ProgressToken}); err != nil {
		lr.t.Fatalf("Send %s: %v", method, err)
	}
	return r.ID
}

// get returns the tracker's request after applying every event so far.
func (lr *listenRun) get(id wire.ID) *session.Request {
	lr.t.Helper()
	lr.fd.feed()
	r, ok := lr.tr.Get(id)
	if !ok {
		lr.t.Fatalf("the tracker has no request %s", id)
	}
	return r
}

// open starts a listen on the clock and waits for its acknowledgement and
// two updates: pending until the ack, listening after it, counting.
func (lr *listenRun) open() wire.ID {
	lr.t.Helper()
	id := lr.begin(wire.MethodSubscriptionsListen, listenParams)
	isAck := onSubscription(wire.NotifySubscriptionAck, id)
	ack := lr.rec.wait(lr.t, "the acknowledgement", isAck)
	if !strings.Contains(string(ack.Msg.Params), "demo://clock") {
		lr.t.Errorf("acknowledgement %s does not grant the clock", ack.Raw)
	}
	// Apply the events one by one up to the ack: pending before it,
	// listening from it on.
	evs := lr.rec.all()
	for ; lr.fd.next < len(evs); lr.fd.next++ {
		ev := evs[lr.fd.next]
		if isAck(ev) {
			if r, _ := lr.tr.Get(id); r.State != session.StatePending {
				lr.t.Errorf("listen %s is %s before its acknowledgement, want pending", id, r.State)
			}
		}
		lr.tr.Apply(ev)
		if isAck(ev) {
			lr.fd.next++
			break
		}
	}
	r, _ := lr.tr.Get(id)
	if r.State != session.StateListening || !r.Acked {
		lr.t.Fatalf("listen %s is %s (acked %t) after its acknowledgement, want listening", id, r.State, r.Acked)
	}
	for n := 0; n < 2; n++ {
		ev := lr.rec.waitFrom(lr.t, lr.rec.len(), "a clock update", onSubscription(wire.NotifyResourceUpdated, id))
		if !strings.Contains(string(ev.Msg.Params), `"uri":"demo://clock"`) {
			lr.t.Errorf("update %s names another resource", ev.Raw)
		}
	}
	updates := lr.rec.count(onSubscription(wire.NotifyResourceUpdated, id))
	if r := lr.get(id); r.Notifications != updates || r.Notifications < 2 || r.State != session.StateListening {
		lr.t.Errorf("listen %s: %s with %d notifications counted, want listening with the %d updates received",
			id, r.State, r.Notifications, updates)
	}
	return id
}

// endByServer calls end_subscriptions and checks the listen ends
// ended_by_server on its complete result.
func (lr *listenRun) endByServer(id wire.ID) {
	lr.t.Helper()
	tool := lr.begin(wire.MethodToolsCall, toolCall("end_subscriptions", map[string]any{}))
	res := lr.rec.wait(lr.t, "the listen's final result", responseTo(id))
	if rt, _ := wire.ResultType(res.Msg.Result); res.Msg.Kind != wire.KindResult || rt != wire.ResultComplete {
		lr.t.Errorf("the listen ended with %s, want a complete result", res.Raw)
	}
	if sid, ok := wire.SubscriptionID(res.Msg.Result); !ok || sid != id {
		lr.t.Errorf("the final result %s does not carry subscription %s", res.Raw, id)
	}
	lr.rec.wait(lr.t, "the end_subscriptions result", responseTo(tool))
	if r := lr.get(id); r.State != session.StateEndedByServer {
		lr.t.Errorf("listen %s is %s after the server ended it, want ended_by_server", id, r.State)
	}
	if r := lr.get(tool); r.State != session.StateCompleted {
		lr.t.Errorf("end_subscriptions is %s, want completed", r.State)
	}
}

// cancel cancels the listen from the client, expecting sig.
func (lr *listenRun) cancel(id wire.ID, sig event.CancelSignal) {
	lr.t.Helper()
	lr.fd.feed()
	if _, err := lr.tr.RequestCancel(id, "user", session.CauseUser, time.Now()); err != nil {
		lr.t.Fatalf("the tracker refused to cancel the listen: %v", err)
	}
	got, err := lr.c.Cancel(id, "user")
	if err != nil || got != sig {
		lr.t.Fatalf("Cancel(listen) = %s, %v; want %s", got, err, sig)
	}
	lr.rec.wait(lr.t, "the cancel sent", func(ev event.Event) bool {
		return ev.Kind == event.CancelSent && ev.RequestID == id && ev.Signal == sig
	})
}

// noViolations fails on any protocol violation the tracker recorded.
func (lr *listenRun) noViolations() {
	lr.t.Helper()
	lr.fd.feed()
	if v := lr.tr.Violations(); v.Total() != 0 {
		lr.t.Errorf("violations %v, want none", v.Counts())
	}
}

func TestListenStdioDemo(t *testing.T) {
	log := newDemoLog()
	pipes, lt := clockStdio(t, log)
	c, rec, info := connectClient(t, client.Config{Pipes: pipes})
	if info.Era != event.EraModern {
		t.Fatalf("era %s, want modern", info.Era)
	}
	lr := newListenRun(t, c, rec)

	// The server ends the listen.
	id := lr.open()
	if line := lt.wait(t, `"subscriptions/listen"`); !strings.Contains(line, `"resourceSubscriptions":["demo://clock"]`) ||
		!strings.Contains(line, wire.MetaProtocolVersion) {
		t.Errorf("listen request on the wire: %s", line)
	}
	lr.endByServer(id)

	// The client cancels the next one: notifications/cancelled naming it,
	// and the demo sends no response.
	id = lr.open()
	lr.cancel(id, event.SignalNotification)
	line := lt.wait(t, wire.NotifyCancelled)
	if m, err := wire.Decode([]byte(line)); err != nil {
		t.Fatalf("cancel line %s: %v", line, err)
	} else if cp, err := wire.DecodeCancelled(m.Params); err != nil || cp.RequestID != id {
		t.Errorf("cancel %s names %s, want the listen %s", line, cp.RequestID, id)
	}
	log.wait(t, `listen #\d+: cancelled by the client .*no response sent`)
	// A barrier: the demo answers in order on the one pipe, so once this
	// answer is in, whatever it wrote for the listen is in too.
	barrier := lr.begin(wire.MethodToolsList, nil)
	lr.rec.wait(t, "the barrier's answer", responseTo(barrier))
	if n := rec.count(responseTo(id)); n != 0 {
		t.Errorf("the demo answered the cancelled listen %d time(s)", n)
	}
	if r := lr.get(id); r.State != session.StateCancelRequested || r.Cancel.Signal != event.SignalNotification {
		t.Fatalf("listen %s is %s (cancel %+v), want cancel_requested by notifications/cancelled", id, r.State, r.Cancel)
	}
	// Nothing came: the tracker settles it when the late window is over.
	lr.tr.Due(lr.get(id).Cancel.SettleBy)
	if r := lr.get(id); r.State != session.StateCancelled {
		t.Errorf("listen %s is %s after the late window, want cancelled", id, r.State)
	}
	lr.noViolations()
}

func TestListenHTTPDemo(t *testing.T) {
	log := newDemoLog()
	d := clockDemo(t, log)
	srv, hl := serveHTTP(t, d.HTTPHandler())
	c, rec, info := connectClient(t, client.Config{URL: srv.URL})
	if info.Era != event.EraModern {
		t.Fatalf("era %s, want modern", info.Era)
	}
	lr := newListenRun(t, c, rec)

	id := lr.open()
	post := hl.wait(t, "the listen POST", isCall(id))
	if post.Header.Get("Mcp-Method") != wire.MethodSubscriptionsListen {
		t.Errorf("listen POST Mcp-Method %q", post.Header.Get("Mcp-Method"))
	}
	lr.endByServer(id)
	lr.rec.wait(t, "the listen's stream closed", streamClosed(id))
	if n := rec.count(failed(id)); n != 0 {
		t.Errorf("a listen the server ended was reported failed")
	}

	// The client cancels: its stream closes, nothing is POSTed, and the
	// demo sees the cancel and sends nothing.
	id = lr.open()
	call := hl.wait(t, "the second listen POST", isCall(id))
	before := len(hl.all())
	lr.cancel(id, event.SignalStreamClosed)
	closed := lr.rec.wait(t, "the listen's stream closed by the client", streamClosed(id))
	if !closed.ByClient {
		t.Errorf("stream closed %s, want by the client", describeEvent(closed))
	}
	select {
	case <-call.ended:
	case <-time.After(waitLimit):
		t.Fatal("the demo never saw the listen's stream close")
	}
	log.wait(t, `listen #\d+: cancelled by the client .*no response sent`)
	if after := len(hl.all()); after != before {
		t.Errorf("cancelling a modern HTTP listen POSTed something:\n%s", hl.dump())
	}
	if r := lr.get(id); r.State != session.StateCancelled || r.Cancel.Signal != event.SignalStreamClosed {
		t.Errorf("listen %s is %s (cancel %+v), want cancelled by stream_closed", id, r.State, r.Cancel)
	}
	if n := rec.count(responseTo(id)); n != 0 {
		t.Errorf("a response arrived for the cancelled listen")
	}
	lr.noViolations()
}

// modernHandshake answers server/discover like a modern server.
func modernHandshake(p *stdioPeer, m wire.Message) {
	if m.Method == wire.MethodDiscover {
		p.send(string(wire.ResultResponse(m.ID, json.RawMessage(discoverResult))))
	}
}

// subNotification is a notification on subscription id.
func subNotification(method string, id wire.ID, extra string) string {
	return `{"jsonrpc":"2.0","method":"` + method + `","params":{"_meta":{"` + wire.MetaSubscriptionID + `":` + id.Raw() + `}` + extra + `}}`
}

// TestListenPeerEndsWithCancelled: a server may end a subscription with
// notifications/cancelled naming the listen (instead of, or as well as, a
// complete result). That is the one legitimate server-sent cancel: the
// listen ends ended_by_server, with no violation, on stdio and on modern
// HTTP (where the notification travels on the listen's own stream).
func TestListenPeerEndsWithCancelled(t *testing.T) {
	check := func(t *testing.T, lr *listenRun, id wire.ID) {
		t.Helper()
		lr.rec.wait(t, "the server's cancel", func(ev event.Event) bool {
			return ev.Kind == event.Received && ev.Msg.Method == wire.NotifyCancelled
		})
		if r := lr.get(id); r.State != session.StateEndedByServer || r.Notifications != 1 {
			t.Errorf("listen %s is %s with %d notifications, want ended_by_server after 1", id, r.State, r.Notifications)
		}
		lr.noViolations()
	}
	for _, alsoAnswer := range []bool{false, true} {
		name := "stdio"
		if alsoAnswer {
			// A server may send the cancel and answer the listen too;
			// neither is a violation.
			name += " and a result"
		}
		t.Run(name, func(t *testing.T) {
			p, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
				modernHandshake(p, m)
				if m.Method == wire.MethodSubscriptionsListen {
					p.send(subNotification(wire.NotifySubscriptionAck, m.ID, `,"notifications":{"resourceSubscriptions":["x://y"]}`))
					p.send(subNotification(wire.NotifyResourceUpdated, m.ID, `,"uri":"x://y"`))
					p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + m.ID.Raw() + `,"reason":"server shutting down"}}`)
					if alsoAnswer {
						p.send(`{"jsonrpc":"2.0","id":` + m.ID.Raw() + `,"result":{"resultType":"complete","_meta":{"` + wire.MetaSubscriptionID + `":` + m.ID.Raw() + `}}}`)
					}
				}
			})
			c, rec, _ := connectClient(t, client.Config{Pipes: pipes})
			lr := newListenRun(t, c, rec)
			id := lr.begin(wire.MethodSubscriptionsListen, listenParams)
			if alsoAnswer {
				rec.wait(t, "the listen's result after the cancel", responseTo(id))
			}
			check(t, lr, id)
			// The subscription is over for the client too: there is nothing
			// left to cancel, and nothing is sent.
			if _, err := lr.c.Cancel(id, "too late"); !errors.Is(err, client.ErrNotInFlight) {
				t.Errorf("Cancel of a listen the server ended = %v, want ErrNotInFlight", err)
			}
			if n := strings.Count(strings.Join(p.all(), "\n"), wire.NotifyCancelled); n != 0 {
				t.Errorf("the client sent %d notifications/cancelled for a listen the server ended", n)
			}
		})
	}
	t.Run("http", func(t *testing.T) {
		srv, _ := serveHTTP(t, modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			sseStart(w)
			sseWrite(w, "data: "+subNotification(wire.NotifySubscriptionAck, m.ID, `,"notifications":{}`)+"\n\n")
			sseWrite(w, "data: "+subNotification(wire.NotifyResourceUpdated, m.ID, `,"uri":"x://y"`)+"\n\n")
			sseWrite(w, `data: {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+m.ID.Raw()+`}}`+"\n\n")
		}))
		c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
		lr := newListenRun(t, c, rec)
		id := lr.begin(wire.MethodSubscriptionsListen, listenParams)
		ev := rec.wait(t, "the listen's stream closed", streamClosed(id))
		if ev.Err != nil {
			t.Errorf("the stream of a listen the server ended reported an error: %v", ev.Err)
		}
		if n := rec.count(failed(id)); n != 0 {
			t.Errorf("a listen the server ended with notifications/cancelled was reported failed:\n%s", rec.dump())
		}
		check(t, lr, id)
	})
}

// TestListenUnknownSubscription: a notification naming a subscription that
// is no listen request of ours is the tracker's unknown_subscription.
func TestListenUnknownSubscription(t *testing.T) {
	p, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
		modernHandshake(p, m)
		if m.Method == wire.MethodSubscriptionsListen {
			p.send(subNotification(wire.NotifySubscriptionAck, m.ID, `,"notifications":{}`))
		}
	})
	c, rec, _ := connectClient(t, client.Config{Pipes: pipes})
	lr := newListenRun(t, c, rec)
	id := lr.begin(wire.MethodSubscriptionsListen, listenParams)
	rec.wait(t, "the acknowledgement", onSubscription(wire.NotifySubscriptionAck, id))
	p.send(subNotification(wire.NotifyResourceUpdated, wire.IntID(42), `,"uri":"x://y"`))
	rec.wait(t, "the stray update", onSubscription(wire.NotifyResourceUpdated, wire.IntID(42)))
	lr.fd.feed()
	v := lr.tr.Violations()
	if v.Count(session.ViolationUnknownSubscription) != 1 || v.Total() != 1 {
		t.Errorf("violations %v, want exactly one unknown_subscription", v.Counts())
	}
	if r := lr.get(id); r.State != session.StateListening || r.Notifications != 0 {
		t.Errorf("the real listen is %s with %d notifications; the stray one must not count", r.State, r.Notifications)
	}
}
