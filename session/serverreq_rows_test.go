package session

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// TestServerRequestReusedOpenID: a server request under the ID of one
// still waiting is flagged and kept apart: the first stays waiting and
// takes inflight's answer; the second is not_answered from its arrival.
func TestServerRequestReusedOpenID(t *testing.T) {
	h, _ := legacy(t, event.TransportStdio)
	h.apply(serverReq(10, 1, wire.MethodElicitationCreate, `{"message":"first"}`, wire.ID{}))
	h.apply(serverReq(20, 1, wire.MethodSamplingCreate, `{"messages":[]}`, wire.ID{}))
	expect(t, "violations", h.tr.Violations().Count(ViolationServerRequestReusedID), 1)
	all := h.tr.ServerRequests()
	if len(all) != 2 {
		t.Fatalf("server requests = %d, want 2", len(all))
	}
	first, second := all[0], all[1]
	expect(t, "second", second.State, ServerNotAnswered)
	expect(t, "second ended on arrival", second.Ended, ms(20))
	open, ok := h.tr.ServerRequest(id(1))
	expect(t, "the open one is the first", ok && open == first, true)
	h.apply(ourAnswer(30, wire.ResultResponse(id(1), json.RawMessage(`{"action":"decline"}`))))
	expect(t, "first", first.State, ServerDeclined)
	expect(t, "second untouched", second.State, ServerNotAnswered)
	_, server := h.tr.Waiting()
	expect(t, "waiting", server, 0)
}

