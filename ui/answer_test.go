package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// newAnswerHarness is newHarness as the TUI runs: conversations held
// (Converse), roots from --root, a legacy server's questions handed over.
func newAnswerHarness(t testing.TB, w, h int, era event.Era) *harness {
	t.Helper()
	hs := &harness{t: t, fake: newFake(), now: t0}
	if era == event.EraLegacy {
		hs.fake.info.Era, hs.fake.info.ProtocolVersion = event.EraLegacy, wire.Version20251125
	}
	cfg := session.DefaultConfig()
	cfg.Converse = true
	roots := json.RawMessage(`{"roots":[{"uri":"file:///work/project","name":"project"}]}`)
	m, err := New(Options{
		Target: "demo (stdio)", Transport: "stdio",
		Dial:      func() (Client, error) { return hs.fake, nil },
		Tracker:   cfg,
		Now:       func() time.Time { return hs.now },
		Dark:      true,
		Roots:     roots,
		Questions: NewQuestions(roots, time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		hs.ticks = append(hs.ticks, d)
		return nil
	}
	m.conn.wait = func(<-chan event.Event, int) tea.Cmd { return nil }
	hs.m = m
	// Init's commands, but for the one that waits for questions: the
	// tests hand questions to Update themselves.
	q := m.opts.Questions
	m.opts.Questions = nil
	hs.run(m.Init())
	m.opts.Questions = q
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.connect()
	return hs
}

const confirmAsked = `{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Confirm deletion of 3 files?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","title":"Delete them","default":false},"note":{"type":"string","description":"Why","default":"tidy up"},"count":{"type":"integer","default":3},"colour":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}},"required":["confirm"]}}}},"requestState":"opaque<&>\u0000state"}`

// lastRound is the request the UI last asked the client to send.
func (h *harness) lastRound() (wire.ID, map[string]json.RawMessage) {
	h.t.Helper()
	h.fake.mu.Lock()
	defer h.fake.mu.Unlock()
	if len(h.fake.sent) == 0 {
		h.t.Fatal("nothing sent")
	}
	r := h.fake.sent[len(h.fake.sent)-1]
	var p map[string]json.RawMessage
	if err := json.Unmarshal(r.Params, &p); err != nil {
		h.t.Fatalf("params %s: %v", r.Params, err)
	}
	return r.ID, p
}

func (h *harness) sentCount() int {
	n, _ := h.fake.calls()
	return n
}

func (h *harness) waitingConfirm() int64 {
	h.t.Helper()
	id := h.sendTool("confirm")
	h.advance(200 * time.Millisecond)
	h.answer(id, confirmAsked)
	if r := h.request(id); r.State != session.StateWaitingInput {
		h.t.Fatalf("state %s, want waiting_input", r.State)
	}
	return id
}

func TestAnswerRowIsOneRowWaitingForYou(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	h.waitingConfirm()
	scr := h.screen()
	if !strings.Contains(scr, `? waiting`) || !strings.Contains(scr, `for you · round 1 · elicitation "Confirm deletion of 3 files?"`) {
		t.Fatalf("the row does not say it waits for you:\n%s", scr)
	}
	if !strings.Contains(scr, "a answer") {
		t.Errorf("the footer does not offer a:\n%s", scr)
	}
	if strings.Count(scr, "confirm") != 1 {
		t.Errorf("want one row for the conversation:\n%s", scr)
	}
}

func TestAnswerElicitationAcceptSendsTheNextRound(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.waitingConfirm()
	before := h.sentCount()
	h.key("enter")
	if h.m.focus.mode != keymap.ModeAnswer {
		t.Fatalf("enter on a waiting row: mode %v, want the answer form", h.m.focus.mode)
	}
	scr := h.screen()
	for _, want := range []string{"Confirm deletion of 3 files?", "tidy up", "one of: r = Red, g = Green", "ctrl+d decline"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the form lacks %q:\n%s", want, scr)
		}
	}
	// confirm (required, a checkbox) is first; toggle it.
	h.key("space")
	if h.sentCount() != before {
		t.Fatal("the form sent something before enter")
	}
	h.key("enter")
	if h.m.focus.mode == keymap.ModeAnswer {
		t.Fatalf("the form is still open: %s", h.m.answering.form.Err())
	}
	nid, p := h.lastRound()
	if nid == wire.IntID(id) || h.sentCount() != before+1 {
		t.Fatalf("the next round must go out once under a new ID, got %s", nid)
	}
	if got := string(p["requestState"]); got != `"opaque<&>\u0000state"` {
		t.Errorf("requestState not echoed exactly: %s", got)
	}
	var ir map[string]struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(p["inputResponses"], &ir); err != nil {
		t.Fatal(err)
	}
	c := ir["confirm"]
	if c.Action != "accept" || string(c.Content["confirm"]) != "true" || string(c.Content["note"]) != `"tidy up"` || string(c.Content["count"]) != "3" {
		t.Errorf("answer %s", p["inputResponses"])
	}
	if _, ok := c.Content["colour"]; ok {
		t.Errorf("an empty optional field was sent: %s", p["inputResponses"])
	}
	r := h.request(id)
	if r.State != session.StatePending || r.Round() != 2 || r.ID != nid {
		t.Errorf("after the answer: %s round %d id %s", r.State, r.Round(), r.ID)
	}
}

func TestAnswerDeclineAndCancelAreDistinct(t *testing.T) {
	for _, tc := range []struct{ key, action string }{{"ctrl+d", "decline"}, {"ctrl+x", "cancel"}} {
		t.Run(tc.action, func(t *testing.T) {
			h := newAnswerHarness(t, 80, 24, event.EraModern)
			h.waitingConfirm()
			h.key("a", tc.key)
			_, p := h.lastRound()
			want := fmt.Sprintf(`{"confirm":{"action":%q}}`, tc.action)
			if string(p["inputResponses"]) != want {
				t.Errorf("got %s, want %s", p["inputResponses"], want)
			}
		})
	}
}

func TestAnswerDetailShowsEveryRound(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.waitingConfirm()
	h.key("a", "ctrl+d")
	nid, _ := h.lastRound()
	h.key("enter")
	scr := h.screen()
	for _, want := range []string{"CONVERSATION (2 rounds)", fmt.Sprintf("round 1  #%d", id), "round 2  #" + nid.String(),
		"requestState: 22 opaque bytes", "confirm decline"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the detail lacks %q:\n%s", want, scr)
		}
	}
}

