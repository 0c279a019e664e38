package ui

import (
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// TestQuestionPausesTheCallsTimeout: on legacy stdio, the demo's sample
// tool asks for a sampling reply while a tools/list is still in flight
// beside it. The question is the call's (a tools/list never asks), and
// while it waits for the user the call's row says so instead of counting
// down: left unanswered for longer than the call's timeout, the call is
// not cancelled, and the server's answer after the user's is timely, not
// a late response flagged against the server.
func TestQuestionPausesTheCallsTimeout(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.run(h.m.send(wire.MethodToolsList, nil, sessionDefaults()))
	id := h.sendTool("sample")
	h.legacyAsk(wire.IntID(1), wire.MethodSamplingCreate, `{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":20}`)
	h.advance(session.DefaultTimeout + 10*time.Second)

	scr := h.screen()
	call, row := rowIndex(scr, " sample "), rowIndex(scr, "└ ↘ sampling/createMessage")
	if call < 0 || row != call+1 {
		t.Fatalf("the question is not tied under its call:\n%s", scr)
	}
	if line := strings.Split(scr, "\n")[call]; !strings.Contains(line, "on you") || strings.Contains(line, "expired") {
		t.Errorf("the call's row does not say it waits on the user: %s", line)
	}
	h.fake.mu.Lock()
	cancels := append([]wire.ID(nil), h.fake.cancels...)
	h.fake.mu.Unlock()
	for _, c := range cancels {
		if c == wire.IntID(id) {
			t.Fatalf("the call was cancelled while its question waited for the user")
		}
	}
	r, _ := h.m.tracker.Get(wire.IntID(id))
	if r.State.IsFinal() || r.State == session.StateCancelRequested {
		t.Fatalf("the call is %s while its question waits", r.State)
	}

	h.legacyAnswered(wire.IntID(1), `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"inflight"}`)
	h.advance(time.Second)
	h.answer(id, `{"content":[{"type":"text","text":"the model said hi"}]}`)
	if r.State != session.StateCompleted || r.Late.Response || r.Flagged() {
		t.Errorf("after the answer: %s, late %v, flagged %v; want completed and not flagged", r.State, r.Late.Response, r.Flagged())
	}
	if scr := h.screen(); strings.Contains(scr, "late response") {
		t.Errorf("a late response is shown:\n%s", scr)
	}
}
