package client_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// Multi round-trip requests and version errors on tracked requests, from
// raw modern peers over both transports.

// inputRequired is an InputRequiredResult as the MRTR page shows it.
const inputRequired = `{"resultType":"input_required","inputRequests":{"github_login":{"method":"elicitation/create","params":{"mode":"form","message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}},"requestState":"opaque-blob"}`

// unsupportedVersion is an UnsupportedProtocolVersionError for id.
func unsupportedVersion(id wire.ID) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id.Raw() + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2027-01-01"],"requested":"2026-07-28"}}}`)
}

// modernPeers runs f against a raw modern server on each transport; the
// writes the reply to a tools/call (stdioAnswer returns the line, httpAnswer
// writes the HTTP response).
func modernPeers(t *testing.T, stdioAnswer func(m wire.Message) []byte, httpAnswer func(w http.ResponseWriter, m wire.Message), f func(t *testing.T, c *client.Client, rec *recorder)) {
	t.Run("stdio", func(t *testing.T) {
		_, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
			modernHandshake(p, m)
			if m.Method == wire.MethodToolsCall {
				p.send(string(stdioAnswer(m)))
			}
		})
		c, rec, _ := connectClient(t, client.Config{Pipes: pipes})
		f(t, c, rec)
	})
	t.Run("http", func(t *testing.T) {
		srv, _ := serveHTTP(t, modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) { httpAnswer(w, m) }))
		c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
		f(t, c, rec)
	})
}

func TestInputRequired(t *testing.T) {
	modernPeers(t,
		func(m wire.Message) []byte { return wire.ResultResponse(m.ID, json.RawMessage(inputRequired)) },
		func(w http.ResponseWriter, m wire.Message) {
			sseStart(w)
			sseWrite(w, "data: "+string(wire.ResultResponse(m.ID, json.RawMessage(inputRequired)))+"\n\n")
		},
		func(t *testing.T, c *client.Client, rec *recorder) {
			tr := session.NewTracker(session.Config{})
			fd := &feeder{tr: tr, rec: rec}
			params := toolCall("login", map[string]any{})
			r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
			id := send(t, c, 1, wire.MethodToolsCall, params)
			rec.wait(t, "the answer", responseTo(id))
			fd.feed()
			if r.State != session.StateInputRequired || r.ToolError || r.Error != nil {
				t.Errorf("request is %s (tool error %t, error %v), want input_required", r.State, r.ToolError, r.Error)
			}
			if raw, ok := tr.RawResponse(id); !ok || !strings.Contains(string(raw), "opaque-blob") {
				t.Errorf("the InputRequiredResult was not kept: %s", raw)
			}
			// The peer asks an elicitation of a client that declared none
			// (no answers configured): that is the server's violation.
			if v := tr.Violations(); v.Total() != 1 || v.Count(session.ViolationInputRequestUndeclared) != 1 {
				t.Errorf("violations %v, want one %s", v.Counts(), session.ViolationInputRequestUndeclared)
			}
			// It is final: there is nothing left to cancel.
			if _, err := tr.RequestCancel(id, "x", session.CauseUser, time.Now()); err == nil {
				t.Errorf("the tracker accepted a cancel of an answered request")
			}
		})
}

// TestUnsupportedVersionOnRequest: a server that rejects a tracked request
// with UnsupportedProtocolVersionError (not the probe, which passed) fails
// that request, and the error with its list of versions is kept on it.
func TestUnsupportedVersionOnRequest(t *testing.T) {
	modernPeers(t,
		func(m wire.Message) []byte { return unsupportedVersion(m.ID) },
		func(w http.ResponseWriter, m wire.Message) {
			// The transport page: 400 Bad Request with the JSON-RPC error.
			writeJSON(w, http.StatusBadRequest, unsupportedVersion(m.ID))
		},
		func(t *testing.T, c *client.Client, rec *recorder) {
			tr := session.NewTracker(session.Config{})
			fd := &feeder{tr: tr, rec: rec}
			params := toolCall("anything", map[string]any{})
			r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
			id := send(t, c, 1, wire.MethodToolsCall, params)
			rec.wait(t, "the answer", responseTo(id))
			fd.feed()
			if r.State != session.StateFailed || r.Error == nil || r.Error.Code != wire.CodeUnsupportedProtocolVersion {
				t.Fatalf("request is %s with error %v, want failed with -32022", r.State, r.Error)
			}
			if !strings.Contains(string(r.Error.Data), "2027-01-01") {
				t.Errorf("the error's data (the supported versions) was not kept: %s", r.Error.Data)
			}
			if n := rec.count(failed(id)); n != 0 {
				t.Errorf("an answered request was also reported failed locally")
			}
			if n := rec.count(kind(event.TransportClosed)); n != 0 {
				t.Errorf("a version error closed the connection")
			}
		})
}