func TestAnswerEscLeavesItWaiting(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.waitingConfirm()
	before := h.sentCount()
	h.key("a", "esc")
	if h.m.focus.mode != keymap.ModeList || h.sentCount() != before || h.request(id).State != session.StateWaitingInput {
		t.Fatalf("esc: mode %v, sent %d, state %s", h.m.focus.mode, h.sentCount()-before, h.request(id).State)
	}
	h.key("a")
	if h.m.focus.mode != keymap.ModeAnswer {
		t.Fatal("a does not open the form again")
	}
}

func TestAnswerRequiredFieldIsChecked(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.sendTool("confirm")
	h.answer(id, `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]}}}}}`)
	before := h.sentCount()
	h.key("a", "enter")
	if h.sentCount() != before || !strings.Contains(h.screen(), "name is required") {
		t.Fatalf("an empty required field was sent:\n%s", h.screen())
	}
	h.typeText("Ada")
	h.key("tab")
	h.typeText("x")
	h.key("enter")
	if !strings.Contains(h.screen(), `"x" is not an integer`) {
		t.Fatalf("a bad integer was not caught:\n%s", h.screen())
	}
	h.key("backspace")
	h.typeText("36")
	h.key("enter")
	_, p := h.lastRound()
	if got := string(p["inputResponses"]); got != `{"q":{"action":"accept","content":{"age":36,"name":"Ada"}}}` {
		t.Errorf("got %s", got)
	}
}

const sampleAsked = `{"resultType":"input_required","inputRequests":{"capital":{"method":"sampling/createMessage","params":{"systemPrompt":"You are helpful.","messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"modelPreferences":{"hints":[{"name":"claude"}],"intelligencePriority":0.8},"maxTokens":100}},"where":{"method":"roots/list"}},"requestState":"s1"}`

