package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// taskHarness drives one task-augmented tools/call through the tracker the
// way a caller does: begin, send with params, then taskRequests at each
// tick, sending what it returns.
type taskHarness struct {
	*harness
	modern bool
}

func newTaskHarness(t *testing.T, era event.Era) *taskHarness {
	// Polling alone; the listen for notifications/tasks is tested on its own.
	return &taskHarness{harness: newHarness(t, Config{PollInterval: 500 * time.Millisecond, NoTaskListen: true}, era, event.TransportStdio), modern: era == event.EraModern}
}

// call begins a tools/call that declares task support (or not) and sends it.
func (h *taskHarness) call(at int, declare bool) *Request {
	h.t.Helper()
	params := `{"name":"work","arguments":{}}`
	switch {
	case declare && h.modern:
		params = `{"name":"work","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`
	case declare:
		params = `{"name":"work","arguments":{},"task":{"ttl":60000}}`
	}
	r := h.tr.Begin(wire.MethodToolsCall, json.RawMessage(params), RequestOptions{}, ms(at))
	h.sendRaw(at, r, params)
	return r
}

func (h *taskHarness) sendRaw(at int, r *Request, params string) {
	h.t.Helper()
	h.apply(msgEvent(h.t, event.Sent, at, string(wire.Request(r.ID, r.Method, json.RawMessage(params)))))
}

// task is a task object in the era's shape.
func (h *taskHarness) task(tid, status string, extra string) string {
	ttl, poll := "ttl", "pollInterval"
	if h.modern {
		ttl, poll = "ttlMs", "pollIntervalMs"
	}
	s := fmt.Sprintf(`"taskId":%q,"status":%q,"createdAt":"2026-12-01T10:00:00Z","lastUpdatedAt":"2026-12-01T10:00:00Z","%s":60000,"%s":1000`, tid, status, ttl, poll)
	if extra != "" {
		s += "," + extra
	}
	return s
}

// handle answers r with a task handle.
func (h *taskHarness) handle(at int, r *Request, tid string) {
	h.t.Helper()
	n, _ := r.ID.Int()
	if h.modern {
		h.recv(at, result(int(n), `{"resultType":"task",`+h.task(tid, "working", `"statusMessage":"started"`)+`}`))
	} else {
		h.recv(at, result(int(n), `{"task":{`+h.task(tid, "working", `"statusMessage":"started"`)+`}}`))
	}
}

// due runs taskRequests at ms(at), sends what it began and returns it.
func (h *taskHarness) due(at int) []*Request {
	h.t.Helper()
	reqs := h.tr.taskRequests(ms(at))
	for _, c := range reqs {
		h.sendRaw(at, c, string(c.ChildParams))
	}
	return reqs
}

// answerTask answers child c with the task in status (a tasks/get result).
func (h *taskHarness) answerTask(at int, c *Request, tid, status, extra string) {
	h.t.Helper()
	n, _ := c.ID.Int()
	rt := ""
	if h.modern {
		rt = `"resultType":"complete",`
	}
	h.recv(at, result(int(n), `{`+rt+h.task(tid, status, extra)+`}`))
}

func methods(rs []*Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Method)
	}
	return out
}

func violationCodes(tr *Tracker) []string {
	var out []string
	for i := range tr.Violations().Len() {
		out = append(out, tr.Violations().At(i).Code)
	}
	return out
}

