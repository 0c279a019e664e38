package session

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// confirm is an InputRequiredResult asking one elicitation, with a
// requestState whose bytes encoding/json would rewrite if it re-encoded
// them ("<", "&", an escape it would keep but a decoder would not).
const (
	confirmState = `"s1<&>\u0041=="`
	confirm      = `{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Delete 3 files?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}},"requestState":` + confirmState + `}`
)

func converse(t *testing.T, maxRounds int) *harness {
	return newHarness(t, Config{Converse: true, MaxRounds: maxRounds, DefaultTimeout: 10 * time.Second}, event.EraModern, event.TransportStdio)
}

// sentRound reports round r sent at ms(at) under its current ID.
func (h *harness) sentRound(at int, r *Request) {
	h.t.Helper()
	h.apply(msgEvent(h.t, event.Sent, at, string(wire.Request(r.ID, r.Method, nil))))
}

func TestConversationRounds(t *testing.T) {
	h := converse(t, 0)
	r := h.begin(0, wire.MethodToolsCall, `{"name":"delete","arguments":{"n":3}}`)
	first := r.ID
	h.recv(20, result(1, confirm))

	expect(t, "state after input_required", r.State, StateWaitingInput)
	if _, ok := h.tr.NextDeadline(); ok {
		t.Error("a request waiting for the user has a deadline; no timer should run while nothing is on the wire")
	}
	if x, _ := h.tr.expire(ms(60_000)); len(x) != 0 {
		t.Errorf("expire cancelled %v while the request waited for an answer", x)
	}
	asked, state := r.Asked()
	if len(asked) != 1 || asked[0].Key != "confirm" || asked[0].Method != wire.MethodElicitationCreate {
		t.Fatalf("asked = %+v", asked)
	}
	expect(t, "requestState kept", string(state), confirmState)

	answer := json.RawMessage(`{"action":"accept","content":{"ok":true}}`)
	retry, err := h.tr.Answer(first, map[string]json.RawMessage{"confirm": answer}, ms(5_000))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "retry ID", retry.ID, id(2))
	expect(t, "request ID is the round's", r.ID, id(2))
	expect(t, "progress token is the round's", r.ProgressToken, id(2))
	expect(t, "round", retry.Round, 2)
	expect(t, "change", retry.Change.To, StatePending)
	want := `{"arguments":{"n":3},"name":"delete","inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":` + confirmState + `}`
	expect(t, "retry params", string(retry.Params), want)
	if g, ok := h.tr.Get(first); !ok || g != r {
		t.Error("the first round's ID no longer finds the conversation")
	}
	if i, ok := h.tr.Index(first); !ok || h.tr.At(i) != r {
		t.Error("Index(first round) does not find the conversation")
	}
	// The round has its own timeout, from when it began.
	if d, ok := h.tr.NextDeadline(); !ok || !d.Equal(ms(15_000)) {
		t.Errorf("next deadline %v %t, want the round's timeout at 15s", d, ok)
	}
	h.sentRound(5_001, r)
	h.recv(5_030, result(2, `{"resultType":"complete","content":[]}`))

	expect(t, "final state", r.State, StateCompleted)
	expect(t, "elapsed from the first round", r.Elapsed(ms(9_999)), 5030*time.Millisecond)
	rs := r.Conv.Rounds
	if len(rs) != 2 {
		t.Fatalf("rounds = %+v", rs)
	}
	expect(t, "round 1 ID", rs[0].ID, first)
	expect(t, "round 1 outcome", rs[0].Outcome, StateInputRequired)
	expect(t, "round 1 answered", string(rs[0].Answers["confirm"]), string(answer))
	expect(t, "round 1 answered at", rs[0].AnsweredAt, ms(5_000))
	expect(t, "round 2 ID", rs[1].ID, id(2))
	expect(t, "round 2 outcome", rs[1].Outcome, StateCompleted)
	expect(t, "round 2 response at", rs[1].ResponseAt, ms(5_030))
	expect(t, "round 2 asked nothing", len(rs[1].Asked), 0)
	if raw, ok := h.tr.RawResponse(first); !ok || !strings.Contains(string(raw), confirmState) {
		t.Errorf("round 1's response is not kept under its ID: %s", raw)
	}
	expect(t, "in flight", h.tr.Counts().InFlight, 0)
	expect(t, "done", h.tr.Counts().Done, 1)

	// Progress for round 1 after its answer is after completion.
	h.recv(5_900, progress(1, 50))
	expect(t, "progress after round 1", h.tr.Violations().Count(ViolationProgressAfterCompletion), 1)
	// A second answer to round 1 is a duplicate, not round 2's.
	h.recv(6_000, result(1, `{"resultType":"complete","content":[]}`))
	expect(t, "duplicate flagged", h.tr.Violations().Count(ViolationDuplicateResponse), 1)
	expect(t, "state kept", r.State, StateCompleted)
}

