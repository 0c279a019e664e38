package ui

import (
	"strings"
	"testing"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// X declines a legacy server's open question as c does: after the
// request's cancel, and the form on it closes.
func TestCancelAllDeclinesLegacyQuestions(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id := h.sendTool("confirm")
	other := h.sendTool("slow")
	q := h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	h.key("end", "enter") // the form on the question, from its own row (untied: the last)
	if h.m.answering.form.Legacy() != q {
		t.Fatal("the form did not open on the question")
	}
	_, c0 := h.fake.calls()
	h.key("esc")
	_, cmd := h.m.Update(keyMsg("X"))
	h.run(cmd)
	_, cmd = h.m.Update(keyMsg("y"))
	// The key's command is not run yet: nothing declined before the cancels.
	select {
	case <-q.reply:
		t.Fatal("declined before the cancels went out")
	default:
	}
	h.run(cmd)
	_, c1 := h.fake.calls()
	if c1-c0 != 2 {
		t.Fatalf("%d cancels sent, want 2 (#%d and #%d)", c1-c0, id, other)
	}
	select {
	case r := <-q.reply:
		if string(r.result) != `{"action":"decline"}` {
			t.Errorf("reply %s", r.result)
		}
	default:
		t.Fatal("the server's question was not declined")
	}
	if h.m.answering.form.Legacy() != nil || h.m.questions.waitingOn(h.m.tracker, wire.IntID(id)) != nil {
		t.Fatal("the question is still open in the UI")
	}
	if !strings.Contains(h.screen(), "cancelling 2 requests; 1 question of the server declined") {
		t.Fatalf("the status does not say what X did:\n%s", h.screen())
	}
}

// X on a modern conversation waiting for the user drops it: nothing is
// sent for it (it has nothing on the wire).
func TestCancelAllDropsAWaitingConversation(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.waitingConfirm()
	_, c0 := h.fake.calls()
	_, cmd := h.m.Update(keyMsg("X"))
	h.run(cmd)
	_, cmd = h.m.Update(keyMsg("y"))
	h.run(cmd)
	if _, c1 := h.fake.calls(); c1 != c0 {
		t.Fatalf("%d cancels sent for a conversation with nothing on the wire", c1-c0)
	}
	if r := h.request(id); r.State != session.StateCancelled {
		t.Fatalf("state %s, want cancelled", r.State)
	}
	if !strings.Contains(h.screen(), "cancelling 1 request") {
		t.Fatalf("the screen does not say what X did:\n%s", h.screen())
	}
}

// A question tied to the one request in flight is declined after that
// request's cancel.
func TestCancelAllDeclinesATiedQuestion(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraLegacy)
	id := h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	if s := q.record(h.m.tracker); s == nil || s.During != wire.IntID(id) {
		t.Fatalf("the question is not tied to #%d", id)
	}
	_, cmd := h.m.Update(keyMsg("X"))
	h.run(cmd)
	_, cmd = h.m.Update(keyMsg("y"))
	h.run(cmd)
	select {
	case r := <-q.reply:
		if string(r.result) != `{"action":"decline"}` {
			t.Errorf("reply %s", r.result)
		}
	default:
		t.Fatal("the server's question was not declined")
	}
	if h.fake.cancels[len(h.fake.cancels)-1] != wire.IntID(id) {
		t.Fatal("the request was not cancelled")
	}
	if !strings.Contains(h.screen(), "cancelling 1 request; 1 question of the server declined") {
		t.Fatalf("the status does not say what X did:\n%s", h.screen())
	}
}
