package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// TestCancelAfterAnswerSendsNothing: a request whose response has been
// read is no longer in flight, even while the server keeps its HTTP stream
// open (ending it is a SHOULD): Cancel sends nothing and says so.
func TestCancelAfterAnswerSendsNothing(t *testing.T) {
	answerAndHold := func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		sseWrite(w, "data: "+string(wire.ResultResponse(m.ID, json.RawMessage(`{"resultType":"complete","content":[]}`)))+"\n\n")
		<-r.Context().Done()
	}
	check := func(t *testing.T, c *client.Client, rec *recorder) {
		t.Helper()
		id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
		rec.wait(t, "the answer", responseTo(id))
		sig, err := c.Cancel(id, "too late")
		if !errors.Is(err, client.ErrNotInFlight) || sig != event.SignalNone {
			t.Errorf("Cancel after the answer = %s, %v; want ErrNotInFlight", sig, err)
		}
		quietly(100 * time.Millisecond)
		if n := rec.count(kind(event.CancelSent)); n != 0 {
			t.Errorf("%d cancel signals for an answered request", n)
		}
	}
	t.Run("legacy", func(t *testing.T) {
		f := newLegacyFake(t)
		f.call = answerAndHold
		srv := httptest.NewServer(f)
		t.Cleanup(srv.Close)
		c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
		check(t, c, rec)
		quietly(100 * time.Millisecond)
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, m := range f.posts {
			if m.Method == wire.NotifyCancelled {
				t.Errorf("POSTed notifications/cancelled for an answered request: %s", m.Params)
			}
		}
	})
	t.Run("modern", func(t *testing.T) {
		srv, _ := serveHTTP(t, modernFake(answerAndHold))
		c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
		check(t, c, rec)
	})
}

