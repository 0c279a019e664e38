package ui

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/prompt"
	"inflight/wire"
)

// TestCancelReasonNamesTheRoundInFlight: C's prompt opened on round 1;
// while it was open the round was answered (roots, without a prompt) and
// round 2 began: the cancel goes to round 2's ID, the one in flight.
func TestCancelReasonNamesTheRoundInFlight(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.sendTool("roots")
	h.key("C")
	if h.m.screens.prompt.Kind() != prompt.CancelWithReason {
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

// TestFormClosesWhenItsQuestionIsWithdrawn: the tracker's word that the
// server withdrew the question closes its open form (without waiting for
// Serve's message, which a full queue may never bring) and nothing is
// sent; typing enter afterwards sends nothing either.
func TestFormClosesWhenItsQuestionIsWithdrawn(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("withdrawn")
	q := h.legacyAsk(wire.IntID(9), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a", "space")
	h.legacyWithdrawn(9, "no answer within 3s")
	if h.m.focus.mode == keymap.ModeAnswer {
		t.Fatal("the form stayed open on a withdrawn question")
	}
	if scr := h.screen(); !strings.Contains(scr, "the server withdrew this question (no answer within 3s); nothing was sent") {
		t.Errorf("status:\n%s", scr)
	}
	h.key("enter")
	select {
	case r := <-q.reply:
		t.Fatalf("a stale answer was sent: %s", r.result)
	default:
	}
	if h.m.questions.len() != 0 {
		t.Errorf("%d questions still queued", h.m.questions.len())
	}
}

// TestFormClosesWhenTheConnectionIsLost: the connection's end loses the
// question; its form closes and says so.
func TestFormClosesWhenTheConnectionIsLost(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraLegacy)
	h.sendTool("confirm")
	h.legacyAsk(wire.IntID(4), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a")
	h.events(event.Event{Kind: event.TransportClosed, Time: h.now})
	if h.m.focus.mode == keymap.ModeAnswer || !strings.Contains(h.screen(), "connection lost; nothing was sent") {
		t.Fatalf("mode %v:\n%s", h.m.focus.mode, h.screen())
	}
}

// TestFormSaysItsRequestEndedFirst: the request the question arrived
// during was answered while the form was open: the form stays (the
// server did not withdraw the question) and says so before an answer is
// sent.
func TestFormSaysItsRequestEndedFirst(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id := h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(5), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a")
	h.answer(id, `{"content":[{"type":"text","text":"went ahead without you"}]}`)
	if h.m.focus.mode != keymap.ModeAnswer || !strings.Contains(h.screen(), "its request #2 ended first: the server may no longer read an answer") {
		t.Fatalf("mode %v:\n%s", h.m.focus.mode, h.screen())
	}
	h.key("space", "enter")
	select {
	case <-q.reply:
	default:
		t.Fatal("the answer the user chose to send was not sent")
	}
}

// TestFormOpensAgainWhenTheAnswerIsNotSent: the answer's POST failed
// (the server unreachable): the client says so through Serve, the form
// opens again as typed, with the error, and enter sends it again.
func TestFormOpensAgainWhenTheAnswerIsNotSent(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(6), wire.MethodElicitationCreate, `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)
	h.key("a")
	h.typeText("Ada")
	h.key("enter")
	if r := <-q.reply; !strings.Contains(string(r.result), `"Ada"`) {
		t.Fatalf("first reply %s", r.result)
	}
	h.legacyAnswered(wire.IntID(6), `{"action":"accept","content":{"name":"Ada"}}`)
	h.events(event.Event{Kind: event.RequestFailed, RequestID: wire.IntID(6), Internal: true, Err: errors.New("POST response: server unreachable")})
	if h.m.conn.state != connUp {
		t.Errorf("a failed answer made the connection lost")
	}
	h.m.Update(questionMsg{kind: questionNotSent, q: q, err: errors.New("POST response: server unreachable")})
	scr := h.screen()
	if h.m.focus.mode != keymap.ModeAnswer || !strings.Contains(scr, "the answer could not be sent: POST response: server unreachable") || !strings.Contains(scr, "Ada") {
		t.Fatalf("the form did not open again as typed, with the error:\n%s", scr)
	}
	h.key("enter")
	select {
	case r := <-q.reply:
		if !strings.Contains(string(r.result), `"Ada"`) {
			t.Errorf("second reply %s", r.result)
		}
	default:
		t.Fatal("enter did not send it again")
	}
}

// TestFormOpensAgainBeforeTheFailureIsApplied: Serve's questionNotSent
// comes before the event batch with the RequestFailed (two channels, no
// order): the record still says answered, but the answer came back
// unsent, so the form opens and enter sends it again.
func TestFormOpensAgainBeforeTheFailureIsApplied(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(6), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a", "space", "enter")
	<-q.reply
	h.legacyAnswered(wire.IntID(6), `{"action":"accept","content":{"confirm":true}}`)
	h.m.Update(questionMsg{kind: questionNotSent, q: q, err: errors.New("POST response: server unreachable")})
	if h.m.focus.mode != keymap.ModeAnswer {
		t.Fatalf("the form did not open again:\n%s", h.screen())
	}
	h.key("enter")
	select {
	case <-q.reply:
	default:
		t.Fatalf("enter did not send it again; status %q", h.m.status.text)
	}
	h.events(event.Event{Kind: event.RequestFailed, RequestID: wire.IntID(6), Internal: true, Err: errors.New("POST response: server unreachable")})
	if s := q.record(h.m.tracker); s == nil || s.State != session.ServerWaiting {
		t.Errorf("after the failure: %v", s)
	}
}

// TestModernRoundNotSentShowsTheForm: the next round's POST fails (the
// server unreachable): the request fails with it (nothing reached the
// server), and the form comes back as typed with the error, sending
// nothing more.
func TestModernRoundNotSentShowsTheForm(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	h.waitingConfirm()
	h.key("enter")
	h.key("tab", "tab", "tab") // note (the fields are in name order)
	h.typeText("tidy up now")  // typing replaces the default shown
	h.fake.mu.Lock()
	h.fake.sendErr = errors.New("POST tools/call: server unreachable")
	h.fake.mu.Unlock()
	before := h.sentCount()
	h.key("enter")
	if h.sentCount() != before+1 {
		t.Fatalf("sent %d, want the next round:\n%s", h.sentCount()-before, h.screen())
	}
	scr := h.screen()
	if h.m.focus.mode != keymap.ModeAnswer || !strings.Contains(scr, "this answer could not be sent: POST tools/call: server unreachable") ||
		!strings.Contains(scr, "tidy up now") {
		t.Fatalf("the form is not back as typed, with the error:\n%s", scr)
	}
	h.key("enter")
	if h.sentCount() != before+1 {
		t.Errorf("enter on the failed form sent again")
	}
	h.key("esc")
	if h.m.focus.mode != keymap.ModeList {
		t.Errorf("esc did not close it: %v", h.m.focus.mode)
	}
}

// TestIncomingAbandonedIDUsedAgainIsNotAnswered: question 1 is abandoned
// (its call ended first) while its form is still open, so the client
// still holds ID 1 and does not hand a second request under it to Serve.
// The tracker makes the second not_answered (not waiting), and enter on
// its row does not open the first question's form.
func TestIncomingAbandonedIDUsedAgainIsNotAnswered(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id1 := h.sendTool("confirm")
	h.legacyAsk(wire.IntID(1), wire.MethodElicitationCreate, legacyConfirm)
	h.answer(id1, `{"content":[{"type":"text","text":"went ahead"}]}`)
	h.sendTool("later")
	// The client read the second request (Received) and gave it no answer
	// (serverCalls[1] still open): no questionMsg.
	second := `{"message":"Second question: wipe the disk?","requestedSchema":{"type":"object","properties":{}}}`
	raw := wire.Request(wire.IntID(1), wire.MethodElicitationCreate, json.RawMessage(second))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(1), Raw: raw, Msg: msg, Internal: true})
	all := h.m.tracker.ServerRequests()
	s2 := all[len(all)-1]
	if s2.State != session.ServerNotAnswered {
		t.Errorf("the second request under ID 1 is %s; the client will never answer it", s2.State)
	}
	h.m.screens.list = h.m.screens.list.SelectIncoming(h.m.tracker, s2)
	h.key("enter")
	if h.m.focus.mode == keymap.ModeAnswer && strings.Contains(h.screen(), "Confirm deletion") {
		t.Errorf("enter on the second question's row opened the first question's form:\n%s", h.screen())
	}
}

// TestIncomingAbandonedThenAnsweredSaysAnswered: the question's request
// ended first, the user answered it anyway (the form allows it) and the
// answer went out: the question is answered, no longer abandoned.
func TestIncomingAbandonedThenAnsweredSaysAnswered(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id := h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(5), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a")
	h.answer(id, `{"content":[{"type":"text","text":"went ahead"}]}`)
	h.key("space", "enter")
	<-q.reply
	h.legacyAnswered(wire.IntID(5), `{"action":"accept","content":{"confirm":true}}`)
	if s := q.record(h.m.tracker); s.State != session.ServerAnswered {
		t.Errorf("inflight's answer went out; the question says %s", s.State)
	}
}

// TestFormQuestionTiedToItsOwnRecord: the server withdraws its question 7
// and asks a new one under ID 7 (read later); Serve hands the new question
// to the UI before the event batch carrying the withdrawal is applied
// (two channels, no order between them), and a frame is drawn meanwhile.
// The new question is not tied to the old record (its read time is not
// the old one's), so the withdrawal leaves it queued, to be answered.
func TestFormQuestionTiedToItsOwnRecord(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("withdrawn")
	h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	h.advance(10 * time.Millisecond) // the new question is read later
	second := `{"message":"A new question","requestedSchema":{"type":"object","properties":{}}}`
	q2 := &serverQuestion{id: wire.IntID(7), method: wire.MethodElicitationCreate, params: json.RawMessage(second), at: h.now, reply: make(chan serverReply, 1)}
	h.key("home") // the user is on another row
	h.m.Update(questionMsg{kind: questionAsked, q: q2})
	_ = h.screen() // a frame is drawn
	h.legacyWithdrawn(7, "too slow")
	raw := wire.Request(wire.IntID(7), wire.MethodElicitationCreate, json.RawMessage(second))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(7), Raw: raw, Msg: msg, Internal: true})
	if !h.m.questions.has(q2) {
		t.Errorf("the new question under ID 7 left the queue with the old one's withdrawal")
	}
}