func TestAnswerSamplingReplyAndRootsTogether(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.sendTool("sample")
	h.answer(id, sampleAsked)
	if !strings.Contains(h.screen(), `sampling "What is the capital of France?"`) {
		t.Fatalf("row:\n%s", h.screen())
	}
	h.key("enter")
	scr := h.screen()
	for _, want := range []string{"user: What is the capital of France?", "system: You are helpful.", "hints claude · intelligence 0.8 · max 100 tokens"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the sampling form lacks %q:\n%s", want, scr)
		}
	}
	before := h.sentCount()
	h.key("enter")
	if h.sentCount() != before {
		t.Fatal("an empty reply was sent")
	}
	h.typeText("Paris.")
	h.key("enter")
	_, p := h.lastRound()
	var ir map[string]json.RawMessage
	_ = json.Unmarshal(p["inputResponses"], &ir)
	if !strings.Contains(string(ir["capital"]), `"text":"Paris."`) || !strings.Contains(string(ir["capital"]), `"role":"assistant"`) {
		t.Errorf("sampling answer %s", ir["capital"])
	}
	if string(ir["where"]) != `{"roots":[{"uri":"file:///work/project","name":"project"}]}` {
		t.Errorf("roots answer %s", ir["where"])
	}
}

func TestAnswerSamplingDeclineEndsTheConversation(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.sendTool("sample")
	h.answer(id, sampleAsked)
	before := h.sentCount()
	h.key("a", "ctrl+d")
	r := h.request(id)
	if h.sentCount() != before || r.State != session.StateInputRequired || !strings.Contains(r.Conv.Stopped, "declined capital") {
		t.Fatalf("sent %d, state %s, stopped %q", h.sentCount()-before, r.State, r.Conv.Stopped)
	}
}

func TestAnswerRootsOnlyWithoutAPrompt(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.sendTool("roots")
	before := h.sentCount()
	h.answer(id, `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`)
	if h.m.focus.mode == keymap.ModeAnswer || h.sentCount() != before+1 {
		t.Fatalf("roots: mode %v, sent %d", h.m.focus.mode, h.sentCount()-before)
	}
	_, p := h.lastRound()
	if string(p["inputResponses"]) != `{"r":{"roots":[{"uri":"file:///work/project","name":"project"}]}}` {
		t.Errorf("got %s", p["inputResponses"])
	}
	if _, ok := p["requestState"]; ok {
		t.Error("a requestState the server never gave was sent")
	}
}

func TestAnswerCancelWhileWaitingSendsNothing(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.waitingConfirm()
	sent, cancels := h.fake.calls()
	h.key("c")
	s2, c2 := h.fake.calls()
	if s2 != sent || c2 != cancels {
		t.Fatalf("c while waiting sent %d requests and %d cancels", s2-sent, c2-cancels)
	}
	if r := h.request(id); r.State != session.StateCancelled {
		t.Errorf("state %s", r.State)
	}
	scr := h.screen()
	if !strings.Contains(scr, "no request in flight; the conversation was dropped") {
		t.Errorf("the status does not say so:\n%s", scr)
	}
}

// legacyAsk delivers a legacy server's elicitation/create as the client
// reports it (an internal Received request) and hands it to the UI as
// Serve would; it returns the question, whose reply the test reads.
func (h *harness) legacyAsk(serverID wire.ID, method, params string) *serverQuestion {
	h.t.Helper()
	raw := wire.Request(serverID, method, json.RawMessage(params))
	msg, err := wire.Decode(raw)
	if err != nil {
		h.t.Fatal(err)
	}
	h.events(event.Event{Kind: event.Received, RequestID: serverID, Raw: raw, Msg: msg, Internal: true})
	q := &serverQuestion{id: serverID, method: method, params: json.RawMessage(params), at: h.now, reply: make(chan serverReply, 1)}
	h.m.Update(questionMsg{kind: questionAsked, q: q}) // its command waits for the next question: not run
	return q
}

const legacyConfirm = `{"message":"Confirm deletion of 3 files?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","title":"Delete them"}},"required":["confirm"]}}`

func TestAnswerLegacyServerRequest(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	id := h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	scr := h.screen()
	if !strings.Contains(scr, "↘ elicitation/create from the server · waiting for you") {
		t.Fatalf("the row does not show the server's question:\n%s", scr)
	}
	if h.m.screens.list.Selected() != wire.IntID(id) {
		t.Fatalf("selected %s", h.m.screens.list.Selected())
	}
	h.key("enter")
	if h.m.focus.mode != keymap.ModeAnswer || !strings.Contains(h.screen(), "from the server (its ID 7)") {
		t.Fatalf("the form is not open on the server's question:\n%s", h.screen())
	}
	h.key("space", "enter")
	select {
	case r := <-q.reply:
		if string(r.result) != `{"action":"accept","content":{"confirm":true}}` || r.err != nil {
			t.Errorf("reply %s %v", r.result, r.err)
		}
	default:
		t.Fatal("no reply reached the handler")
	}
	if h.m.questions.len() != 0 || h.m.focus.mode != keymap.ModeList {
		t.Errorf("questions %d, mode %v", h.m.questions.len(), h.m.focus.mode)
	}
}

