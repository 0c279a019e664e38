package session

import (
	"encoding/json"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// pausing is a legacy stdio tracker with a tools/list and a tools/call
// (timeout 1s, maximum 5s) begun at 0, as the TUI sends them when it
// starts with --call.
func pausing(t *testing.T) (*harness, *Request, *Request) {
	h := newHarness(t, Config{DefaultTimeout: time.Second, MaxTimeout: 5 * time.Second}, event.EraLegacy, event.TransportStdio)
	list := h.begin(0, wire.MethodToolsList, "")
	call := h.begin(0, wire.MethodToolsCall, `{"name":"sample"}`)
	return h, list, call
}

// TestQuestionPausesItsRequestsTimeout: a sampling request the server
// sends while a tools/list and a tools/call are in flight is the call's
// (a tools/list never asks), and while it waits for the user the call's
// timeout does not run: ten seconds of answering later nothing is due,
// and the answer resumes the timeout with the time the call had left.
// The server's answer that follows is timely, not late.
func TestQuestionPausesItsRequestsTimeout(t *testing.T) {
	h, list, call := pausing(t)
	h.apply(serverReq(100, 1, wire.MethodSamplingCreate, `{"messages":[],"maxTokens":5}`, wire.ID{}))
	s := h.tr.ServerRequests()[0]
	expect(t, "tied by", s.TiedBy, TiedOnly)
	expect(t, "tied to the call", s.During, call.ID)
	expect(t, "waiting on the user", call.WaitingOnUser(), true)
	if _, limit := call.Remaining(ms(100)); limit != LimitNone {
		t.Errorf("a countdown runs while the user is asked: %v", limit)
	}
	h.recv(200, result(1, `{"tools":[]}`))
	expect(t, "tools/list answered", list.State, StateCompleted)

	d := h.tr.Due(ms(10_000))
	if len(d.Cancels) != 0 {
		t.Fatalf("the call timed out while its question waited for the user: %+v", d.Cancels)
	}
	expect(t, "state while asked", call.State, StatePending)
	if _, ok := h.tr.NextDeadline(); ok {
		t.Errorf("a deadline is scheduled while the only request waits on the user")
	}

	h.apply(ourAnswer(10_100, wire.ResultResponse(id(1), json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`))))
	expect(t, "waiting after the answer", call.WaitingOnUser(), false)
	expect(t, "paused for", call.PausedFor, 10*time.Second)
	left, limit := call.Remaining(ms(10_100))
	expect(t, "left after the answer", left, 900*time.Millisecond)
	expect(t, "limit", limit, LimitTimeout)
	expect(t, "max deadline moved on", call.Timeout.MaxDeadline, ms(15_000))

	h.recv(10_500, result(2, `{"content":[]}`))
	expect(t, "state", call.State, StateCompleted)
	expect(t, "late", call.Late.Response, false)
	expect(t, "flagged", call.Flagged(), false)
}

// TestQuestionPauseResumesTimeout: the timeout, once resumed, expires as
// it would have without the pause, counted without the time asked.
func TestQuestionPauseResumesTimeout(t *testing.T) {
	h, _, call := pausing(t)
	h.apply(serverReq(400, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.apply(ourAnswer(3400, wire.ResultResponse(id(1), json.RawMessage(`{"action":"decline"}`))))
	if d := h.tr.Due(ms(3999)); cancels(d, call) {
		t.Fatalf("expired 599ms after the answer, with 600ms left: %+v", d.Cancels)
	}
	if d := h.tr.Due(ms(4000)); !cancels(d, call) {
		t.Fatalf("cancels at 4s = %+v, want the call's timeout", d.Cancels)
	}
}

// TestQuestionsPauseUntilTheLastEnds: two questions tied to one request
// pause it until both have ended; a withdrawn one ends too.
func TestQuestionsPauseUntilTheLastEnds(t *testing.T) {
	h, _, call := pausing(t)
	h.apply(serverReq(100, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.apply(serverReq(200, 2, wire.MethodSamplingCreate, `{}`, wire.ID{}))
	h.apply(ourAnswer(2000, wire.ResultResponse(id(1), json.RawMessage(`{"action":"accept","content":{}}`))))
	expect(t, "still waiting on the second", call.WaitingOnUser(), true)
	h.recv(3000, string(wire.Notification(wire.NotifyCancelled, json.RawMessage(`{"requestId":2,"reason":"no longer needed"}`))))
	expect(t, "withdrawn", h.tr.ServerRequests()[1].State, ServerWithdrawn)
	expect(t, "waiting after both", call.WaitingOnUser(), false)
	expect(t, "paused for", call.PausedFor, 2900*time.Millisecond)
	left, _ := call.Remaining(ms(3000))
	expect(t, "left", left, 900*time.Millisecond)
}

// TestQuestionPauseAndProgress: progress that resets the timeout during
// the pause leaves the request its whole timeout once the user answers.
func TestQuestionPauseAndProgress(t *testing.T) {
	h, _, call := pausing(t)
	h.apply(serverReq(100, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.recv(500, progress(2, 1))
	h.apply(ourAnswer(8000, wire.ResultResponse(id(1), json.RawMessage(`{"action":"decline"}`))))
	left, limit := call.Remaining(ms(8000))
	expect(t, "left", left, time.Second)
	expect(t, "limit", limit, LimitTimeout)
}

// TestQuestionAnswerFailedPausesAgain: an answer that could not be sent
// leaves the question waiting, and its request paused again.
func TestQuestionAnswerFailedPausesAgain(t *testing.T) {
	h, _, call := pausing(t)
	h.apply(serverReq(100, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.apply(ourAnswer(200, wire.ResultResponse(id(1), json.RawMessage(`{"action":"decline"}`))))
	h.apply(event.Event{Kind: event.RequestFailed, Time: ms(210), RequestID: id(1), Internal: true})
	expect(t, "waiting again", call.WaitingOnUser(), true)
	if d := h.tr.Due(ms(9000)); cancels(d, call) {
		t.Fatalf("timed out while its question waited again: %+v", d.Cancels)
	}
}

// TestQuestionUntiedCountsCandidates: with two tool calls and a
// tools/list in flight, an untied question counts the two calls, the
// requests it could belong to; with only a request of a method the
// tracker does not know to ask in flight, that one is still the one.
func TestQuestionUntiedCountsCandidates(t *testing.T) {
	h, _, _ := pausing(t)
	h.begin(0, wire.MethodToolsCall, `{"name":"other"}`)
	h.apply(serverReq(100, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	s := h.tr.ServerRequests()[0]
	expect(t, "tied by", s.TiedBy, TiedNone)
	expect(t, "in flight", s.InFlight, 2)

	h2 := newHarness(t, Config{}, event.EraLegacy, event.TransportStdio)
	custom := h2.begin(0, "vendor/run", `{}`)
	h2.apply(serverReq(100, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	expect(t, "custom method tied", h2.tr.ServerRequests()[0].During, custom.ID)
}

// TestQuestionEndsWithItsRequest: a request that ends while its question
// is open is not left paused, and the connection's loss ends the pause of
// one still active.
func TestQuestionEndsWithItsRequest(t *testing.T) {
	h, _, call := pausing(t)
	h.apply(serverReq(100, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.recv(300, result(2, `{"content":[]}`))
	expect(t, "abandoned", h.tr.ServerRequests()[0].State, ServerAbandoned)
	expect(t, "waiting after its end", call.WaitingOnUser(), false)

	h2, _, call2 := pausing(t)
	h2.apply(serverReq(100, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h2.apply(event.Event{Kind: event.TransportClosed, Time: ms(500)})
	expect(t, "lost", call2.State, StateConnectionLost)
	expect(t, "waiting after the loss", call2.WaitingOnUser(), false)
}

// cancels reports whether d cancels r.
func cancels(d Due, r *Request) bool {
	for _, x := range d.Cancels {
		if x.ID == r.ID {
			return true
		}
	}
	return false
}