// TestConversationRetryWithoutAnswers: an InputRequiredResult with only a
// requestState is retried with it and no inputResponses; one with neither
// field present (the rule) is flagged.
func TestConversationStateOnly(t *testing.T) {
	h := converse(t, 0)
	r := h.begin(0, wire.MethodPromptsGet, `{"name":"p"}`)
	h.recv(10, result(1, `{"resultType":"input_required","requestState":"abc"}`))
	retry, err := h.tr.Answer(r.ID, nil, ms(11))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "params", string(retry.Params), `{"name":"p","requestState":"abc"}`)
	h.sentRound(11, r)
	h.recv(20, result(2, `{"resultType":"input_required"}`))
	expect(t, "empty flagged", h.tr.Violations().Count(ViolationInputRequiredEmpty), 1)
	retry, err = h.tr.Answer(r.ID, nil, ms(21))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "no state echoed when none was given", string(retry.Params), `{"name":"p"}`)
}

func TestConversationEnds(t *testing.T) {
	type step func(h *harness, r *Request)
	answerAndAsk := func(at int) step {
		return func(h *harness, r *Request) {
			h.t.Helper()
			if _, err := h.tr.Answer(r.ID, map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept"}`)}, ms(at)); err != nil {
				h.t.Fatal(err)
			}
			h.sentRound(at, r)
			h.recv(at+5, string(wire.ResultResponse(r.ID, json.RawMessage(confirm))))
		}
	}
	tests := []struct {
		name      string
		cfg       Config
		steps     []step
		state     State
		rounds    int
		gaveUp    bool
		flagged   bool
		stopped   string
		cancelled bool
	}{
		{name: "no conversing: input_required at once, round kept", cfg: Config{},
			state: StateInputRequired, rounds: 1},
		{name: "round cap", cfg: Config{Converse: true, MaxRounds: 3},
			steps: []step{answerAndAsk(100), answerAndAsk(200)},
			state: StateInputRequired, rounds: 3, gaveUp: true, flagged: true, stopped: "gave up after 3 rounds"},
		{name: "default cap is 10", cfg: Config{Converse: true},
			steps: []step{answerAndAsk(100), answerAndAsk(200), answerAndAsk(300), answerAndAsk(400), answerAndAsk(500),
				answerAndAsk(600), answerAndAsk(700), answerAndAsk(800), answerAndAsk(900)},
			state: StateInputRequired, rounds: 10, gaveUp: true, flagged: true, stopped: "gave up after 10 rounds"},
		{name: "the caller has no answers", cfg: Config{Converse: true},
			steps: []step{func(h *harness, r *Request) {
				if _, err := h.tr.EndConversation(r.ID, "no answers given", ms(50)); err != nil {
					h.t.Fatal(err)
				}
			}},
			state: StateInputRequired, rounds: 1, stopped: "no answers given"},
		{name: "cancel while waiting: nothing to send", cfg: Config{Converse: true},
			steps: []step{answerAndAsk(100), func(h *harness, r *Request) {
				ch, err := h.tr.RequestCancel(id(1), "user", CauseUser, ms(300))
				if err != nil {
					h.t.Fatal(err)
				}
				if ch.To != StateCancelled {
					h.t.Errorf("cancel moved to %s, want cancelled at once", ch.To)
				}
			}},
			state: StateCancelled, rounds: 2, stopped: "no request in flight; the conversation was dropped", cancelled: true},
		{name: "cancel of a round in flight is an ordinary cancel", cfg: Config{Converse: true},
			steps: []step{func(h *harness, r *Request) {
				if _, err := h.tr.Answer(r.ID, nil, ms(100)); err != nil {
					h.t.Fatal(err)
				}
				h.sentRound(100, r)
				ch, err := h.tr.RequestCancel(id(1), "user", CauseUser, ms(150))
				if err != nil || ch.To != StateCancelRequested || ch.ID != id(2) {
					h.t.Fatalf("cancel %+v %v, want round 2 cancel_requested", ch, err)
				}
				h.cancelSent(151, r, event.SignalNotification)
				h.tr.expire(ms(151 + int(DefaultLateWindow/time.Millisecond)))
			}},
			state: StateCancelled, rounds: 2, cancelled: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg, event.EraModern, event.TransportStdio)
			r := h.begin(0, wire.MethodToolsCall, `{"name":"confirm"}`)
			h.recv(10, result(1, confirm))
			for _, s := range tc.steps {
				s(h, r)
			}
			expect(t, "state", r.State, tc.state)
			expect(t, "rounds", len(r.Conv.Rounds), tc.rounds)
			expect(t, "gave up", r.Conv.GaveUp, tc.gaveUp)
			expect(t, "flagged", r.Flagged(), tc.flagged)
			expect(t, "stopped", r.Conv.Stopped, tc.stopped)
			expect(t, "cancelled", r.Cancel != nil, tc.cancelled)
			if tc.cancelled && tc.stopped != "" {
				expect(t, "no signal", r.Cancel.Signal, event.SignalNone)
			}
			if _, err := h.tr.Answer(r.ID, nil, ms(10_000)); !isRefused(err, RefusedNotWaiting) {
				t.Errorf("Answer on a %s request: %v, want refused", r.State, err)
			}
		})
	}
}