func TestAnswerLegacySamplingDeclineIsTheError(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraLegacy)
	h.sendTool("sample")
	q := h.legacyAsk(wire.IntID(8), wire.MethodSamplingCreate, `{"messages":[{"role":"user","content":{"type":"text","text":"Hi?"}}],"maxTokens":10}`)
	h.key("a", "ctrl+d")
	r := <-q.reply
	if r.err == nil || r.err.Code != wire.CodeUserRejected || r.result != nil {
		t.Errorf("reply %s %+v", r.result, r.err)
	}
}

func TestAnswerLegacyWithdrawnClosesTheForm(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraLegacy)
	h.sendTool("withdrawn")
	q := h.legacyAsk(wire.IntID(9), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a")
	if h.m.focus.mode != keymap.ModeAnswer {
		t.Fatal("form not open")
	}
	raw := wire.Notification(wire.NotifyCancelled, json.RawMessage(`{"requestId":9,"reason":"no answer within 3s"}`))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, Raw: raw, Msg: msg, Internal: true})
	if st := q.lastState(h.m.tracker); st != session.ServerWithdrawn {
		t.Fatalf("the tracker has the question %s", st)
	}
	h.m.Update(questionMsg{kind: questionWithdrawn, q: q})
	if h.m.focus.mode == keymap.ModeAnswer || h.m.questions.len() != 0 {
		t.Fatalf("the form stayed open: mode %v", h.m.focus.mode)
	}
	if !strings.Contains(h.screen(), "the server withdrew this question") {
		t.Errorf("status:\n%s", h.screen())
	}
}

func TestAnswerLegacyCancelDeclinesAfterTheCancel(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraLegacy)
	id := h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	_, c0 := h.fake.calls()
	_, cmd := h.m.Update(keyMsg("c"))
	select {
	case <-q.reply:
		t.Fatal("declined before the cancel went out")
	default:
	}
	// The command sends the cancel, then declines.
	h.run(cmd)
	_, c1 := h.fake.calls()
	if c1 != c0+1 || h.fake.cancels[len(h.fake.cancels)-1] != wire.IntID(id) {
		t.Fatalf("cancels %d", c1-c0)
	}
	select {
	case r := <-q.reply:
		if string(r.result) != `{"action":"decline"}` {
			t.Errorf("reply %s", r.result)
		}
	default:
		t.Fatal("the server's question was not declined")
	}
}

func TestQuestionsServe(t *testing.T) {
	q := NewQuestions(nil, 200*time.Millisecond)
	if res, err := q.Serve(context.Background(), wire.MethodRootsList, nil); err != nil || string(res) != `{"roots":[]}` {
		t.Fatalf("roots %s %v", res, err)
	}
	// Answered by the UI.
	done := make(chan serverReply, 1)
	go func() {
		res, err := q.Serve(context.Background(), wire.MethodElicitationCreate, json.RawMessage(`{}`))
		done <- serverReply{res, err}
	}()
	msg := <-q.ch
	msg.q.reply <- serverReply{result: json.RawMessage(`{"action":"accept"}`)}
	if r := <-done; string(r.result) != `{"action":"accept"}` {
		t.Errorf("got %s", r.result)
	}
	// Withdrawn by the server: the UI hears of it.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		res, err := q.Serve(ctx, wire.MethodElicitationCreate, json.RawMessage(`{}`))
		done <- serverReply{res, err}
	}()
	<-q.ch
	cancel()
	if m := <-q.ch; m.kind != questionWithdrawn {
		t.Errorf("kind %v", m.kind)
	}
	<-done
	// Nobody answers: bounded.
	go func() {
		res, err := q.Serve(context.Background(), wire.MethodSamplingCreate, json.RawMessage(`{}`))
		done <- serverReply{res, err}
	}()
	<-q.ch
	if m := <-q.ch; m.kind != questionExpired {
		t.Errorf("kind %v", m.kind)
	}
	if r := <-done; r.err == nil || !strings.Contains(r.err.Message, "did not answer") {
		t.Errorf("got %+v", r.err)
	}
}