// TestUserInitialize: the composer sends any method, initialize included.
// That initialize must never be cancelled, and the session ID its answer
// carries is not the connection's.
func TestUserInitialize(t *testing.T) {
	t.Run("stdio cancel refused", func(t *testing.T) {
		// The peer answers the client's own initialize (a string ID) and
		// leaves the user's in flight.
		p, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
			if m.Method != wire.MethodInitialize || strings.HasPrefix(m.ID.Raw(), `"`) {
				legacyHandshake(p, m)
			}
		})
		c, rec, _ := connectClient(t, client.Config{Pipes: pipes})
		id := send(t, c, 1, wire.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}`))
		p.wait(t, `"id":1`)
		sig, err := c.Cancel(id, "no")
		if !errors.Is(err, client.ErrNotCancellable) || sig != event.SignalNone || !strings.Contains(err.Error(), "initialize") {
			t.Errorf("Cancel of initialize = %s, %v; want ErrNotCancellable saying why", sig, err)
		}
		quietly(100 * time.Millisecond)
		for _, l := range p.all() {
			if strings.Contains(l, wire.NotifyCancelled) {
				t.Errorf("cancelled initialize: %s", l)
			}
		}
		if n := rec.count(kind(event.CancelSent)); n != 0 {
			t.Errorf("%d cancel signals for initialize", n)
		}
	})
	t.Run("http session kept", func(t *testing.T) {
		release := make(chan struct{})
		var lastSID atomic.Value
		var cancels atomic.Int32
		s := newSessionServer()
		s.onCall = func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			lastSID.Store(r.Header.Get("Mcp-Session-Id"))
			if m.Method == wire.MethodInitialize {
				// A server that answers any initialize with a new session.
				<-release
				w.Header().Set("Mcp-Session-Id", "user-session")
			}
			writeJSON(w, http.StatusOK, wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)))
		}
		counting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rpcHandler(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				if m.Method == wire.NotifyCancelled {
					cancels.Add(1)
				}
				s.serve(w, r, m)
			}).ServeHTTP(w, r)
		})
		srv := httptest.NewServer(counting)
		t.Cleanup(srv.Close)
		c, rec, info := connectClient(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125})
		id := send(t, c, 1, wire.MethodInitialize, json.RawMessage(`{}`))
		if _, err := c.Cancel(id, "no"); !errors.Is(err, client.ErrNotCancellable) {
			t.Errorf("Cancel of initialize = %v, want ErrNotCancellable", err)
		}
		close(release)
		rec.wait(t, "the answer", responseTo(id))
		if got := c.Info().SessionID; got != info.SessionID {
			t.Errorf("session %q after the user's initialize, want %q kept", got, info.SessionID)
		}
		id = send(t, c, 2, wire.MethodToolsList, nil)
		rec.wait(t, "the next answer", responseTo(id))
		if got, _ := lastSID.Load().(string); got != info.SessionID {
			t.Errorf("the next request carried session %q, want %q", got, info.SessionID)
		}
		if n := cancels.Load(); n != 0 {
			t.Errorf("%d cancels POSTed for initialize", n)
		}
	})
}

// TestCloseEndsRequestsInFlight: what becomes of a request in flight when
// the client closes is decided, not raced. Modern: closing its stream is
// the modern cancel, so it ends cancelled by stream_closed, and the stream's
// end is reported before the connection's. Legacy: closing a stream cancels
// nothing, so it ends connection_lost with no cancel.
func TestCloseEndsRequestsInFlight(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		<-r.Context().Done()
	}
	run := func(t *testing.T, cfg client.Config, check func(r *session.Request, order []event.Kind) error) {
		for i := 0; i < 20; i++ {
			c, err := client.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tr := session.NewTracker(session.Config{})
			applied := make(chan struct{})
			connected := make(chan struct{})
			var r *session.Request
			var order []event.Kind // of the events about r, and the closure
			go func() {
				defer close(applied)
				for ev := range c.Events() {
					tr.Apply(ev)
					if (r != nil && ev.RequestID == r.ID) || ev.Kind == event.TransportClosed {
						order = append(order, ev.Kind)
					}
					if ev.Kind == event.Connected {
						r = tr.Begin(wire.MethodToolsCall, toolCall("hang", nil), session.RequestOptions{}, time.Now())
						close(connected)
					}
				}
			}()
			if _, err := c.Connect(t.Context()); err != nil {
				t.Fatal(err)
			}
			<-connected
			if err := c.Send(t.Context(), client.Request{ID: r.ID, Method: wire.MethodToolsCall, Params: toolCall("hang", nil), ProgressToken: r.ProgressToken}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond) // the POST is out, maybe answered with the stream's start
			c.Close()
			<-applied
			if err := check(r, order); err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
		}
	}
	t.Run("modern", func(t *testing.T) {
		srv, _ := serveHTTP(t, modernFake(hang))
		run(t, client.Config{URL: srv.URL}, func(r *session.Request, order []event.Kind) error {
			if r.State != session.StateCancelled || r.Cancel == nil || r.Cancel.Signal != event.SignalStreamClosed || r.Cancel.Cause != session.CauseShutdown {
				return fmt.Errorf("request %s, cancel %+v; want cancelled by stream_closed on shutdown", r.State, r.Cancel)
			}
			n := len(order)
			if n < 3 || order[n-3] != event.CancelSent || order[n-2] != event.StreamClosed || order[n-1] != event.TransportClosed {
				return fmt.Errorf("events %v; want the cancel, the stream's end, then the connection's", order)
			}
			return nil
		})
	})
	t.Run("legacy", func(t *testing.T) {
		f := newLegacyFake(t)
		f.call = hang
		srv := httptest.NewServer(f)
		t.Cleanup(srv.Close)
		run(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125}, func(r *session.Request, _ []event.Kind) error {
			if r.State != session.StateConnectionLost || r.Cancel != nil {
				return fmt.Errorf("request %s, cancel %+v; want connection_lost without a cancel", r.State, r.Cancel)
			}
			return nil
		})
	})
}

// TestLegacyCancelStampedWhenSent: a legacy cancel leaves when its POST
// starts. A response the server sends while it is slow to accept that POST
// came after the cancel left; judged against the POST's end it would look
// crossed.
func TestLegacyCancelStampedWhenSent(t *testing.T) {
	f := newLegacyFake(t)
	answer := make(chan struct{})
	f.call = func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		if m.ID == wire.IntID(1) {
			sseWrite(w, "data: "+string(wire.ResultResponse(m.ID, json.RawMessage(`{"content":[]}`)))+"\n\n")
			return
		}
		select {
		case <-answer:
			sseWrite(w, "data: "+string(wire.ResultResponse(m.ID, json.RawMessage(`{"content":[]}`)))+"\n\n")
		case <-r.Context().Done():
		}
	}
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rpcHandler(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			if m.Method == wire.NotifyCancelled {
				// The server acts on the cancel at once (here: it answers
				// anyway, 50ms later) but is slow to accept its POST.
				go func() {
					time.Sleep(50 * time.Millisecond)
					close(answer)
				}()
				time.Sleep(300 * time.Millisecond)
			}
			f.serve(w, r, m)
		}).ServeHTTP(w, r)
	})
	srv := httptest.NewServer(slow)
	t.Cleanup(srv.Close)
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}
	// A first request gives the tracker its round-trip estimate (loopback:
	// well under the 50ms the server waits).
	r1 := tr.Begin(wire.MethodToolsCall, toolCall("quick", nil), session.RequestOptions{}, time.Now())
	send(t, c, 1, wire.MethodToolsCall, toolCall("quick", nil)) // the tracker numbers from 1
	rec.wait(t, "the quick answer", responseTo(r1.ID))
	r2 := tr.Begin(wire.MethodToolsCall, toolCall("slow", nil), session.RequestOptions{}, time.Now())
	send(t, c, 2, wire.MethodToolsCall, toolCall("slow", nil))
	rec.wait(t, "the stream", func(ev event.Event) bool { return ev.Kind == event.StreamOpened && ev.RequestID == r2.ID })
	fd.feed()
	tr.RequestCancel(r2.ID, "user", session.CauseUser, time.Now())
	if sig, err := c.Cancel(r2.ID, "user"); sig != event.SignalNotification || err != nil {
		t.Fatalf("Cancel = %s, %v", sig, err)
	}
	resp := rec.wait(t, "the answer during the POST", responseTo(r2.ID))
	sent := rec.wait(t, "the cancel", kind(event.CancelSent))
	if !sent.Time.Before(resp.Time) {
		t.Errorf("cancel stamped %s after the response it preceded", sent.Time.Sub(resp.Time))
	}
	fd.feed()
	if r2.State != session.StateCancelled || !r2.Late.Response {
		t.Fatalf("request %s, late %+v; want cancelled with a late response", r2.State, r2.Late)
	}
	if r2.Late.Crossed {
		t.Errorf("a response %s after the cancel left (round trip %s) counted as crossed",
			r2.Late.ResponseAt.Sub(r2.Cancel.SignalAt), tr.CrossingWindow())
	}
	// The cancel POST's status answers the cancel, and is reported after
	// it, so the protocol log lists the cancel first (issue 10).
	all := rec.all()
	cancelAt, statusAt := -1, -1
	for i, ev := range all {
		switch {
		case ev.Kind == event.CancelSent && cancelAt < 0:
			cancelAt = i
		case ev.Kind == event.HTTPStatus && strings.Contains(ev.Text, wire.NotifyCancelled) && statusAt < 0:
			statusAt = i
		}
	}
	if cancelAt < 0 || statusAt < 0 || statusAt < cancelAt {
		t.Errorf("cancel reported at %d, its POST's status at %d: want the cancel first\n%s", cancelAt, statusAt, rec.dump())
	}
}