// A legacy task: the handle makes the request a task, polls follow the
// server's interval (never faster), and the terminal status is followed by
// tasks/result, whose answer is the request's outcome.
func TestTaskLegacyPolledToCompletion(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	if r.State != StateTask || r.Task == nil || r.Task.ID != "t-1" || r.Task.Status != wire.TaskWorking || r.Task.Message != "started" {
		t.Fatalf("after the handle: state %v, task %+v", r.State, r.Task)
	}
	if left, limit := r.Remaining(ms(10)); limit != LimitTTL || left != 60*time.Second {
		t.Errorf("remaining %v (%v), want the 60s TTL: a task has no response timeout", left, limit)
	}
	// The server suggested 1s: the configured 0.5s is not used.
	if got := h.due(900); len(got) != 0 {
		t.Fatalf("taskRequests at 0.9s = %v, want nothing before the server's 1s interval", methods(got))
	}
	if next, ok := h.tr.NextDeadline(); !ok || !next.Equal(ms(1010)) {
		t.Errorf("NextDeadline = %v, want the poll at 1.01s", next.Sub(t0))
	}
	polls := h.due(1010)
	if !slices.Equal(methods(polls), []string{wire.MethodTasksGet}) || polls[0].Parent != r.ID || polls[0].Role != RolePoll || !polls[0].ProgressToken.IsZero() {
		t.Fatalf("at 1.01s: %v, want one tasks/get of the task, with no progress token", methods(polls))
	}
	if got := h.due(1500); len(got) != 0 {
		t.Fatalf("a second poll while one is in flight: %v", methods(got))
	}
	h.answerTask(1020, polls[0], "t-1", wire.TaskWorking, `"statusMessage":"page 3 of 9","pollInterval":2000`)
	if r.Task.Message != "page 3 of 9" || r.Task.Polls != 1 || r.Task.PollInterval != 2*time.Second {
		t.Fatalf("after a poll: %+v", r.Task)
	}
	if got := h.due(2500); len(got) != 0 {
		t.Fatalf("polled at 2.5s, before the new 2s interval: %v", methods(got))
	}
	p2 := h.due(3020)
	h.answerTask(3030, p2[0], "t-1", wire.TaskCompleted, "")
	if r.State != StateTask || r.Task.TerminalAt != ms(3030) {
		t.Fatalf("completed seen: state %v (the legacy outcome comes from tasks/result)", r.State)
	}
	res := h.due(3030)
	if !slices.Equal(methods(res), []string{wire.MethodTasksResult}) {
		t.Fatalf("after completed: %v, want tasks/result", methods(res))
	}
	n, _ := res[0].ID.Int()
	h.recv(3040, result(int(n), `{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`))
	if r.State != StateCompleted || !r.Ended.Equal(ms(3040)) {
		t.Fatalf("after tasks/result: %v", r.State)
	}
	if raw, isErr, ok := h.tr.TaskOutcome(r.ID); !ok || isErr || !json.Valid(raw) || !contains(raw, "done") {
		t.Errorf("the task's outcome is %s (error %v), want tasks/result's result", raw, isErr)
	}
	hist := []string{}
	for _, c := range r.Task.History {
		hist = append(hist, c.Status+"/"+c.Via.String())
	}
	if !slices.Equal(hist, []string{"working/handle", "working/poll", "completed/poll"}) {
		t.Errorf("history %v", hist)
	}
	if c := h.tr.Counts(); c.InFlight != 0 || c.Done != 1 {
		t.Errorf("counts %+v: the polls are the task's, not rows of their own", c)
	}
	if v := violationCodes(h.tr); len(v) != 0 {
		t.Errorf("violations %v", v)
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

// A modern task carries its outcome inline in the terminal poll.
func TestTaskModernInlineResult(t *testing.T) {
	h := newTaskHarness(t, event.EraModern)
	r := h.call(0, true)
	h.handle(10, r, "m-1")
	p := h.due(1010)
	h.answerTask(1020, p[0], "m-1", wire.TaskCompleted, `"result":{"content":[],"isError":true}`)
	if r.State != StateFailed || !r.ToolError {
		t.Fatalf("a completed task whose tool result has isError: %v (tool error %v)", r.State, r.ToolError)
	}
	// One poll after the end, to see the terminal status stand, and
	// nothing after that.
	if got := h.due(5000); !slices.Equal(methods(got), []string{wire.MethodTasksGet}) {
		t.Errorf("work after the end: %v, want the one poll that confirms it", methods(got))
	} else {
		h.answerTask(5010, got[0], "m-1", wire.TaskCompleted, `"result":{"content":[],"isError":true}`)
	}
	if got := h.due(9000); len(got) != 0 {
		t.Errorf("work after the confirming poll: %v", methods(got))
	}
}

// c on a task sends tasks/cancel, never the transport signal; the request
// is cancelling until a poll shows the fate.
func TestTaskCancelHonoured(t *testing.T) {
	for _, era := range []event.Era{event.EraLegacy, event.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			h := newTaskHarness(t, era)
			r := h.call(0, true)
			h.handle(10, r, "t-1")
			if _, err := h.tr.RequestCancel(r.ID, "user", CauseUser, ms(500)); err != nil {
				t.Fatal(err)
			}
			if next, ok := h.tr.NextDeadline(); !ok || !next.Equal(ms(500)) {
				t.Errorf("NextDeadline after the cancel = %v, want now (the tasks/cancel is due)", next.Sub(t0))
			}
			c := h.due(500)
			if !slices.Equal(methods(c), []string{wire.MethodTasksCancel}) || r.Task.CancelID != c[0].ID {
				t.Fatalf("after the cancel: %v, want tasks/cancel", methods(c))
			}
			if r.Cancel.Signal != event.SignalTaskCancel || !r.Cancel.SignalAt.Equal(ms(500)) {
				t.Errorf("signal %v at %v, want tasks/cancel at 0.5s", r.Cancel.Signal, r.Cancel.SignalAt.Sub(t0))
			}
			n, _ := c[0].ID.Int()
			h.recv(600, result(int(n), `{}`))
			if !r.Task.CancelAckAt.Equal(ms(600)) || !r.Cancel.SettleBy.Equal(ms(600).Add(DefaultLateWindow)) {
				t.Fatalf("ack at %v, settle by %v", r.Task.CancelAckAt.Sub(t0), r.Cancel.SettleBy.Sub(t0))
			}
			// Still working after the ack: shown as it is, polling goes on.
			p := h.due(1010)
			h.answerTask(1020, p[0], "t-1", wire.TaskWorking, "")
			if r.State != StateCancelRequested {
				t.Fatalf("working after the ack: %v", r.State)
			}
			p = h.due(2020)
			h.answerTask(2030, p[0], "t-1", wire.TaskCancelled, "")
			if r.State != StateCancelled || r.Flagged() || r.Task.EndedAfterCancel != "" {
				t.Fatalf("cancelled: state %v, flagged %v, %+v", r.State, r.Flagged(), r.Task)
			}
		})
	}
}