// TestQuestionsServeExpiryWaitsForRoom: a question's bound passes while
// the hand-over is full (a flood expiring together): its questionExpired
// waits for room rather than being dropped, and the refusal goes out only
// after the UI has it.
func TestQuestionsServeExpiryWaitsForRoom(t *testing.T) {
	q := NewQuestions(nil, 20*time.Millisecond)
	done := make(chan serverReply, 1)
	go func() {
		res, err := q.Serve(context.Background(), wire.MethodElicitationCreate, json.RawMessage(`{}`))
		done <- serverReply{res, err}
	}()
	asked := <-q.ch
	for i := 0; i < cap(q.ch); i++ {
		q.ch <- questionMsg{kind: questionWithdrawn, q: &serverQuestion{}}
	}
	select {
	case <-done:
		t.Fatal("Serve refused the question before the UI heard of it")
	case <-time.After(100 * time.Millisecond):
	}
	for i := 0; i < cap(q.ch); i++ {
		<-q.ch
	}
	if m := <-q.ch; m.kind != questionExpired || m.q != asked.q {
		t.Errorf("after the queue drained: kind %v, same question %v", m.kind, m.q == asked.q)
	}
	if r := <-done; r.err == nil || !strings.Contains(r.err.Message, "did not answer") {
		t.Errorf("got %+v", r.err)
	}
}

func TestGoldenViewsAnswer(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run("waiting-row-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraModern)
			h.waitingConfirm()
			h.golden()
		})
		t.Run("elicitation-form-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraModern)
			h.waitingConfirm()
			h.key("enter")
			h.golden()
		})
		t.Run("sampling-form-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraModern)
			id := h.sendTool("sample")
			h.answer(id, sampleAsked)
			h.key("enter")
			h.typeText("Paris.")
			h.golden()
		})
		t.Run("dropped-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraModern)
			h.waitingConfirm()
			h.key("c")
			h.golden()
		})
		t.Run("detail-conversation-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraModern)
			h.waitingConfirm()
			h.advance(2 * time.Second)
			h.key("a", "space", "enter")
			nid, _ := h.lastRound()
			n, _ := nid.Int()
			h.sentEvent(n)
			h.advance(300 * time.Millisecond)
			h.answer(n, `{"resultType":"complete","content":[{"type":"text","text":"deleted 3 files"}]}`)
			h.key("enter")
			h.golden()
		})
		t.Run("legacy-row-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraLegacy)
			h.sendTool("confirm")
			h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
			h.golden()
		})
		t.Run("legacy-form-"+suffix, func(t *testing.T) {
			h := newAnswerHarness(t, size.w, size.h, event.EraLegacy)
			h.sendTool("confirm")
			h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
			h.key("a")
			h.golden()
		})
	}
}

func TestAnswerRoundCapIsFlaggedOnTheRow(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.sendTool("never_done")
	cur := id
	for round := 1; round <= session.DefaultMaxRounds; round++ {
		h.answer(cur, fmt.Sprintf(`{"resultType":"input_required","inputRequests":{"again":{"method":"elicitation/create","params":{"message":"Question %d: one more?","requestedSchema":{"type":"object","properties":{}}}}}}`, round))
		if round == session.DefaultMaxRounds {
			break
		}
		h.key("a", "ctrl+x")
		nid, _ := h.lastRound()
		cur, _ = nid.Int()
	}
	r := h.request(id)
	if r.State != session.StateInputRequired || !r.Conv.GaveUp {
		t.Fatalf("state %s, gave up %v", r.State, r.Conv.GaveUp)
	}
	if scr := h.screen(); !strings.Contains(scr, "⚑ gave up after 10 rounds") {
		t.Errorf("the row does not flag the round cap:\n%s", scr)
	}
}

func TestAnswerLegacyQuestionLostWithTheConnection(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraLegacy)
	h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(9), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a")
	h.events(event.Event{Kind: event.TransportClosed})
	h.m.Update(questionMsg{kind: questionWithdrawn, q: q})
	if h.m.focus.mode == keymap.ModeAnswer {
		t.Fatal("the form stayed open")
	}
	if scr := h.screen(); !strings.Contains(scr, "the connection closed before this question was answered") || strings.Contains(scr, "withdrew") {
		t.Errorf("status:\n%s", scr)
	}
}

