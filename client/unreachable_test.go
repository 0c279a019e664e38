package client_test

import (
	"context"
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
	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// Over HTTP there is no connection to lose: a server that went away shows
// as a request whose POST got no response at all, marked ErrUnreachable so
// the UI can say the server is gone. A JSON-RPC or HTTP error is no such
// failure.
func TestHTTPServerGoneIsUnreachable(t *testing.T) {
	for _, version := range []string{"", wire.Version20251125} {
		t.Run("version="+version, func(t *testing.T) {
			srv, _ := demoHTTP(t)
			c, rec, _ := connectClient(t, client.Config{URL: srv.URL + "/mcp", ProtocolVersion: version})
			ok := send(t, c, 1, wire.MethodToolsList, nil)
			rec.wait(t, "the tools/list answer", responseTo(ok))
			if n := rec.count(func(ev event.Event) bool { return errors.Is(ev.Err, client.ErrUnreachable) }); n != 0 {
				t.Fatalf("%d events unreachable while the server answers", n)
			}

			srv.CloseClientConnections()
			srv.Listener.Close()
			id := send(t, c, 2, wire.MethodToolsList, nil)
			ev := rec.wait(t, "the failure of a POST to a closed port", failed(id))
			if !errors.Is(ev.Err, client.ErrUnreachable) || !ev.LostConnection {
				t.Fatalf("failure %v (lost %v) is not marked unreachable", ev.Err, ev.LostConnection)
			}
		})
	}
}

// A server that refuses inflight's credentials answers server/discover
// with 401 or 403: that is no sign of a legacy server, so the connection
// fails at once, with the status, instead of retrying as legacy and
// reporting initialize's refusal.
func TestConnectRefusedIsNotLegacy(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		var posts atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			posts.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad token"}}`))
		}))
		err := connectOnce(t, client.Config{URL: srv.URL}, nil)
		srv.Close()
		want := fmt.Sprintf("HTTP %d %s: bad token", status, http.StatusText(status))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "server/discover") {
			t.Errorf("status %d: Connect error %v; want one naming server/discover and %q", status, err, want)
		}
		if n := posts.Load(); n != 1 {
			t.Errorf("status %d: %d POSTs; the refusal was taken for a legacy server", status, n)
		}
	}
}

// A stdio server that dies at start-up is a connection error naming its
// exit status, every time: never a fallback to initialize, which would
// fail in another, racier way.
func TestStdioServerDeadAtStartIsNoLegacyServer(t *testing.T) {
	for i := 0; i < 5; i++ {
		var sent []string
		err := connectOnce(t, client.Config{Command: "sh", Args: []string{"-c", "echo 'fatal: bad config' >&2; exit 3"}}, func(ev event.Event) {
			if ev.Kind == event.Sent {
				sent = append(sent, ev.Msg.Method)
			}
		})
		if err == nil || err.Error() != "server/discover: the server exited: exit status 3" || !errors.Is(err, client.ErrClosed) {
			t.Fatalf("run %d: Connect error %v", i, err)
		}
		for _, m := range sent {
			if m == wire.MethodInitialize {
				t.Fatalf("run %d: fell back to initialize with a dead server (sent %v)", i, sent)
			}
		}
	}
}

// A stdio server that never answers: the error says which limit ran out,
// not just "context deadline exceeded".
func TestSilentServerHandshakeLimitNamed(t *testing.T) {
	err := connectOnce(t, client.Config{Command: "sleep", Args: []string{"100"},
		ProbeTimeout: 50 * time.Millisecond, HandshakeTimeout: 300 * time.Millisecond, ShutdownWait: 200 * time.Millisecond}, nil)
	if err == nil || !strings.Contains(err.Error(), "initialize: no answer within the 300ms allowed for connecting") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect error %v", err)
	}
}