func isRefused(err error, why RefusalReason) bool {
	var rf *Refused
	return errors.As(err, &rf) && rf.Why == why
}

func TestInputRequiredViolations(t *testing.T) {
	tests := []struct {
		name, method, result, code string
		state                      State
	}{
		{"not a method that may", wire.MethodToolsList, `{"resultType":"input_required","requestState":"x"}`, ViolationInputRequiredMethod, StateInputRequired},
		{"neither field", wire.MethodToolsCall, `{"resultType":"input_required"}`, ViolationInputRequiredEmpty, StateWaitingInput},
		{"not an input request", wire.MethodToolsCall, `{"resultType":"input_required","inputRequests":{"k":{"method":"tools/call","params":{}}}}`, ViolationInputRequestMethod, StateWaitingInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := converse(t, 0)
			r := h.begin(0, tc.method, `{"name":"x"}`)
			h.recv(10, result(1, tc.result))
			expect(t, tc.code, h.tr.Violations().Count(tc.code), 1)
			expect(t, "state", r.State, tc.state)
		})
	}
}

// legacy is a legacy stdio tracker with a tools/call in flight.
func legacy(t *testing.T, transport event.TransportKind) (*harness, *Request) {
	h := newHarness(t, Config{}, event.EraLegacy, transport)
	return h, h.begin(0, wire.MethodToolsCall, `{"name":"ask"}`)
}

func serverReq(at int, sid int, method, params string, owner wire.ID) event.Event {
	raw := string(wire.Request(wire.IntID(int64(sid)), method, json.RawMessage(params)))
	msg, _ := wire.Decode([]byte(raw))
	return event.Event{Kind: event.Received, Time: ms(at), RequestID: msg.ID, Owner: owner, Raw: []byte(raw), Msg: msg, Internal: true}
}