func TestAnswerSchemaObjectionThenSendAnyway(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.sendTool("confirm")
	h.answer(id, `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"Colour?","requestedSchema":{"type":"object","properties":{"colour":{"type":"string","enum":["red","green"]}},"required":["colour"]}}}}}`)
	before := h.sentCount()
	h.key("a")
	h.typeText("blue")
	h.key("enter")
	if h.sentCount() != before || !strings.Contains(h.screen(), "enter again sends it anyway") {
		t.Fatalf("no objection to a value outside the enum:\n%s", h.screen())
	}
	h.key("enter")
	_, p := h.lastRound()
	if h.sentCount() != before+1 || string(p["inputResponses"]) != `{"q":{"action":"accept","content":{"colour":"blue"}}}` {
		t.Errorf("sent %d: %s", h.sentCount()-before, p["inputResponses"])
	}
}

func TestAnswerTwoQuestionsInOneRoundGoInOneRetry(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.sendTool("two")
	h.answer(id, `{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"First?","requestedSchema":{"type":"object","properties":{}}}},"b":{"method":"elicitation/create","params":{"message":"Second?","requestedSchema":{"type":"object","properties":{}}}}}}`)
	if !strings.Contains(h.screen(), "+1 more") {
		t.Errorf("the row hides the second question:\n%s", h.screen())
	}
	before := h.sentCount()
	h.key("a")
	if !strings.Contains(h.screen(), "question 1 of 2") || !strings.Contains(h.screen(), "First?") {
		t.Fatalf("form:\n%s", h.screen())
	}
	h.key("enter")
	if h.sentCount() != before || !strings.Contains(h.screen(), "question 2 of 2") || !strings.Contains(h.screen(), "Second?") {
		t.Fatalf("after the first answer, sent %d:\n%s", h.sentCount()-before, h.screen())
	}
	h.key("ctrl+d")
	_, p := h.lastRound()
	if h.sentCount() != before+1 || string(p["inputResponses"]) != `{"a":{"action":"accept","content":{}},"b":{"action":"decline"}}` {
		t.Errorf("sent %d: %s", h.sentCount()-before, p["inputResponses"])
	}
}

func TestAnswerFormServerTextIsInert(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraModern)
	id := h.sendTool("confirm")
	h.answer(id, `{"resultType":"input_required","inputRequests":{"k\u001b[2J":{"method":"elicitation/create","params":{"message":"Delete?\u001b]52;c;ZXZpbA==\u0007 \u001b[31mred","requestedSchema":{"type":"object","properties":{"n\u001b[6n":{"type":"string","description":"\u202eevil","default":"\u001b[?1049lx"}}}}}}}`)
	for _, scr := range []string{h.m.View().Content, func() string { h.key("a"); return h.m.View().Content }()} {
		for _, bad := range []string{"\x1b]52", "\x1b[2J", "\x1b[6n", "\x1b[?1049l", "\u202e", "\a"} {
			if strings.Contains(scr, bad) {
				t.Errorf("%q reached the terminal", bad)
			}
		}
		if !strings.Contains(ansi.Strip(scr), "␛") {
			t.Errorf("no visible placeholder for the escapes:\n%s", ansi.Strip(scr))
		}
	}
}

func TestAnswerFormToDetailAndBack(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.waitingConfirm()
	h.key("enter", "ctrl+o")
	if h.m.focus.mode != keymap.ModeDetail || h.m.screens.detail.ID() != wire.IntID(id) {
		t.Fatalf("ctrl+o: mode %v, detail %s", h.m.focus.mode, h.m.screens.detail.ID())
	}
	if !strings.Contains(h.screen(), "CONVERSATION (1 round)") {
		t.Errorf("detail:\n%s", h.screen())
	}
	h.key("a")
	if h.m.focus.mode != keymap.ModeAnswer {
		t.Fatal("a in the detail does not open the form")
	}
	h.key("esc")
	if h.m.focus.mode != keymap.ModeDetail {
		t.Errorf("esc from a form opened in the detail goes to %v", h.m.focus.mode)
	}
}

func TestAnswerFormClosesWhenTheRequestIsLost(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.waitingConfirm()
	h.key("a")
	h.events(event.Event{Kind: event.TransportClosed})
	if r := h.request(id); r.State == session.StateWaitingInput {
		t.Fatalf("the request still waits after the transport closed")
	}
	if h.m.focus.mode == keymap.ModeAnswer || !strings.Contains(h.screen(), "can no longer be answered") {
		t.Errorf("mode %v:\n%s", h.m.focus.mode, h.screen())
	}
}