// A "server" that echoes its input sends inflight's own requests back:
// that is said plainly, in both eras, and never answered (an answer would
// come back too, as if the server had said it).
func TestEchoingServerIsNamed(t *testing.T) {
	for _, version := range []string{"", wire.Version20251125} {
		var answers int
		err := connectOnce(t, client.Config{Command: "cat", ProtocolVersion: version, ShutdownWait: 500 * time.Millisecond}, func(ev event.Event) {
			if ev.Kind == event.Sent && ev.Msg.IsResponse() {
				answers++
			}
		})
		if !errors.Is(err, client.ErrEchoed) {
			t.Errorf("version %q: Connect error %v, want ErrEchoed", version, err)
		}
		if answers != 0 {
			t.Errorf("version %q: inflight answered its own echoed request %d times", version, answers)
		}
	}
}

// A legacy server's own requests number from 1 as inflight's do: a ping
// of its own that shares a tracked request's ID and method is answered,
// not taken for an echo; a tracked request sent back byte for byte is an
// echo, and fails as one.
func TestEchoNeedsTheSameBytes(t *testing.T) {
	p, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
		legacyHandshake(p, m)
		if m.Method == wire.MethodPing && m.Kind == wire.KindRequest {
			// Its own ping, with the same ID as the client's.
			p.send(`{"jsonrpc":"2.0","id":` + m.ID.Raw() + `,"method":"ping","params":{"from":"server"}}`)
		}
		if m.Method == wire.MethodToolsList {
			line := p.all()[len(p.all())-1]
			p.send(line) // the client's own request, sent back as it came
		}
	})
	c, rec, _ := connectClient(t, client.Config{Pipes: pipes, ProtocolVersion: wire.Version20251125})
	ping := send(t, c, 1, wire.MethodPing, nil)
	p.wait(t, `"result":{}`) // the client answered the server's own ping
	if n := rec.count(func(ev event.Event) bool { return errors.Is(ev.Err, client.ErrEchoed) }); n != 0 {
		t.Fatalf("the server's own ping %s was taken for an echo", ping)
	}
	list := send(t, c, 2, wire.MethodToolsList, nil)
	ev := rec.wait(t, "the echo's failure", failed(list))
	if !errors.Is(ev.Err, client.ErrEchoed) {
		t.Fatalf("echoed tools/list failed with %v", ev.Err)
	}
}

// connectOnce connects a new client with cfg, closes it, and returns
// Connect's error; every event goes to seen (when not nil) first.
func connectOnce(t *testing.T, cfg client.Config, seen func(event.Event)) error {
	t.Helper()
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range c.Events() {
			if seen != nil {
				seen(ev)
			}
		}
	}()
	_, err = c.Connect(context.Background())
	c.Close()
	<-done
	return err
}

// TestNoResponseHeadersNamed (issue 14, item 12): a server that reads the
// POST and never finishes its response headers. Before, Connect failed with
// "connecting: context deadline exceeded", which does not say what it was
// waiting for.
func TestNoResponseHeadersNamed(t *testing.T) {
	for _, version := range []string{"", wire.Version20251125} {
		t.Run("version="+version, func(t *testing.T) {
			ts := hostile.NewServer(hostile.NoHeaders(), false)
			defer ts.Close()
			err := connectOnce(t, client.Config{URL: ts.URL, ProtocolVersion: version,
				HandshakeTimeout: 300 * time.Millisecond, ShutdownWait: 200 * time.Millisecond}, nil)
			if err == nil || !strings.Contains(err.Error(), "no response headers from the server within the 300ms allowed for connecting") ||
				!errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Connect error %v", err)
			}
		})
	}
}

// A command that cannot start is named once in the error (exec's own
// words name it), so that the reason fits a status line whole.
func TestStdioServerMissingNamedOnce(t *testing.T) {
	err := connectOnce(t, client.Config{Command: "/nonexistent/server"}, nil)
	if err == nil || strings.Count(err.Error(), "/nonexistent/server") != 1 || !strings.Contains(err.Error(), "start server: ") || !strings.Contains(err.Error(), "no such file or directory") {
		t.Fatalf("Connect error %v", err)
	}
}