// A task that finishes after tasks/cancel is the request's fate, flagged,
// its result kept as late and never a success.
func TestTaskCompletedAfterCancel(t *testing.T) {
	h := newTaskHarness(t, event.EraModern)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	h.tr.RequestCancel(r.ID, "user", CauseUser, ms(500))
	c := h.due(500)
	n, _ := c[0].ID.Int()
	h.recv(600, result(int(n), `{"resultType":"complete"}`))
	p := h.due(1010)
	h.answerTask(2600, p[0], "t-1", wire.TaskCompleted, `"result":{"content":[{"type":"text","text":"finished anyway"}]}`)
	if r.State != StateCancelled || !r.Flagged() || r.Task.EndedAfterCancel != wire.TaskCompleted || r.Task.AfterCancel != 2100*time.Millisecond || !r.Late.Response {
		t.Fatalf("completed after tasks/cancel: state %v, flagged %v, task %+v, late %+v", r.State, r.Flagged(), r.Task, r.Late)
	}
}

// The violations a task can show.
func TestTaskViolations(t *testing.T) {
	t.Run("status after terminal", func(t *testing.T) {
		h := newTaskHarness(t, event.EraModern)
		r := h.call(0, true)
		h.handle(10, r, "t-1")
		p := h.due(1010)
		h.answerTask(1020, p[0], "t-1", wire.TaskCompleted, `"result":{"content":[]}`)
		h.recv(1100, string(wire.Notification(wire.NotifyTasks, json.RawMessage(`{`+h.task("t-1", wire.TaskWorking, "")+`}`))))
		if v := violationCodes(h.tr); !slices.Equal(v, []string{ViolationTaskStatusAfterTerminal}) || r.Task.Status != wire.TaskCompleted {
			t.Fatalf("violations %v, status %s", v, r.Task.Status)
		}
	})
	t.Run("undeclared", func(t *testing.T) {
		h := newTaskHarness(t, event.EraLegacy)
		r := h.call(0, false)
		h.handle(10, r, "t-1")
		if v := violationCodes(h.tr); !slices.Equal(v, []string{ViolationTaskUndeclared}) || r.State != StateTask {
			t.Fatalf("violations %v, state %v (followed all the same)", v, r.State)
		}
	})
	t.Run("legacy cancel of a terminal task accepted", func(t *testing.T) {
		h := newTaskHarness(t, event.EraLegacy)
		r := h.call(0, true)
		h.handle(10, r, "t-1")
		p := h.due(1010)
		// The cancel is asked for while the poll that says completed is
		// on its way: its tasks/cancel then goes to a task the server knows
		// is over. (inflight sends none for a task it knows has ended.)
		h.tr.RequestCancel(r.ID, "user", CauseUser, ms(1015))
		h.answerTask(1020, p[0], "t-1", wire.TaskCompleted, "")
		reqs := h.due(1030)
		if !slices.Equal(methods(reqs), []string{wire.MethodTasksCancel, wire.MethodTasksResult}) {
			t.Fatalf("due: %v", methods(reqs))
		}
		n, _ := reqs[0].ID.Int()
		h.recv(1040, result(int(n), `{`+h.task("t-1", wire.TaskCancelled, "")+`}`))
		if v := violationCodes(h.tr); !slices.Contains(v, ViolationTaskCancelTerminalAccepted) {
			t.Fatalf("violations %v, want %s", v, ViolationTaskCancelTerminalAccepted)
		}
	})
	t.Run("legacy cancel answered with working", func(t *testing.T) {
		h := newTaskHarness(t, event.EraLegacy)
		r := h.call(0, true)
		h.handle(10, r, "t-1")
		h.tr.RequestCancel(r.ID, "user", CauseUser, ms(100))
		c := h.due(100)
		n, _ := c[0].ID.Int()
		h.recv(110, result(int(n), `{`+h.task("t-1", wire.TaskWorking, "")+`}`))
		if v := violationCodes(h.tr); !slices.Equal(v, []string{ViolationTaskCancelNotCancelled}) || r.State != StateCancelRequested {
			t.Fatalf("violations %v, state %v", v, r.State)
		}
	})
	t.Run("not durable", func(t *testing.T) {
		h := newTaskHarness(t, event.EraLegacy)
		r := h.call(0, true)
		h.handle(10, r, "t-1")
		p := h.due(1010)
		n, _ := p[0].ID.Int()
		h.recv(1020, rpcError(int(n), wire.CodeInvalidParams, "no such task"))
		if v := violationCodes(h.tr); !slices.Equal(v, []string{ViolationTaskNotDurable}) || r.State != StateTask {
			t.Fatalf("violations %v, state %v", v, r.State)
		}
		if next := h.due(2020); len(next) != 1 {
			t.Errorf("polling stopped after one refused poll: %v", methods(next))
		}
	})
	t.Run("server notifications/cancelled for a task", func(t *testing.T) {
		h := newTaskHarness(t, event.EraLegacy)
		r := h.call(0, true)
		h.handle(10, r, "t-1")
		h.recv(20, string(wire.Notification(wire.NotifyCancelled, json.RawMessage(`{"requestId":1,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`))))
		if v := violationCodes(h.tr); !slices.Equal(v, []string{ViolationCancelledForTask}) {
			t.Fatalf("violations %v", v)
		}
	})
}

