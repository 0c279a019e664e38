package ui

import (
	"testing"

	"inflight/event"
	"inflight/wire"
)

// TestCancelReasonNamesTheRoundInFlight: C's prompt opened on round 1;
// while it was open the round was answered (roots, without a prompt) and
// round 2 began: the cancel goes to round 2's ID, the one in flight.
func TestCancelReasonNamesTheRoundInFlight(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.sendTool("roots")
	h.key("C")
	if h.m.prompt.kind != promptReason {
		t.Fatal("no reason prompt")
	}
	h.answer(id, `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`)
	round2, _ := h.lastRound()
	if round2 == wire.IntID(id) {
		t.Fatal("no second round began")
	}
	h.typeText("changed my mind")
	h.key("enter")
	if n := len(h.fake.cancels); n == 0 || h.fake.cancels[n-1] != round2 {
		t.Fatalf("cancelled %v, want round 2's ID %s", h.fake.cancels, round2)
	}
}
