package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// sessionServer is a legacy Streamable HTTP server whose sessions the test
// ends at will, with a GET stream per session.
type sessionServer struct {
	mu       sync.Mutex
	n        int    // sessions begun
	cur      string // the live session ("" once ended)
	getSIDs  []string
	changed  chan struct{}
	killGet  chan struct{} // closed to end the current GET stream
	retryMS  int
	onGet404 func(sid string) // runs before a GET is answered 404
	onInit   func(n int)      // runs before the n-th initialize is answered
	onCall   func(w http.ResponseWriter, r *http.Request, m wire.Message)
}

func newSessionServer() *sessionServer {
	return &sessionServer{changed: make(chan struct{}), killGet: make(chan struct{}), retryMS: 10}
}

func (s *sessionServer) endSession() {
	s.mu.Lock()
	s.cur = ""
	close(s.killGet)
	s.killGet = make(chan struct{})
	s.mu.Unlock()
}

func (s *sessionServer) inits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// waitGet waits for a GET stream opened in session sid.
func (s *sessionServer) waitGet(t testing.TB, sid string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		s.mu.Lock()
		for _, g := range s.getSIDs {
			if g == sid {
				s.mu.Unlock()
				return
			}
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no GET stream opened in session %q", sid)
		}
	}
}

func (s *sessionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rpcHandler(s.serve).ServeHTTP(w, r)
}

func (s *sessionServer) serve(w http.ResponseWriter, r *http.Request, m wire.Message) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	valid := sid != "" && sid == s.cur
	kill := s.killGet
	s.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		if !valid {
			if s.onGet404 != nil {
				s.onGet404(sid)
			}
			http.NotFound(w, r)
			return
		}
		sseStart(w)
		sseWrite(w, fmt.Sprintf("retry: %d\n\n", s.retryMS))
		s.mu.Lock()
		s.getSIDs = append(s.getSIDs, sid)
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		select {
		case <-kill:
		case <-r.Context().Done():
		}
		return
	}
	switch {
	case m.Method == wire.MethodInitialize && sid == "":
		s.mu.Lock()
		s.n++
		n := s.n
		s.mu.Unlock()
		if s.onInit != nil {
			s.onInit(n)
		}
		s.mu.Lock()
		s.cur = fmt.Sprintf("s%d", n)
		cur := s.cur
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", cur)
		writeJSON(w, http.StatusOK, wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sessions","version":"1"}}`)))
	case !valid:
		http.NotFound(w, r)
	case m.Kind != wire.KindRequest:
		w.WriteHeader(http.StatusAccepted)
	case s.onCall != nil:
		s.onCall(w, r, m)
	default:
		writeJSON(w, http.StatusOK, wire.ResultResponse(m.ID, json.RawMessage(`{"tools":[]}`)))
	}
}

// TestGetStream404ForEndedSession: a GET 404 that speaks of a session
// already replaced must neither end the new session (a third initialize)
// nor leave it without a GET stream.
func TestGetStream404ForEndedSession(t *testing.T) {
	s := newSessionServer()
	renewed := make(chan struct{})
	staleGet := make(chan struct{}, 1)
	s.onInit = func(n int) {
		if n == 2 {
			close(renewed)
		}
	}
	s.onGet404 = func(sid string) {
		if sid == "s1" {
			// The GET of the ended session is answered only once the new
			// session has begun: a slow 404.
			select {
			case staleGet <- struct{}{}:
			default:
			}
			<-renewed
			time.Sleep(50 * time.Millisecond)
		}
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125})
	s.waitGet(t, "s1")
	s.endSession()
	<-staleGet // the GET loop asked again in s1
	id := send(t, c, 1, wire.MethodToolsList, nil)
	rec.wait(t, "the 404 that ends s1", failed(id))
	s.waitGet(t, "s2")
	quietly(200 * time.Millisecond)
	if n := s.inits(); n != 2 {
		t.Errorf("%d sessions begun, want 2 (the stale 404 ended the new one)", n)
	}
	if sid := c.Info().SessionID; sid != "s2" {
		t.Errorf("session %q, want s2", sid)
	}
}