// TestServerRequestUntiedAndWaiting: a request that could not be tied
// says how many were in flight, is listed among the untied in the order
// they came, and counts as waiting until it ends; a withdrawal keeps the
// server's reason.
func TestServerRequestUntiedAndWaiting(t *testing.T) {
	h, r := legacy(t, event.TransportStdio)
	h.begin(5, wire.MethodToolsCall, `{"name":"other"}`)
	h.apply(serverReq(10, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.apply(serverReq(11, 2, wire.MethodElicitationCreate, `{}`, r.ID))
	h.apply(serverReq(12, 3, wire.MethodSamplingCreate, `{}`, wire.ID{}))
	untied := h.tr.ServerRequestsUntied()
	if len(untied) != 2 || untied[0].ID != id(1) || untied[1].ID != id(3) {
		t.Fatalf("untied = %v, want 1 then 3", untied)
	}
	expect(t, "in flight when untied", untied[0].InFlight, 2)
	expect(t, "tied: no count", h.tr.ServerRequests()[1].InFlight, 0)
	input, server := h.tr.Waiting()
	expect(t, "input", input, 0)
	expect(t, "server", server, 3)
	h.recv(3000, string(wire.Notification(wire.NotifyCancelled, json.RawMessage(`{"requestId":1,"reason":"timed out after 3s"}`))))
	expect(t, "withdrawn", untied[0].State, ServerWithdrawn)
	expect(t, "reason", untied[0].Reason, "timed out after 3s")
	_, server = h.tr.Waiting()
	expect(t, "server after the withdrawal", server, 2)
}

// TestWaitingInputCounted: a modern round waiting for the user counts in
// Waiting's input, not as traffic on the wire.
func TestWaitingInputCounted(t *testing.T) {
	h := converse(t, 10)
	r := h.begin(0, wire.MethodToolsCall, `{"name":"confirm"}`)
	h.recv(10, result(1, confirm))
	expect(t, "state", r.State, StateWaitingInput)
	input, server := h.tr.Waiting()
	expect(t, "input", input, 1)
	expect(t, "server", server, 0)
}

// TestServerAnswerFailed: the client's report that its answer could not
// be sent puts the server's request back to waiting, with why; the next
// answer that goes out ends it.
func TestServerAnswerFailed(t *testing.T) {
	h, r := legacy(t, event.TransportStdio)
	h.apply(serverReq(10, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.apply(ourAnswer(20, wire.ResultResponse(id(1), json.RawMessage(`{"action":"accept","content":{}}`))))
	s := h.tr.ServerRequests()[0]
	expect(t, "answered", s.State, ServerAnswered)
	h.apply(event.Event{Kind: event.RequestFailed, Time: ms(21), RequestID: id(1), Internal: true, Err: errors.New("server unreachable")})
	expect(t, "waiting again", s.State, ServerWaiting)
	expect(t, "why", s.AnswerFailed, "server unreachable")
	expect(t, "our own request 1 untouched", r.State, StatePending)
	if _, ok := h.tr.ServerRequest(id(1)); !ok {
		t.Fatal("not open again")
	}
	h.apply(ourAnswer(30, wire.ResultResponse(id(1), json.RawMessage(`{"action":"decline"}`))))
	expect(t, "declined", s.State, ServerDeclined)
	expect(t, "why cleared", s.AnswerFailed, "")
	expect(t, "ended", s.Ended, ms(30))
}

// TestServerRequestPlace: a server request's place among the requests is
// the order of events, even when the clock gives them all one time.
func TestServerRequestPlace(t *testing.T) {
	h, _ := legacy(t, event.TransportStdio) // request 1 begun
	h.apply(serverReq(0, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.begin(0, wire.MethodToolsCall, `{"name":"later"}`)
	h.begin(0, wire.MethodToolsCall, `{"name":"latest"}`)
	h.apply(serverReq(0, 2, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	all := h.tr.ServerRequests()
	expect(t, "the first came after request 1", h.tr.ServerRequestPlace(all[0]), 0)
	expect(t, "the second after all three", h.tr.ServerRequestPlace(all[1]), 2)
}

// TestServerRequestAbandonedStillHeld: an abandoned request is still held
// by the client (its form open), however many of the server's requests
// came after it: one under its ID is not_answered and flagged, and the
// answer inflight then sends is the abandoned one's.
func TestServerRequestAbandonedStillHeld(t *testing.T) {
	h, _ := legacy(t, event.TransportStdio)
	h.apply(serverReq(10, 1, wire.MethodElicitationCreate, `{"message":"first"}`, wire.ID{}))
	h.recv(20, result(1, `{"content":[]}`))
	for i := 0; i < 300; i++ { // more than the client holds at once
		h.apply(serverReq(30, 100+i, wire.MethodElicitationCreate, `{}`, wire.ID{}))
		h.apply(ourAnswer(30, wire.ErrorResponse(id(100+i), wire.CodeInternalError, "refused")))
	}
	first := h.tr.ServerRequests()[0]
	expect(t, "first", first.State, ServerAbandoned)
	h.apply(serverReq(40, 1, wire.MethodElicitationCreate, `{"message":"second"}`, wire.ID{}))
	all := h.tr.ServerRequests()
	second := all[len(all)-1]
	expect(t, "second", second.State, ServerNotAnswered)
	expect(t, "violations", h.tr.Violations().Count(ViolationServerRequestReusedID), 1)
	h.apply(ourAnswer(50, wire.ResultResponse(id(1), json.RawMessage(`{"action":"accept","content":{}}`))))
	expect(t, "first after the answer", first.State, ServerAnswered)
	expect(t, "second after the answer", second.State, ServerNotAnswered)
}

// TestServerRequestsOfOneCallBounded: a server asks 5000 questions during
// one call (the client refuses all past 256 and answers them with an
// error): the call's own Conv.ServerRequests keeps, as the tracker's list
// does, at most 1000 of them — the open one and the newest — and counts
// the others, rather than every one, params and all, as the flood goes on.
func TestServerRequestsOfOneCallBounded(t *testing.T) {
	h, r := legacy(t, event.TransportStdio)
	params := `{"message":"` + strings.Repeat("x", 32<<10) + `"}`
	h.apply(serverReq(5, 1, wire.MethodElicitationCreate, `{"message":"still open"}`, wire.ID{}))
	for i := 2; i <= 5001; i++ {
		h.apply(serverReq(10+i, i, wire.MethodElicitationCreate, params, wire.ID{}))
		h.apply(ourAnswer(10+i, wire.ErrorResponse(id(i), wire.CodeInternalError, "refused")))
	}
	if n := len(h.tr.ServerRequests()); n > maxServerRequestsKept {
		t.Fatalf("tracker keeps %d", n)
	}
	kept := r.Conv.ServerRequests
	if n := len(kept); n != maxServerRequestsKept {
		t.Fatalf("the call's Conv.ServerRequests keeps %d server requests (%d MiB of params)", n, n*(32<<10)>>20)
	}
	expect(t, "dropped", r.Conv.ServerRequestsDropped, 5001-maxServerRequestsKept)
	expect(t, "the open one kept", kept[0].ID == id(1) && kept[0].Open(), true)
	expect(t, "the newest kept", kept[len(kept)-1].ID, id(5001))
	expect(t, "the oldest refused kept", kept[1].ID, id(5001-maxServerRequestsKept+2))
}
