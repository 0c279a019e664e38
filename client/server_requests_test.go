package client_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// TestModernServerRequestNotAnswered: in the modern era a server sends no
// requests and a client writes no responses (2026-07-28, on every
// transport). A server that sends one anyway gets no answer; the request is
// reported as ordinary traffic, and the tracker records the violation.
func TestModernServerRequestNotAnswered(t *testing.T) {
	isServerRequest := func(id string) func(event.Event) bool {
		rid := wire.StringID(id)
		return func(ev event.Event) bool {
			return ev.Kind == event.Received && ev.Msg.Kind == wire.KindRequest && ev.RequestID == rid
		}
	}
	check := func(t *testing.T, c *client.Client, rec *recorder) {
		t.Helper()
		for _, id := range []string{"srv-1", "srv-2"} {
			if ev := rec.wait(t, "the server's request "+id, isServerRequest(id)); ev.Internal {
				t.Errorf("%s reported as the client's own traffic", id)
			}
		}
		quietly(200 * time.Millisecond)
		for _, ev := range rec.all() {
			if ev.Kind == event.Sent && ev.Msg.IsResponse() {
				t.Errorf("the client answered: %s", describeEvent(ev))
			}
		}
		tr := session.NewTracker(session.Config{})
		(&feeder{tr: tr, rec: rec}).feed()
		if n := tr.Violations().Count(session.ViolationServerRequestModern); n != 2 {
			t.Errorf("%d %s violations, want 2", n, session.ViolationServerRequestModern)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		p, pipes := newStdioPeer(t, modernHandshake)
		c, rec, info := connectClient(t, client.Config{Pipes: pipes})
		if info.Era != event.EraModern {
			t.Fatalf("era %s", info.Era)
		}
		p.send(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)
		p.send(`{"jsonrpc":"2.0","id":"srv-2","method":"sampling/createMessage","params":{}}`)
		check(t, c, rec)
		for _, l := range p.all() {
			if strings.Contains(l, `"srv-`) {
				t.Errorf("the client wrote to the server: %s", l)
			}
		}
	})
	t.Run("streamable http", func(t *testing.T) {
		srv, log := serveHTTP(t, modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			if m.Kind != wire.KindRequest {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			sseStart(w)
			sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n")
			sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-2\",\"method\":\"sampling/createMessage\",\"params\":{}}\n\n")
			sseWrite(w, "data: "+string(wire.ResultResponse(m.ID, json.RawMessage(`{"resultType":"complete","tools":[]}`)))+"\n\n")
		}))
		c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
		id := send(t, c, 1, wire.MethodToolsList, nil)
		rec.wait(t, "the answer", responseTo(id))
		check(t, c, rec)
		for _, r := range log.all() {
			if strings.Contains(string(r.Body), `"srv-`) {
				t.Errorf("the client POSTed an answer: %s", r.Body)
			}
		}
	})
}

// TestLegacyServerRequestAnsweredOffReader: a legacy server's request is
// answered, but not by the goroutine that reads the server's stdout: a
// server that stops reading its stdin would stall that answer, and with it
// all reading. Here the response the server sends after its ping must
// arrive although the ping's answer cannot be written.
func TestLegacyServerRequestAnsweredOffReader(t *testing.T) {
	inR, inW := io.Pipe()   // the client's stdin; nobody reads it after the request
	outR, outW := io.Pipe() // the client's stdout
	write := func(b []byte) { _, _ = outW.Write(append(b, '\n')) }
	go func() {
		br := bufio.NewReader(inR)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			m, _ := wire.Decode(line)
			switch m.Method {
			case wire.MethodDiscover:
				write(wire.ErrorResponse(m.ID, wire.CodeMethodNotFound, "Method not found"))
			case wire.MethodInitialize:
				write(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"deaf","version":"1"}}`)))
			case wire.MethodToolsCall:
				// From now on the server does not read its stdin.
				write([]byte(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`))
				write(wire.ResultResponse(m.ID, json.RawMessage(`{"content":[]}`)))
				return
			}
		}
	}()
	t.Cleanup(func() {
		outW.Close()
		inR.Close()
	})
	c, rec, _ := connectClient(t, client.Config{Pipes: &client.Pipes{Stdin: inW, Stdout: outR}, WriteTimeout: time.Minute, ShutdownWait: 200 * time.Millisecond})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	rec.wait(t, "the response after the ping", responseTo(id))
	rec.wait(t, "the ping's answer on its way", func(ev event.Event) bool {
		return ev.Kind == event.Sent && ev.RequestID == wire.StringID("p1") && ev.Internal
	})
}
