package session

import (
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// task_poll_rate_limited: a poll refused as rate-limited is flagged when
// the server gave no interval, or when inflight waited the interval it
// gave (the tracker never polls sooner); an error that does not say it is
// a rate limit is not one, and one refusal is flagged once.
func TestTaskPollRateLimited(t *testing.T) {
	t.Run("json-rpc error after the server's interval", func(t *testing.T) {
		h := newTaskHarness(t, event.EraLegacy)
		r := h.call(0, true)
		h.handle(10, r, "t-1") // pollInterval 1000
		p := h.due(1010)
		n, _ := p[0].ID.Int()
		h.recv(1020, rpcError(int(n), -32000, "Rate limit exceeded"))
		v := h.tr.Violations()
		if v.Count(ViolationTaskPollRateLimited) != 1 {
			t.Fatalf("violations %v", violationCodes(h.tr))
		}
		if d := v.At(0).Detail; !strings.Contains(d, `-32000 "Rate limit exceeded"`) || !strings.Contains(d, "inflight had waited 1s, no less than the 1s interval the server gave") {
			t.Errorf("detail %q", d)
		}
		if v.At(0).RequestID != r.ID || r.Violations != 1 {
			t.Errorf("attributed to %v, want the task's request %v (flagged in the list)", v.At(0).RequestID, r.ID)
		}
		// The next poll follows, and the task goes on.
		if next := h.due(2020); len(next) != 1 || next[0].Method != wire.MethodTasksGet || r.State != StateTask {
			t.Errorf("after the refusal: %v, %v", methods(next), r.State)
		}
	})
	t.Run("http 429 with no interval given", func(t *testing.T) {
		h := newTaskHarness(t, event.EraModern) // default interval 500ms
		r := h.call(0, true)
		n, _ := r.ID.Int()
		h.recv(10, result(int(n), `{"resultType":"task","taskId":"m-1","status":"working","createdAt":"2026-12-01T10:00:00Z","ttlMs":60000}`))
		p := h.due(510)
		h.apply(event.Event{Kind: event.HTTPStatus, Time: ms(520), RequestID: p[0].ID, Status: 429, Text: "429 Too Many Requests"})
		pn, _ := p[0].ID.Int()
		// The body's JSON-RPC error says so too: one refusal, one violation.
		h.recv(520, rpcError(int(pn), -32000, "too many requests"))
		v := h.tr.Violations()
		if v.Count(ViolationTaskPollRateLimited) != 1 || v.Total() != 1 {
			t.Fatalf("violations %v", violationCodes(h.tr))
		}
		if d := v.At(0).Detail; !strings.Contains(d, "(HTTP 429)") || !strings.Contains(d, "the server had given no poll interval for it; inflight polled 500ms after the handle") {
			t.Errorf("detail %q", d)
		}
	})
	t.Run("not a rate limit", func(t *testing.T) {
		h := newTaskHarness(t, event.EraLegacy)
		r := h.call(0, true)
		h.handle(10, r, "t-1")
		p := h.due(1010)
		n, _ := p[0].ID.Int()
		h.recv(1020, rpcError(int(n), -32603, "internal error"))
		h.apply(event.Event{Kind: event.HTTPStatus, Time: ms(1030), RequestID: r.ID, Status: 429})
		if got := violationCodes(h.tr); len(got) != 0 {
			t.Errorf("violations %v: an internal error, and a 429 on the request itself, are no poll refused as rate-limited", got)
		}
	})
}

// A modern notifications/tasks with a subscriptionId counts on its
// subscription and reaches its task; one naming no listen is flagged as
// such and still reaches its task.
func TestTaskNotificationOnListen(t *testing.T) {
	h := newTaskHarness(t, event.EraModern)
	r := h.call(0, true)
	h.handle(10, r, "m-1")
	l := h.begin(20, wire.MethodSubscriptionsListen, `{"notifications":{"taskIds":["m-1"]}}`)
	ln, _ := l.ID.Int()
	h.recv(30, subNotification(wire.NotifySubscriptionAck, int(ln)))
	h.recv(40, `{"jsonrpc":"2.0","method":"notifications/tasks","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`+l.ID.Raw()+`},`+
		h.task("m-1", "completed", `"result":{"content":[{"type":"text","text":"done"}]}`)+`}}`)
	if r.State != StateCompleted || l.Notifications != 1 || l.State != StateListening {
		t.Fatalf("task %v, listen %v with %d notifications", r.State, l.State, l.Notifications)
	}
	if got := violationCodes(h.tr); len(got) != 0 {
		t.Errorf("violations %v", got)
	}

	r2 := h.call(50, true)
	h.handle(60, r2, "m-2")
	h.recv(70, `{"jsonrpc":"2.0","method":"notifications/tasks","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9999},`+h.task("m-2", "completed", "")+`}}`)
	if r2.State != StateCompleted || h.tr.Violations().Count(ViolationUnknownSubscription) != 1 {
		t.Errorf("task %v, violations %v", r2.State, violationCodes(h.tr))
	}
}