func ourAnswer(at int, raw []byte) event.Event {
	msg, _ := wire.Decode(raw)
	return event.Event{Kind: event.Sent, Time: ms(at), RequestID: msg.ID, Raw: raw, Msg: msg, Internal: true}
}

func TestServerRequests(t *testing.T) {
	elicit := `{"message":"Confirm?","requestedSchema":{"type":"object"}}`
	tests := []struct {
		name   string
		run    func(h *harness, r *Request)
		state  ServerRequestState
		tied   TiedBy
		during bool
	}{
		{"accepted", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			h.apply(ourAnswer(20, wire.ResultResponse(id(1), json.RawMessage(`{"action":"accept","content":{}}`))))
		}, ServerAnswered, TiedOnly, true},
		{"declined", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			h.apply(ourAnswer(20, wire.ResultResponse(id(1), json.RawMessage(`{"action":"decline"}`))))
		}, ServerDeclined, TiedOnly, true},
		{"dismissed", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			h.apply(ourAnswer(20, wire.ResultResponse(id(1), json.RawMessage(`{"action":"cancel"}`))))
		}, ServerDismissed, TiedOnly, true},
		{"sampling rejected", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodSamplingCreate, `{"messages":[],"maxTokens":5}`, wire.ID{}))
			h.apply(ourAnswer(20, wire.ErrorResponse(id(1), wire.CodeUserRejected, "User rejected sampling request")))
		}, ServerDeclined, TiedOnly, true},
		{"refused by default", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodRootsList, `{}`, wire.ID{}))
			h.apply(ourAnswer(20, wire.ErrorResponse(id(1), wire.CodeMethodNotFound, "no")))
		}, ServerRefused, TiedOnly, true},
		{"withdrawn by the server (handler running: internal)", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			ev := msgEvent(h.t, event.Received, 3000, serverCancel(1))
			ev.Internal = true
			h.apply(ev)
		}, ServerWithdrawn, TiedOnly, true},
		{"withdrawn by the server (not internal)", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			h.recv(3000, serverCancel(1))
		}, ServerWithdrawn, TiedOnly, true},
		{"abandoned: the call was answered first", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			h.recv(20, result(1, `{"content":[]}`))
		}, ServerAbandoned, TiedOnly, true},
		{"abandoned, then withdrawn", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			h.recv(20, result(1, `{"content":[]}`))
			h.recv(21, serverCancel(1))
		}, ServerWithdrawn, TiedOnly, true},
		{"connection lost", func(h *harness, r *Request) {
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
			h.apply(event.Event{Kind: event.TransportClosed, Time: ms(50)})
		}, ServerLost, TiedOnly, true},
		{"two requests in flight on stdio: untied", func(h *harness, r *Request) {
			h.begin(5, wire.MethodToolsCall, `{"name":"other"}`)
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, wire.ID{}))
		}, ServerWaiting, TiedNone, false},
		{"on the request's HTTP stream", func(h *harness, r *Request) {
			h.begin(5, wire.MethodToolsCall, `{"name":"other"}`)
			h.apply(serverReq(10, 1, wire.MethodElicitationCreate, elicit, r.ID))
		}, ServerWaiting, TiedStream, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, r := legacy(t, event.TransportStdio)
			tc.run(h, r)
			all := h.tr.ServerRequests()
			if len(all) != 1 {
				t.Fatalf("server requests = %d, want 1", len(all))
			}
			s := all[0]
			expect(t, "state", s.State, tc.state)
			expect(t, "tied by", s.TiedBy, tc.tied)
			expect(t, "tied to the call", s.During == r.ID, tc.during)
			expect(t, "on the request", r.Conv != nil && len(r.Conv.ServerRequests) == 1, tc.during)
			expect(t, "our own request untouched", r.State == StatePending || r.State == StateConnectionLost || r.State == StateCompleted, true)
			expect(t, "no violation", h.tr.Violations().Total(), 0)
		})
	}
}