// TestGetStream404DuringRenewal: a GET sent while a new session is being
// started carries no session, and its 404 does not mean the server offers
// no GET stream: the loop goes on in the new session.
func TestGetStream404DuringRenewal(t *testing.T) {
	s := newSessionServer()
	s.retryMS = 200
	sessionless := make(chan struct{})
	var once sync.Once
	s.onGet404 = func(sid string) {
		if sid == "" {
			once.Do(func() { close(sessionless) })
		}
	}
	s.onInit = func(n int) {
		if n == 2 {
			// The renewal takes until the GET loop has tried without a
			// session, and a little more.
			select {
			case <-sessionless:
			case <-time.After(waitLimit):
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125})
	s.waitGet(t, "s1")
	s.mu.Lock()
	s.cur = "" // the server forgets s1; its GET stream ends below
	s.mu.Unlock()
	id := send(t, c, 1, wire.MethodToolsList, nil)
	rec.wait(t, "the 404 that ends s1", failed(id))
	s.endSession()
	s.waitGet(t, "s2")
	for _, ev := range rec.all() {
		if ev.Kind == event.Note && strings.Contains(ev.Text, "no GET stream") {
			t.Errorf("a GET sent during the renewal was taken for a server without a GET stream: %s", ev.Text)
		}
	}
	if n := s.inits(); n != 2 {
		t.Errorf("%d sessions begun, want 2", n)
	}
}

// TestInvalidSessionIDRefused (issue 14, item 12): a legacy server whose
// Mcp-Session-Id is not visible ASCII (0x21 to 0x7E, as the 2025-11-25
// transport requires). Before, inflight sent it back on every request;
// now the handshake fails and says why, and the ID never goes out.
func TestInvalidSessionIDRefused(t *testing.T) {
	for _, sid := range []string{"sessión-ä", "a b", "bad\u202eid", "tab\tid"} {
		t.Run(sid, func(t *testing.T) {
			var mu sync.Mutex
			var carried []string
			peer := hostile.SessionIDPeer(sid)
			ts := hostile.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if v := r.Header.Values("Mcp-Session-Id"); len(v) > 0 {
					mu.Lock()
					carried = append(carried, r.Method+" "+strings.Join(v, ","))
					mu.Unlock()
				}
				peer.ServeHTTP(w, r)
			}), false)
			defer ts.Close()
			c, err := client.New(client.Config{URL: ts.URL, ProtocolVersion: wire.Version20251125, ShutdownWait: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rec := record(c)
			_, err = c.Connect(context.Background())
			c.Close()
			<-rec.done
			if err == nil || !strings.Contains(err.Error(), "Mcp-Session-Id") || !strings.Contains(err.Error(), "not visible ASCII") {
				t.Fatalf("Connect error %v", err)
			}
			if strings.ContainsAny(err.Error(), "\u202e\t") || strings.Contains(err.Error(), "ä") {
				t.Errorf("the error carries the server's bytes raw: %q", err)
			}
			if info := c.Info(); info.SessionID != "" {
				t.Errorf("session ID kept: %q", info.SessionID)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(carried) > 0 {
				t.Errorf("the session ID was sent back: %q", carried)
			}
		})
	}
}

// TestLegacyConnectWaitsForGetStream (issue 14, item 13): Connect ends
// once the legacy GET stream is open, so the first request never races it.
// The peer opens its GET stream slowly, primes the tools/call stream and
// closes it at once, and answers only the GET that resumes with
// Last-Event-ID. Before, the first request went out while the GET was
// still being opened, and the wire order varied from run to run.
func TestLegacyConnectWaitsForGetStream(t *testing.T) {
	peer := &hostile.ResumeOverGET{GetDelay: 150 * time.Millisecond}
	ts := hostile.NewServer(peer, false)
	t.Cleanup(ts.Close) // after the client's Close, which ends the GET stream
	c, rec, _ := connectClient(t, client.Config{URL: ts.URL, ProtocolVersion: wire.Version20251125})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
	ev := rec.wait(t, "the answer on the resumed stream", responseTo(id))
	if !strings.Contains(string(ev.Raw), "answered on the resumed stream") {
		t.Errorf("answer %s", ev.Raw)
	}
	if peer.Raced() {
		t.Errorf("tools/call reached the server before its GET stream was open; the server saw %q", peer.Log())
	}
	resumed := false
	for _, l := range peer.Log() {
		if l == "GET Last-Event-ID="+hostile.PrimingID {
			resumed = true
		}
	}
	if !resumed {
		t.Errorf("no GET with Last-Event-ID %s; the server saw %q", hostile.PrimingID, peer.Log())
	}
}