// TestAnswerLegacyQuestionOutlivesTheTimeout: while the server's
// question waits for the user its request's timeout is paused, so the
// form stays open past the request's timeout and nothing is declined;
// cancelling the request then declines the open question, and closes the
// form on it.
func TestAnswerLegacyQuestionOutlivesTheTimeout(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraLegacy)
	id := h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	h.key("a")
	h.advance(61 * time.Second) // past the default 60s timeout
	select {
	case r := <-q.reply:
		t.Fatalf("the question was answered %s while the user was still at it", r.result)
	default:
	}
	if h.m.focus.mode != keymap.ModeAnswer {
		t.Fatalf("the form closed while the user was at it")
	}
	h.run(h.m.cancel(wire.IntID(id), "user", session.CauseUser))
	select {
	case r := <-q.reply:
		if string(r.result) != `{"action":"decline"}` {
			t.Errorf("reply %s", r.result)
		}
	default:
		t.Fatal("the question of a cancelled request was left open")
	}
	if h.m.focus.mode == keymap.ModeAnswer {
		t.Error("the form stayed open")
	}
}

// A re-issue of a conversation starts it again: a later round's answers
// and requestState never go out with a new request (found in review).
func TestReissueDropsRoundState(t *testing.T) {
	raw := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"confirm","arguments":{},"inputResponses":{"confirm":{"action":"accept"}},"requestState":"opaque-bytes"}}`)
	got := string(paramsForReissue(raw))
	if strings.Contains(got, "inputResponses") || strings.Contains(got, "requestState") || !strings.Contains(got, `"name":"confirm"`) {
		t.Fatalf("re-issue params %s", got)
	}
}

// A URL mode question shows the URL's site first, as the spec asks before
// a user consents, says inflight opens nothing, and accept sends only the
// action (no content).
func TestAnswerURLModeShowsTheSite(t *testing.T) {
	h := newAnswerHarness(t, 80, 24, event.EraModern)
	id := h.sendTool("confirm")
	h.answer(id, `{"resultType":"input_required","inputRequests":{"key":{"method":"elicitation/create","params":{"mode":"url","message":"Set your API key","url":"https://Keys.Example.com:8443/set?session=abc","elicitationId":"e1"}}}}`)
	h.key("a")
	scr := h.screen()
	for _, want := range []string{"inflight never opens it", "site  keys.example.com:8443", "https://Keys.Example.com:8443/set?session=abc", "enter accept (you opened it)"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the URL form lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "tab/↓ next field") {
		t.Errorf("the footer offers fields a URL question has none of:\n%s", scr)
	}
	h.key("enter")
	_, p := h.lastRound()
	if got := string(p["inputResponses"]); got != `{"key":{"action":"accept"}}` {
		t.Errorf("inputResponses %s", got)
	}
	if look.URLHost("not a url") != "" || look.URLHost("mailto:x@y") != "" {
		t.Error("URLHost found a host where there is none")
	}
}

// TestAnswerLegacyRefusedQuestionCannotBeAnswered: Serve's bound passed
// and the client refused the question (the tracker saw the error go out)
// before the UI had Serve's questionExpired: the question leaves the
// queue on the tracker's word, and a on its request opens no form (whose
// answer nobody would read, the status saying "accepted").
func TestAnswerLegacyRefusedQuestionCannotBeAnswered(t *testing.T) {
	h := newAnswerHarness(t, 120, 35, event.EraLegacy)
	h.sendTool("confirm")
	q := h.legacyAsk(wire.IntID(7), wire.MethodElicitationCreate, legacyConfirm)
	raw := wire.ErrorResponse(wire.IntID(7), wire.CodeInternalError, "the user did not answer elicitation/create within 1m0s")
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: wire.IntID(7), Raw: raw, Msg: msg, Internal: true})
	if s := q.record(h.m.tracker); s == nil || s.State != session.ServerRefused {
		t.Fatalf("tracker: %v", s)
	}
	h.key("home", "down")
	h.key("a")
	if h.m.focus.mode == keymap.ModeAnswer {
		h.key("space", "enter")
		t.Errorf("a opened a form on a question the client already refused; status after answering: %q", h.m.status.text)
	}
}