func TestServerRequestWithdrawnIsNotOurs(t *testing.T) {
	// The server's IDs are its own: its cancel of its request 1 must not
	// touch inflight's request 1.
	h, r := legacy(t, event.TransportStdio)
	h.apply(serverReq(10, 1, wire.MethodElicitationCreate, `{}`, wire.ID{}))
	h.recv(20, serverCancel(1))
	expect(t, "our request", r.State, StatePending)
	expect(t, "theirs", h.tr.ServerRequests()[0].State, ServerWithdrawn)
}

func logLine(level string) string {
	b, _ := json.Marshal(map[string]any{"level": level, "logger": "demo", "data": "step"})
	return string(wire.Notification(wire.NotifyMessage, b))
}

func TestRequestLogs(t *testing.T) {
	asked := `{"name":"x","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}`
	tests := []struct {
		name       string
		era        event.Era
		transport  event.TransportKind
		params     string
		onStream   bool
		count      int
		violations int
		loose      int
	}{
		{"modern HTTP, asked", event.EraModern, event.TransportHTTP, asked, true, 2, 0, 0},
		{"modern HTTP, not asked: flagged", event.EraModern, event.TransportHTTP, `{"name":"x"}`, true, 2, 2, 0},
		{"modern stdio, the only request", event.EraModern, event.TransportStdio, asked, false, 2, 0, 0},
		{"legacy stdio (logging/setLevel)", event.EraLegacy, event.TransportStdio, `{"name":"x"}`, false, 2, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{}, tc.era, tc.transport)
			r := h.begin(0, wire.MethodToolsCall, tc.params)
			for i, lvl := range []string{"info", "debug"} {
				ev := msgEvent(t, event.Received, 10+i, logLine(lvl))
				if tc.onStream {
					ev.RequestID = r.ID
				}
				h.apply(ev)
			}
			expect(t, "count", r.Conv.LogCount, tc.count)
			expect(t, "violations", h.tr.Violations().Count(ViolationLogNotRequested), tc.violations)
			expect(t, "first line", r.Conv.Logs[0].Level+" "+r.Conv.Logs[0].Logger+" "+r.Conv.Logs[0].Data, `info demo "step"`)
			expect(t, "unattributed", h.tr.LogsUnattributed(), tc.loose)
		})
	}
	// With nothing in flight, a line belongs to no request.
	h := newStdio(t, event.EraLegacy)
	h.recv(10, logLine("info"))
	expect(t, "unattributed", h.tr.LogsUnattributed(), 1)
}

// TestInputRequestUndeclared: the round's request, as sent, says what the
// client declared; asking anything else is the server's violation.
func TestInputRequestUndeclared(t *testing.T) {
	for _, tc := range []struct {
		caps string
		want int
	}{
		{`{"elicitation":{"form":{}}}`, 0},
		{`{"sampling":{}}`, 1},
		{`{}`, 1},
	} {
		h := converse(t, 0)
		r := h.tr.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"x"}`), RequestOptions{}, ms(0))
		params := `{"name":"x","_meta":{"io.modelcontextprotocol/clientCapabilities":` + tc.caps + `}}`
		h.apply(msgEvent(t, event.Sent, 0, string(wire.Request(r.ID, r.Method, json.RawMessage(params)))))
		h.recv(10, result(1, confirm))
		expect(t, tc.caps, h.tr.Violations().Count(ViolationInputRequestUndeclared), tc.want)
	}
}

// TestServerRequestRelatedTask: a legacy server's request whose _meta
// names a task (io.modelcontextprotocol/related-task) belongs to that
// task's request, even with other requests in flight.
func TestServerRequestRelatedTask(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	h.begin(20, wire.MethodToolsCall, `{"name":"other"}`)
	h.apply(serverReq(30, 7, wire.MethodElicitationCreate, `{"message":"?","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`, wire.ID{}))
	s := h.tr.ServerRequests()[0]
	expect(t, "tied by", s.TiedBy, TiedTask)
	expect(t, "during", s.During, r.ID)
}
