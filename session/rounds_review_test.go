package session

import (
	"encoding/json"
	"testing"
	"time"

	"inflight/event"
)

// A conversation's second round, sent after the user took 2 minutes on the
// form: pressing "longer" (+30s) must not bring its deadline closer.
func TestReview2AdjustTimeoutOnLaterRound(t *testing.T) {
	h := converse(t, 0) // DefaultTimeout 10s
	r := h.begin(0, "tools/call", `{"name":"delete"}`)
	h.sent(1, r)
	h.recv(20, result(1, confirm))
	at := 120_000 // the user answers 2 minutes later
	if _, err := h.tr.Answer(r.ID, map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"cancel"}`)}, ms(at)); err != nil {
		t.Fatal(err)
	}
	before, _ := r.deadline()
	if want := ms(at).Add(10 * time.Second); !before.Equal(want) {
		t.Fatalf("round 2 deadline %v, want %v", before.Sub(t0), want.Sub(t0))
	}
	if _, err := h.tr.AdjustTimeout(r.ID, 30*time.Second, ms(at+1000)); err != nil {
		t.Fatal(err)
	}
	after, _ := r.deadline()
	if !after.After(before) {
		t.Errorf("+30s moved round 2's deadline from %v to %v (closer, not later)", before.Sub(t0), after.Sub(t0))
	}
	x, _ := h.tr.expire(ms(at + 2500))
	if len(x) != 0 {
		t.Errorf("lengthening the timeout got round 2 cancelled 2.5s after it was sent: %+v", x)
	}
}

// Modern Streamable HTTP: the server answers round 1 input_required on an
// SSE stream it keeps open; after the late window the client closes that
// stream itself (closeAfter) and reports StreamClosed ByClient. The user
// is still reading the form: the conversation must stay waiting.
func TestReview2ClientClosesAnsweredRoundStream(t *testing.T) {
	h := newHarness(t, Config{Converse: true}, event.EraModern, event.TransportHTTP)
	r := h.begin(0, "tools/call", `{"name":"delete"}`)
	h.recv(20, result(1, confirm))
	if r.State != StateWaitingInput {
		t.Fatalf("state %s", r.State)
	}
	h.streamClosed(2020, r, true) // closeAfter(lateWindow) fired
	if r.State != StateWaitingInput {
		t.Errorf("the client closing the answered round's stream made the conversation %s (Stopped %q); it should still wait for the user", r.State, r.Conv.Stopped)
	}
	if _, err := h.tr.Answer(r.ID, nil, ms(5000)); err != nil {
		t.Errorf("the user's answer is refused: %v", err)
	}
}