// A poll that never answers is an ordinary request: it times out, is
// cancelled, and the next poll follows. The TTL ends a task that never
// reaches a terminal status; the maximum cancels it with tasks/cancel.
func TestTaskLimits(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	p := h.due(1010)
	exp, _ := h.tr.expire(ms(1010).Add(DefaultPollTimeout))
	if len(exp) != 1 || exp[0].ID != p[0].ID || exp[0].task {
		t.Fatalf("the silent poll's expiry: %+v", exp)
	}
	h.tr.expire(ms(1010).Add(DefaultPollTimeout + DefaultLateWindow))
	if p[0].State != StateTimedOut {
		t.Fatalf("poll %v", p[0].State)
	}
	if next := h.due(int((DefaultPollTimeout+DefaultLateWindow)/time.Millisecond) + 2100); len(next) != 1 || next[0].Method != wire.MethodTasksGet {
		t.Fatalf("after a poll timed out: %v", methods(next))
	}
	h.tr.expire(ms(60010))
	if r.State != StateTimedOut || r.LocalError == "" {
		t.Fatalf("after the TTL: %v %q", r.State, r.LocalError)
	}

	h2 := newTaskHarness(t, event.EraModern)
	h2.tr = NewTracker(Config{MaxTimeout: 20 * time.Second})
	h2.tr.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &event.ConnInfo{Era: event.EraModern, Transport: event.TransportStdio}})
	r2 := h2.call(0, true)
	h2.handle(10, r2, "m-1")
	exp, _ = h2.tr.expire(ms(20000))
	if len(exp) != 1 || !exp[0].task || exp[0].Limit != LimitMax || r2.State != StateCancelRequested {
		t.Fatalf("at the maximum: %+v, state %v", exp, r2.State)
	}
	if got := methods(h2.due(20000)); !slices.Contains(got, wire.MethodTasksCancel) {
		t.Fatalf("the maximum's cancel: %v, want tasks/cancel", got)
	}
}

