package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/wire"
)

// legacyAnswered reports inflight's answer to the server's request id,
// as the client reports what it wrote.
func (h *harness) legacyAnswered(serverID wire.ID, result string) {
	h.t.Helper()
	raw := wire.ResultResponse(serverID, json.RawMessage(result))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: serverID, Raw: raw, Msg: msg, Internal: true})
}

// legacyWithdrawn is the server's notifications/cancelled of its own
// request id.
func (h *harness) legacyWithdrawn(serverID int, reason string) {
	h.t.Helper()
	raw := wire.Notification(wire.NotifyCancelled, json.RawMessage(fmt.Sprintf(`{"requestId":%d,"reason":%q}`, serverID, reason)))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, Raw: raw, Msg: msg, Internal: true})
}

// rowIndex is the screen line holding text, -1 when none does.
func rowIndex(scr, text string) int {
	for i, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, text) {
			return i
		}
	}
	return -1
}

// TestIncomingRowNestedUnderItsRequest: a legacy server's question is a
// row of its own, right under the request it is tied to, marked incoming,
// and its ELAPSED runs until it ends.
func TestIncomingRowNestedUnderItsRequest(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("confirm")
	h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	h.sendTool("slow") // a later request: the question stays under its own
	h.advance(1500 * time.Millisecond)
	scr := h.screen()
	parent, row, later := rowIndex(scr, " confirm "), rowIndex(scr, "└ ↘ elicitation/create"), rowIndex(scr, " slow ")
	if parent < 0 || row != parent+1 || later != row+1 {
		t.Fatalf("rows at %d, %d, %d, want the question right under its request:\n%s", parent, row, later, scr)
	}
	line := strings.Split(scr, "\n")[row]
	for _, want := range []string{"? waiting", "1.5s", "waiting for you", `"Confirm deletion of 3 files?"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the row lacks %q: %s", want, line)
		}
	}
	if !strings.Contains(scr, "? 1 waiting for you") {
		t.Errorf("the header does not count it:\n%s", scr)
	}
	h.legacyAnswered(wire.IntID(7), `{"action":"decline"}`)
	h.advance(3 * time.Second)
	line = strings.Split(h.screen(), "\n")[row]
	if !strings.Contains(line, "✗ declined") || !strings.Contains(line, "1.5s") || !strings.Contains(line, "declined after 1.5s") {
		t.Errorf("after the decline its elapsed still runs, or the state is wrong: %s", line)
	}
	if strings.Contains(h.screen(), "waiting for you ·") {
		t.Errorf("still counted as waiting:\n%s", h.screen())
	}
}

// TestIncomingRowUntied: with two requests in flight on stdio the
// tracker cannot tie the question: its row is top-level where it came,
// and its detail says how many were in flight.
func TestIncomingRowUntied(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("slow")
	h.sendTool("confirm")
	h.advance(time.Second)
	h.legacyAsk(wire.IntID(3), wire.MethodElicitationCreate, legacyConfirm)
	h.advance(time.Second)
	h.sendTool("later")
	scr := h.screen()
	row := rowIndex(scr, "↘ elicitation/create ?")
	if row < 0 || rowIndex(scr, " confirm ") != row-1 || rowIndex(scr, " later ") != row+1 || strings.Contains(scr, "└ ↘") {
		t.Fatalf("the untied question is not a top-level row where it came:\n%s", scr)
	}
	if !strings.Contains(strings.Split(scr, "\n")[row], "not tied") {
		t.Errorf("the row does not say it is untied:\n%s", scr)
	}
	h.key("up")
	if h.m.screens.list.Incoming() == nil {
		t.Fatalf("selection is not the question: %v", h.m.screens.list.Selected())
	}
	h.m.screens.openDetail(&h.m.focus, h.m.tracker, h.m.size.width, h.m.chrome().bodyHeight(h.m.size.height))
	h.layoutNow()
	scr = h.screen()
	for _, want := range []string{"↘ elicitation/create from the server (its ID 3)", "not tied to a request: 2 were in flight when it came", "TIMELINE", "arrived", "PARAMS", "Confirm deletion of 3 files?"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the detail lacks %q:\n%s", want, scr)
		}
	}
}

// layoutNow lays the model out as Update does after a call made outside
// it.
func (h *harness) layoutNow() { h.m.layout() }

// TestIncomingEnterAnswersThatQuestion: with two questions open, enter
// on the second's row opens the form on that very question, and a opens
// it from its detail; c on a question's row declines it and leaves its
// request alone.
func TestIncomingEnterAnswersThatQuestion(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id := h.sendTool("confirm")
	h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	q2 := h.legacyAsk(wire.IntID(8), wire.MethodElicitationCreate, `{"message":"And the backups?","requestedSchema":{"type":"object","properties":{}}}`)
	h.key("end", "down", "down")
	if h.m.screens.list.Incoming() == nil || h.m.screens.list.Incoming().ID != wire.IntID(8) {
		t.Fatalf("selected %v / %v, want the second question", h.m.screens.list.Selected(), h.m.screens.list.Incoming())
	}
	h.key("enter")
	if h.m.focus.mode != keymap.ModeAnswer || h.m.answering.form.Legacy() != q2 || !strings.Contains(h.screen(), "And the backups?") {
		t.Fatalf("the form is not on the second question:\n%s", h.screen())
	}
	h.key("ctrl+o")
	if h.m.focus.mode != keymap.ModeDetail || h.m.screens.incoming.Request() == nil || h.m.screens.incoming.Request().ID != wire.IntID(8) {
		t.Fatalf("ctrl+o did not show the question's own detail: mode %v", h.m.focus.mode)
	}
	h.key("a")
	if h.m.focus.mode != keymap.ModeAnswer || h.m.answering.form.Legacy() != q2 {
		t.Fatalf("a in the question's detail did not open its form")
	}
	h.key("esc", "esc")
	h.key("end", "down", "down", "up") // the first question
	_, before := h.fake.calls()
	h.key("c")
	if _, after := h.fake.calls(); after != before {
		t.Errorf("c on the question cancelled its request")
	}
	if r := h.request(id); r.State.IsFinal() || r.State == session.StateCancelRequested {
		t.Errorf("request %s", r.State)
	}
	if !strings.Contains(h.screen(), "declined (c on a question declines it") {
		t.Errorf("status does not say what c did:\n%s", h.screen())
	}
	for _, k := range []string{"r", "E"} {
		h.key(k)
		if !strings.Contains(h.screen(), "only inflight's own requests can be re-issued") {
			t.Errorf("%s on a question says nothing:\n%s", k, h.screen())
		}
	}
	if h.sentCount() != 2 {
		t.Errorf("sent %d requests, want the two of the test", h.sentCount())
	}
}

// TestIncomingFilterAndClear: f's in flight keeps a question waiting
// (and its request); x clears an ended question only with its request.
func TestIncomingFilterAndClear(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id := h.sendTool("confirm")
	h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	h.key("f")
	if scr := h.screen(); !strings.Contains(scr, "└ ↘ elicitation/create") || !strings.Contains(scr, " confirm ") || strings.Contains(scr, "tools/list") ||
		!strings.Contains(scr, "list: in flight — 1 request ") {
		t.Fatalf("in flight does not show the waiting question under its request:\n%s", scr)
	}
	h.key("f", "f", "f") // back to all
	h.legacyAnswered(wire.IntID(7), `{"action":"accept","content":{"confirm":true}}`)
	h.key("x")
	if scr := h.screen(); !strings.Contains(scr, "└ ↘ elicitation/create") || strings.Contains(scr, "tools/list") {
		t.Fatalf("x cleared the answered question while its request runs, or kept tools/list:\n%s", scr)
	}
	h.answer(id, `{"content":[{"type":"text","text":"deleted"}]}`)
	h.key("x", "x") // show again, then clear all that finished
	if scr := h.screen(); strings.Contains(scr, "↘ elicitation") {
		t.Fatalf("an orphan question row stayed after its request was cleared:\n%s", scr)
	}
}

// TestIncomingWithdrawnShowsTheReason: a question the server cancels
// itself reads "cancelled by the server" with the cancel's reason.
func TestIncomingWithdrawnShowsTheReason(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("withdrawn")
	h.legacyAsk(wire.IntID(9), wire.MethodElicitationCreate, legacyConfirm)
	h.advance(3 * time.Second)
	h.legacyWithdrawn(9, "no answer within 3s")
	scr := h.screen()
	if !strings.Contains(scr, "⊗ withdrawn") || !strings.Contains(scr, "cancelled by the server after 3.0s: no answer within 3s") {
		t.Fatalf("the row does not tell the withdrawal:\n%s", scr)
	}
}

// TestWaitingInputIsNotInFlight: a modern request waiting for the user
// has nothing on the wire: the header counts it as waiting for you.
func TestWaitingInputIsNotInFlight(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	h.waitingConfirm()
	head := strings.Split(h.screen(), "\n")[1]
	if !strings.Contains(head, "0 in flight") || !strings.Contains(head, "? 1 waiting for you") {
		t.Errorf("header: %s", head)
	}
}

func TestGoldenIncomingRows(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		build := func(t *testing.T) *harness {
			h := newAnswerHarness(t, size.w, size.h, event.EraLegacy)
			h.sendTool("confirm")
			h.advance(200 * time.Millisecond)
			h.legacyAsk(wire.IntID(1), wire.MethodElicitationCreate, legacyConfirm)
			h.advance(1200 * time.Millisecond)
			h.legacyAnswered(wire.IntID(1), `{"action":"accept","content":{"confirm":true}}`)
			h.legacyAsk(wire.IntID(2), wire.MethodSamplingCreate, `{"messages":[{"role":"user","content":{"type":"text","text":"Name the capital of France"}}],"maxTokens":10}`)
			h.sendTool("withdrawn")
			h.legacyAsk(wire.IntID(3), wire.MethodElicitationCreate, legacyConfirm)
			h.advance(3 * time.Second)
			h.legacyWithdrawn(3, "no answer within 3s")
			h.legacyAsk(wire.IntID(4), wire.MethodElicitationCreate, `{"message":"Which branch?","requestedSchema":{"type":"object","properties":{}}}`)
			h.advance(700 * time.Millisecond)
			return h
		}
		t.Run("rows-"+suffix, func(t *testing.T) {
			h := build(t)
			h.golden()
		})
		t.Run("detail-"+suffix, func(t *testing.T) {
			h := build(t)
			h.key("end", "down")
			h.key("enter")
			if h.m.focus.mode != keymap.ModeAnswer {
				t.Fatalf("enter on a waiting question did not open the form")
			}
			h.key("esc")
			h.m.screens.openDetail(&h.m.focus, h.m.tracker, h.m.size.width, h.m.chrome().bodyHeight(h.m.size.height))
			h.layoutNow()
			h.golden()
		})
		t.Run("detail-tied-"+suffix, func(t *testing.T) {
			h := build(t)
			h.key("home", "down", "down") // confirm's answered question
			h.key("enter")
			h.golden()
		})
		t.Run("not-sent-form-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraLegacy)
			h.sendTool("confirm")
			q := h.legacyAsk(wire.IntID(1), wire.MethodElicitationCreate, legacyConfirm)
			h.key("a", "space", "enter")
			<-q.reply
			h.m.Update(questionMsg{kind: questionNotSent, q: q, err: errors.New("POST response: dial tcp 127.0.0.1:18732: connect: connection refused")})
			h.layoutNow()
			h.golden()
		})
	}
}

// TestIncomingSelectionStaysOnAnUntiedRow: with the clock frozen (every
// request begun at the same instant as the question), an untied row the
// user selected keeps the selection through later updates.
func TestIncomingSelectionStaysOnAnUntiedRow(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("slow")
	h.sendTool("confirm")
	h.legacyAsk(wire.IntID(3), wire.MethodElicitationCreate, legacyConfirm)
	h.sendTool("later")
	h.sendTool("latest")
	h.key("end", "up", "up")
	if s := h.m.screens.list.Incoming(); s == nil || s.ID != wire.IntID(3) {
		t.Fatalf("selected %v, want the untied question", h.m.screens.list.Selected())
	}
	h.advance(time.Second)
	h.sendTool("more") // not following: the selection stays
	if s := h.m.screens.list.Incoming(); s == nil || s.ID != wire.IntID(3) {
		t.Fatalf("the selection left the untied question: %v", h.m.screens.list.Selected())
	}
	if pos, ok := h.m.screens.list.SelectedPos(h.m.tracker); !ok || h.m.screens.list.IncomingAt(pos) == nil {
		t.Fatalf("the selected row is not found among the rows shown")
	}
}

// TestIncomingDetailSaysHowManyWereDropped: a flood of the server's
// requests during one call (each refused at once): the call's detail
// lists the ones kept and says how many older ones are not.
func TestIncomingDetailSaysHowManyWereDropped(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id := h.sendTool("flood")
	var evs []event.Event
	for i := 1; i <= 1010; i++ {
		raw := wire.Request(wire.IntID(int64(i)), wire.MethodElicitationCreate, json.RawMessage(`{"message":"again?"}`))
		msg, _ := wire.Decode(raw)
		evs = append(evs, event.Event{Kind: event.Received, RequestID: msg.ID, Raw: raw, Msg: msg, Internal: true})
		raw = wire.ErrorResponse(msg.ID, wire.CodeInternalError, "refused")
		msg, _ = wire.Decode(raw)
		evs = append(evs, event.Event{Kind: event.Sent, RequestID: msg.ID, Raw: raw, Msg: msg, Internal: true})
	}
	h.events(evs...)
	h.m.screens.list = h.m.screens.list.Select(wire.IntID(id), h.m.screens.list.Following())
	h.m.screens.openDetail(&h.m.focus, h.m.tracker, h.m.size.width, h.m.chrome().bodyHeight(h.m.size.height))
	h.layoutNow()
	if scr := h.screen(); !strings.Contains(scr, "… 10 older ones that had ended are not kept; these 1000 are the open ones and the newest") {
		t.Errorf("the detail does not say how many were dropped:\n%s", scr)
	}
}

// TestIncomingEndFollowsWithANestedLastRow: the newest request has a
// question nested under it, so the list's last row is the question. End
// ("newest (follow)") selects that row and follows: the next event keeps
// it selected, and the next request is selected when it comes.
func TestIncomingEndFollowsWithANestedLastRow(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("confirm")
	h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	h.key("home", "end")
	h.events(event.Event{Kind: event.Stderr, Text: "working"})
	if s := h.m.screens.list.Incoming(); s == nil || s.ID != wire.IntID(7) {
		t.Fatalf("after End and an event, the question is not selected: selected %v", h.m.screens.list.Selected())
	}
	id := h.sendTool("later")
	if h.m.screens.list.Selected() != wire.IntID(id) || h.m.screens.list.Incoming() != nil {
		t.Errorf("after End, a new request is not followed: selected %v srv %v", h.m.screens.list.Selected(), h.m.screens.list.Incoming() != nil)
	}
}

// TestIncomingClearedCountsRequests: x hides three finished requests and
// one untied question; the list's header says "N of M · K cleared" in
// requests, so K counts the three requests and not the question (seen in
// tmux: "all 1 of 7 · 9 cleared").
func TestIncomingClearedCountsRequests(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	a := h.sendTool("slow")
	b := h.sendTool("confirm")
	h.legacyAsk(wire.IntID(3), wire.MethodElicitationCreate, legacyConfirm)
	h.legacyAnswered(wire.IntID(3), `{"action":"decline"}`)
	h.answer(a, `{"content":[]}`)
	h.answer(b, `{"content":[]}`)
	h.sendTool("later")
	h.key("x")
	head := strings.Split(h.screen(), "\n")[1]
	if !strings.Contains(head, "1 of 4 · 3 cleared") {
		t.Errorf("header: %s", head)
	}
}

// TestIncomingUntiedRowVanishingKeepsItsPlace: under f's in flight, the
// selected untied question is answered and leaves the list: the selection
// goes to the row after it (as for a request), not to the newest row.
func TestIncomingUntiedRowVanishingKeepsItsPlace(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("slow")
	h.sendTool("confirm")
	h.legacyAsk(wire.IntID(3), wire.MethodElicitationCreate, legacyConfirm)
	next := h.sendTool("next")
	for i := 0; i < 5; i++ {
		h.sendTool("more")
	}
	h.key("f") // in flight
	h.key("home", "down", "down")
	if s := h.m.screens.list.Incoming(); s == nil || s.ID != wire.IntID(3) {
		t.Fatalf("selected %v, want the untied question", h.m.screens.list.Selected())
	}
	h.legacyAnswered(wire.IntID(3), `{"action":"decline"}`)
	if h.m.screens.list.Incoming() != nil || h.m.screens.list.Selected() != wire.IntID(next) {
		t.Errorf("after the question left, selected %v (srv %v), want #%d, the row after it", h.m.screens.list.Selected(), h.m.screens.list.Incoming() != nil, next)
	}
}

// TestIncomingUntiedRowVanishingGoesToTheNextQuestion: two untied
// questions came one after the other; the first, selected, is answered
// and leaves the in-flight list: the selection goes to the second, the
// row after it.
func TestIncomingUntiedRowVanishingGoesToTheNextQuestion(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("slow")
	h.sendTool("confirm")
	h.legacyAsk(wire.IntID(3), wire.MethodElicitationCreate, legacyConfirm)
	h.advance(time.Millisecond)
	h.legacyAsk(wire.IntID(4), wire.MethodElicitationCreate, legacyConfirm)
	for i := 0; i < 5; i++ {
		h.sendTool("more")
	}
	h.key("f") // in flight
	h.key("home", "down", "down")
	if s := h.m.screens.list.Incoming(); s == nil || s.ID != wire.IntID(3) {
		t.Fatalf("selected %v, want the first untied question", h.m.screens.list.Selected())
	}
	h.legacyAnswered(wire.IntID(3), `{"action":"decline"}`)
	if s := h.m.screens.list.Incoming(); s == nil || s.ID != wire.IntID(4) {
		t.Errorf("after the first question left, selected %v (srv %v), want the second question", h.m.screens.list.Selected(), s != nil)
	}
}

// TestIncomingEnterOnAnotherRowOpensItsDetail: with an untied question
// open, enter on the finished tools/list row (nothing of its own waits)
// opens tools/list's detail, not the question's form: an untied question
// is answered from its own row.
func TestIncomingEnterOnAnotherRowOpensItsDetail(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("slow")
	confirm := h.sendTool("confirm")
	h.legacyAsk(wire.IntID(3), wire.MethodElicitationCreate, legacyConfirm)
	h.key("home") // #1 tools/list, completed
	h.key("enter")
	if h.m.focus.mode != keymap.ModeDetail {
		t.Errorf("enter on tools/list: mode %v, want its detail:\n%s", h.m.focus.mode, h.screen())
	}
	h.key("esc", "down", "down") // confirm, in flight; the question is tied to none
	if h.m.screens.list.Incoming() != nil || h.m.screens.list.Selected() != wire.IntID(confirm) {
		t.Fatalf("selected %v, want #%d", h.m.screens.list.Selected(), confirm)
	}
	h.key("a")
	if h.m.focus.mode == keymap.ModeAnswer {
		t.Errorf("a on confirm's row opened the untied question's form")
	}
	h.key("end", "enter") // the question's own row
	if h.m.focus.mode != keymap.ModeAnswer || h.m.answering.form.Legacy() == nil {
		t.Errorf("enter on the untied question's row: mode %v", h.m.focus.mode)
	}
}
