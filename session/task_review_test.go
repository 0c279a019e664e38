package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Found in review: a legacy tasks/result that fails without an answer (HTTP 5xx, send
// error, connection lost) is re-begun at once, forever, with no spacing.
func TestReviewResultRetryHotLoop(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	polls := h.due(1010)
	h.answerTask(1020, polls[0], "t-1", wire.TaskCompleted, "")
	got := h.due(1020)
	if len(got) != 1 || got[0].Method != wire.MethodTasksResult {
		t.Fatalf("due %v", methods(got))
	}
	c := got[0]
	n := 0
	for i := 0; i < 50; i++ {
		h.apply(event.Event{Kind: event.RequestFailed, Time: ms(1030), RequestID: c.ID, Err: errors.New("HTTP 500")})
		next, ok := h.tr.NextDeadline()
		again := h.tr.taskRequests(ms(1030))
		if len(again) == 0 {
			break
		}
		if !ok || next.After(ms(1030)) {
			t.Logf("next %v", next)
		}
		c = again[len(again)-1]
		if c.Method == wire.MethodTasksResult {
			n++
		}
	}
	t.Logf("parent state %v; tasks/result re-begun %d times within the same millisecond", r.State, n)
	if n > 1 {
		t.Errorf("tasks/result retried %d times at once after failures (no spacing)", n)
	}

	// Connection lost: the parent is final, yet the retry goes on.
	h.apply(event.Event{Kind: event.TransportClosed, Time: ms(2000), Err: errors.New("eof")})
	m := 0
	for i := 0; i < 50; i++ {
		again := h.tr.taskRequests(ms(2000))
		if len(again) == 0 {
			break
		}
		m++
		h.apply(event.Event{Kind: event.RequestFailed, Time: ms(2000), RequestID: again[0].ID, Err: errors.New("closed"), LostConnection: true})
	}
	t.Logf("after connection lost: parent %v, %d more tasks/result begun", r.State, m)
	if m > 1 {
		t.Errorf("after the connection was lost, tasks/result re-begun %d times (endless)", m)
	}
}

// Found in review: the task ends inside expire (TTL, or a settle) after its listen was
// already visited: closeDue is set, then taskRequests zeroes taskDue, and
// NextDeadline no longer schedules the listen's close.
func TestReviewListenCloseLostInExpire(t *testing.T) {
	h := &taskHarness{harness: newHarness(t, Config{PollInterval: 500 * time.Millisecond}, event.EraModern, event.TransportStdio), modern: true}
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	got := h.due(10)
	l := got[0]
	lid, _ := l.ID.Int()
	h.recv(20, string(wire.Notification(wire.NotifySubscriptionAck, json.RawMessage(fmt.Sprintf(
		`{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"notifications":{"taskIds":["t-1"]}}`, lid)))))
	// as Due does: expire, then taskRequests
	exp, _ := h.tr.expire(ms(60010))
	h.tr.taskRequests(ms(60010))
	t.Logf("parent %v; expiries %+v; listen %v closeDue=%v", r.State, exp, l.State, l.closeDue)
	next, ok := h.tr.NextDeadline()
	if l.closeDue && (!ok || next.After(ms(60010))) {
		t.Errorf("listen %s must be closed but NextDeadline = %v, %v: nothing will ever close it", l.ID, next, ok)
	}
}

// Found in review: a poll that timed out and was settled is answered late after the
// next poll began: childAnswered clears tk.polling unconditionally, so a
// third poll starts while the second is still in flight.
func TestReviewStalePollClearsInflight(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	a := h.due(1010)[0]
	// a times out (30s) and its cancel settles after the late window
	exp, _ := h.tr.expire(ms(31010))
	if len(exp) != 1 || exp[0].ID != a.ID {
		t.Fatalf("exp %+v", exp)
	}
	h.cancelSent(31010, a, event.SignalNotification)
	h.tr.expire(ms(36010))
	if a.State.IsActive() {
		t.Fatalf("a %v", a.State)
	}
	b := h.due(37010)
	if len(b) != 1 {
		t.Fatalf("b %v", methods(b))
	}
	h.answerTask(37020, a, "t-1", wire.TaskWorking, "") // a's late answer
	c := h.due(38020)
	if len(c) > 0 && b[0].State.IsActive() {
		t.Errorf("poll %s began while poll %s is still in flight (state %v)", c[0].ID, b[0].ID, b[0].State)
	}
	_ = r
}

func TestReviewHiddenChildFlagged(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	a := h.due(1010)[0]
	h.tr.expire(ms(31010))
	h.cancelSent(31010, a, event.SignalNotification)
	h.tr.expire(ms(36010))
	before := h.tr.Counts().Flagged
	h.answerTask(37020, a, "t-1", wire.TaskWorking, "")
	t.Logf("Flagged %d -> %d; parent flagged=%v child flagged=%v", before, h.tr.Counts().Flagged, r.flagged, a.flagged)
	if h.tr.Counts().Flagged != before && !r.flagged {
		t.Errorf("header Flagged counts a hidden poll child (%d -> %d), no visible row is flagged", before, h.tr.Counts().Flagged)
	}
}

// Found in review: legacy task already completed (tasks/result in flight), user cancels:
// the result then arrives but the request is not settled with it.
func TestReviewCancelAfterTerminalLegacy(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	p := h.due(1010)[0]
	h.answerTask(1020, p, "t-1", wire.TaskCompleted, "")
	res := h.due(1020)[0]
	h.cancel(1030, r, CauseUser)
	h.due(1030)
	n, _ := res.ID.Int()
	h.recv(1040, result(int(n), `{"content":[{"type":"text","text":"done"}]}`))
	t.Logf("after the result of a task completed before the cancel: %v late=%+v", r.State, r.Late.Response)
	exp, _ := h.tr.expire(ms(7000))
	_ = exp
	t.Logf("final: %v flagged=%v", r.State, r.flagged)
	if r.State != StateCompleted {
		t.Errorf("task completed before the cancel, its result came; request ended %v", r.State)
	}
}

// Found in review: the handle was read before the user's cancel but applied after it
// (readBeforeCancel): the request becomes a task with r.Cancel still set.
func TestReviewHandleReadBeforeCancel(t *testing.T) {
	for _, era := range []event.Era{event.EraModern, event.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			h := newTaskHarness(t, era)
			r := h.call(0, true)
			h.cancel(20, r, CauseUser)
			h.handle(15, r, "t-1") // read at 15, applied after the cancel at 20
			got := h.due(20)
			t.Logf("after the handle: state %v, cancel %v, due %v, counts %+v", r.State, r.Cancel != nil, methods(got), h.tr.Counts())
			var poll *Request
			for _, c := range h.due(1015) {
				if c.Role == RolePoll {
					poll = c
				}
			}
			if poll == nil {
				t.Fatalf("no poll")
			}
			h.answerTask(1020, poll, "t-1", wire.TaskCompleted, `"result":{"content":[]}`)
			for _, c := range h.due(1020) {
				if c.Role == RoleResult {
					n, _ := c.ID.Int()
					h.recv(1030, result(int(n), `{"content":[]}`))
				}
			}
			t.Logf("after completed: state %v late=%v flagged=%v endedAfterCancel=%q", r.State, r.Late.Response, r.flagged, r.Task.EndedAfterCancel)
			if r.State.IsActive() {
				t.Errorf("the task completed, but the request stays %v", r.State)
			}
			if r.Task.EndedAfterCancel != "" && r.Task.CancelID.IsZero() {
				t.Errorf("judged 'ended after tasks/cancel' though no tasks/cancel was ever sent")
			}
		})
	}
}

// A task the server no longer knows (a later tasks/get refused with
// -32602) ends: polling it until the maximum would learn nothing.
func TestTaskGoneEnds(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	p := h.due(1010)
	h.answerTask(1020, p[0], "t-1", wire.TaskWorking, "")
	p = h.due(2020)
	n, _ := p[0].ID.Int()
	h.recv(2030, rpcError(int(n), wire.CodeInvalidParams, "task expired"))
	if r.State != StateFailed || r.LocalError == "" {
		t.Fatalf("after -32602 on a later poll: %v %q", r.State, r.LocalError)
	}
	if got := h.due(5000); len(got) != 0 {
		t.Errorf("still polling a task the server no longer knows: %v", methods(got))
	}
}