// A handle that answers a request already cancelled with the transport's
// signal: the task exists anyway, and gets its tasks/cancel.
func TestTaskHandleAfterTransportCancel(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.tr.RequestCancel(r.ID, "user", CauseUser, ms(5))
	h.cancelSent(5, r, event.SignalNotification)
	h.handle(400, r, "t-1")
	if r.State != StateCancelled || r.Task == nil || !r.Task.AfterCancelHandle {
		t.Fatalf("state %v task %+v", r.State, r.Task)
	}
	if got := methods(h.due(400)); !slices.Equal(got, []string{wire.MethodTasksCancel}) {
		t.Fatalf("due %v, want tasks/cancel for the task the handle named", got)
	}
	if got := h.due(5000); len(got) != 0 {
		t.Fatalf("more work: %v", methods(got))
	}
}

// A modern task is also asked for on subscriptions/listen: kept where the
// server's acknowledgement lists it, closed where it does not, and closed
// when the task ends; its notifications/tasks update the task.
func TestTaskListen(t *testing.T) {
	for _, offers := range []bool{true, false} {
		t.Run(fmt.Sprintf("offered=%v", offers), func(t *testing.T) {
			h := &taskHarness{harness: newHarness(t, Config{PollInterval: 500 * time.Millisecond}, event.EraModern, event.TransportStdio), modern: true}
			r := h.call(0, true)
			h.handle(10, r, "t-1")
			got := h.due(10)
			if len(got) != 1 || got[0].Method != wire.MethodSubscriptionsListen || got[0].Role != RoleListen ||
				!strings.Contains(string(got[0].ChildParams), `"taskIds":["t-1"]`) {
				t.Fatalf("due after a modern handle: %v %s", methods(got), got[0].ChildParams)
			}
			l := got[0]
			lid, _ := l.ID.Int()
			agreed := `[]`
			if offers {
				agreed = `["t-1"]`
			}
			h.recv(20, string(wire.Notification(wire.NotifySubscriptionAck, json.RawMessage(fmt.Sprintf(
				`{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"notifications":{"taskIds":%s}}`, lid, agreed)))))
			if r.Task.Listening != offers {
				t.Fatalf("Listening = %v after an acknowledgement listing %s", r.Task.Listening, agreed)
			}
			exp, _ := h.tr.expire(ms(30))
			closed := len(exp) == 1 && exp[0].ID == l.ID && !exp[0].task
			if closed == offers {
				t.Fatalf("expire %+v: the listen must be closed exactly when the server offers nothing (offered %v)", exp, offers)
			}
			if !offers {
				return
			}
			h.recv(400, string(wire.Notification(wire.NotifyTasks, json.RawMessage(`{`+h.task("t-1", wire.TaskCompleted, `"result":{"content":[]}`)+`}`))))
			if r.State != StateCompleted || r.Task.History[len(r.Task.History)-1].Via != ViaNotification {
				t.Fatalf("after notifications/tasks: %v %+v", r.State, r.Task.History)
			}
			exp, _ = h.tr.expire(ms(410))
			if len(exp) != 1 || exp[0].ID != l.ID {
				t.Fatalf("the task ended but its listen was not closed: %+v", exp)
			}
		})
	}
}
