package session

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Tasks (the legacy tasks utility of 2025-11-25, and the modern tasks
// extension): a server may answer a tools/call with a task handle and do
// the work afterwards. The request then continues as its task: it is in
// StateTask while the task works, it is polled with tasks/get at the
// server's interval (never faster, and never faster than MinPollInterval
// whatever the server says), once more after its terminal status (which
// must stand), it is cancelled with tasks/cancel
// (never notifications/cancelled), and it ends when a poll, a status
// notification or (legacy) tasks/result shows its terminal status.
//
// The tracker does no I/O, so it never sends a poll: Due begins
// the tasks/get, tasks/result and tasks/cancel requests that are due, and
// the caller sends them like any other request. They are the task's
// requests (Request.Parent, Request.Role), each an ordinary request with
// its own timeout, so a poll that never answers is cancelled and the next
// one follows.

// TaskRole says what a request does for a task.
type TaskRole uint8

// The roles.
const (
	RoleNone   TaskRole = iota
	RolePoll            // tasks/get
	RoleResult          // tasks/result (legacy): the underlying request's outcome
	RoleCancel          // tasks/cancel
	RoleListen          // subscriptions/listen for the task's notifications/tasks (modern)
	RoleUpdate          // tasks/update: the answers to an input_required task's inputRequests (modern)
)

func (r TaskRole) String() string {
	switch r {
	case RolePoll:
		return "poll"
	case RoleResult:
		return "result"
	case RoleCancel:
		return "cancel"
	case RoleListen:
		return "listen"
	case RoleUpdate:
		return "update"
	}
	return ""
}

// TaskVia says how a task status reached the tracker.
type TaskVia uint8

// The sources of a task status.
const (
	ViaHandle       TaskVia = iota // the CreateTaskResult
	ViaPoll                        // a tasks/get result
	ViaNotification                // notifications/tasks/status or notifications/tasks
	ViaCancel                      // a legacy tasks/cancel result
)

func (v TaskVia) String() string {
	switch v {
	case ViaPoll:
		return "poll"
	case ViaNotification:
		return "notification"
	case ViaCancel:
		return "cancel"
	}
	return "handle"
}

// MaxTaskHistory bounds Task.History; later changes are counted in
// Task.HistoryDropped.
const MaxTaskHistory = 64

// Task is what the tracker knows of a request's task.
type Task struct {
	// ID is the server's task ID.
	ID string
	// Status is the latest status seen ("working", "input_required",
	// "completed", "failed", "cancelled"); Message its statusMessage
	// (clipped; raw, sanitise before display).
	Status  string
	Message string
	// HandleAt is when the CreateTaskResult arrived.
	HandleAt time.Time
	// TTL is the task's time to live from its creation, as the server
	// last gave it; TTLUnlimited when it said null, TTLKnown when it said
	// anything.
	TTL                    time.Duration
	TTLKnown, TTLUnlimited bool
	// PollInterval is the server's latest suggestion (0: none given).
	// PollFloored says it was below MinPollInterval, so the task is
	// polled at the floor instead.
	PollInterval time.Duration
	PollFloored  bool
	// History is every change of status or of its message seen, oldest
	// first.
	History        []TaskChange
	HistoryDropped int
	// Polls counts tasks/get answered; LastPollAt is the last answer.
	Polls      int
	LastPollAt time.Time
	// NextPollAt is when the next tasks/get is due (zero: none).
	NextPollAt time.Time
	// TerminalAt is when a terminal status was first seen.
	TerminalAt time.Time
	// AfterTerminal is the first other status the server said after the
	// terminal one (a ViolationTaskStatusAfterTerminal; the terminal
	// status stands), AfterTerminalVia how it said it.
	AfterTerminal    string
	AfterTerminalVia TaskVia
	// InputRequests is what an input_required task asks for (the raw
	// inputRequests object, clipped; sanitise before display).
	InputRequests string
	// LastPollError is the error of the last tasks/get that failed.
	LastPollError *wire.Error

	// CancelID is the tasks/cancel request (zero until one began);
	// CancelSentAt when it left, CancelAckAt when the server acknowledged
	// it, CancelError the error it answered instead.
	CancelID     wire.ID
	CancelSentAt time.Time
	CancelAckAt  time.Time
	CancelError  *wire.Error
	// EndedAfterCancel is the terminal status other than "cancelled" that
	// the task reached after tasks/cancel (the server finished the work
	// anyway), AfterCancel how long after the cancel it was seen; the
	// result it brought is kept as a late result, never as a success.
	EndedAfterCancel string
	AfterCancel      time.Duration
	// AfterCancelHandle says the handle itself arrived after the request
	// was cancelled with the transport's signal: the task exists on the
	// server anyway, and is cancelled with tasks/cancel.
	AfterCancelHandle bool

	modern     bool
	pollBase   time.Time     // the handle or the last poll's end
	pollWait   time.Duration // how long after pollBase the poll in flight began
	pollFirst  bool          // pollWait is counted from the handle
	rateJudged wire.ID       // the poll already judged rate-limited
	cancelDue  bool          // a tasks/cancel is to begin
	resultDue  bool          // a tasks/result is to begin (legacy, terminal seen)
	confirmDue bool          // the one poll after the terminal status is to begin
	polling    wire.ID       // the tasks/get in flight
	fetching   wire.ID       // the tasks/result in flight
	cancelling wire.ID       // the tasks/cancel in flight
	// listen is the subscriptions/listen asking for the task's
	// notifications/tasks (modern; zero: none yet); listenDue says one is
	// to begin, Listening that the server's acknowledgement lists the task.
	listen    wire.ID
	listenDue bool
	Listening bool
	// resultAt is when a tasks/result due may begin (after a failed one,
	// a poll interval later).
	resultAt time.Time

	// The answers to an input_required task (modern: tasks/update;
	// session/task_input.go): Answered are the inputRequests keys
	// answered, never asked again (a key is unique over the task's
	// life); UpdateAckAt when the server acknowledged the last
	// tasks/update, UpdateError the error it answered instead.
	Answered    map[string]bool
	UpdateAckAt time.Time
	UpdateError *wire.Error
	updateDue   map[string]json.RawMessage // answers to send in the next tasks/update
	updating    wire.ID                    // the tasks/update in flight
	updateKeys  []string                   // the keys it answers
}

// Pending reports task requests still to send or still unanswered: a
// tasks/cancel or tasks/result due or in flight (not polls). A headless run
// waits for them after the request's fate is known, so that its report
// has the acknowledgement and the outcome.
func (tk *Task) Pending() bool {
	return tk.cancelDue || tk.resultDue || !tk.fetching.IsZero() || !tk.cancelling.IsZero()
}

// TaskChange is one status change of a task.
type TaskChange struct {
	At      time.Time
	Status  string
	Message string
	Via     TaskVia
}

// Terminal reports whether the task reached a terminal status.
func (tk *Task) Terminal() bool { return wire.IsTerminalTaskStatus(tk.Status) }

// TaskRequestsBegun counts the task requests Due began (polls,
// tasks/result, tasks/cancel): zero means no view need look for them.
func (t *Tracker) TaskRequestsBegun() int { return t.taskChildren }

// TaskRequestsKept counts the task requests in history (not evicted).
func (t *Tracker) TaskRequestsKept() int { return t.taskChildren - t.taskChildrenEvicted }

// ListenID is the subscriptions/listen inflight opened for the task's
// notifications/tasks (modern; zero: none).
func (tk *Task) ListenID() wire.ID { return tk.listen }

// IsTask reports whether the request continues as a task.
func (r *Request) IsTask() bool { return r.Task != nil }

// declaresTask reports whether params, as sent, ask for or accept a task:
// a legacy "task" member, or the modern extension in the per-request
// client capabilities.
func declaresTask(params json.RawMessage, modern bool) bool {
	if modern {
		if !bytes.Contains(params, []byte(wire.ExtensionTasks)) {
			return false
		}
		caps, ok := wire.MetaValue(params, wire.MetaClientCapabilities)
		if !ok {
			return false
		}
		var c struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		return json.Unmarshal(caps, &c) == nil && c.Extensions[wire.ExtensionTasks] != nil
	}
	if !bytes.Contains(params, []byte(`"task"`)) {
		return false
	}
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	return json.Unmarshal(params, &p) == nil && len(p.Task) > 0 && p.Task[0] == '{'
}

// taskHandle turns a timely result that is a task handle into the
// request's task, and reports whether it was one.
func (t *Tracker) taskHandle(r *Request, ev *event.Event) bool {
	modern := t.modernFor(r)
	ts, ok := wire.TaskHandle(ev.Msg.Result, modern)
	if !ok || r.Role != RoleNone {
		return false
	}
	if r.Method != wire.MethodToolsCall {
		t.violate(ViolationTaskUnsupportedMethod, r.Method+" was answered with a task handle; only tools/call supports tasks, so the response is invalid", r, r.ID, ev)
		r.LocalError = "invalid result: a task handle for " + r.Method + ", which does not support tasks"
		t.finish(r, StateFailed, ev.Time)
		return true
	}
	if !r.taskDeclared {
		what := "did not carry the task field"
		if modern {
			what = "did not declare the " + wire.ExtensionTasks + " extension"
		}
		t.violate(ViolationTaskUndeclared, "request "+r.ID.String()+" "+what+", yet the server answered with task "+strconv.Quote(clip(ts.ID, 128)), r, r.ID, ev)
	}
	tk := t.newTask(r, ts, modern, ev.Time)
	if r.State == StateCancelRequested {
		// The handle was read before the cancel was asked for, and applied
		// after it: the cancel is the task's now, and goes out as
		// tasks/cancel (the transport's signal found nothing in flight).
		t.recordStatus(tk, ts, ViaHandle, ev.Time)
		tk.cancelDue = true
		tk.NextPollAt = ev.Time.Add(t.pollInterval(tk))
		tk.pollBase = ev.Time
		t.due(ev.Time)
		return true
	}
	t.setState(r, StateTask, ev.Time)
	t.applyTask(r, ts, ViaHandle, ev)
	if r.State == StateTask {
		tk.NextPollAt = ev.Time.Add(t.pollInterval(tk))
		if modern && !t.cfg.NoTaskListen {
			// The extension's notifications/tasks come on a
			// subscriptions/listen naming the task, where the server
			// offers them (its acknowledgement says); polling goes on.
			tk.listenDue = true
			t.due(ev.Time)
		}
	}
	tk.pollBase = ev.Time
	return true
}

// lateTaskHandle records a task handle that answered a request already
// given up (its transport cancel went out first): the task exists on the
// server all the same, so it is cancelled with tasks/cancel.
func (t *Tracker) lateTaskHandle(r *Request, ev *event.Event) {
	if r.Task != nil || r.Role != RoleNone || r.Method != wire.MethodToolsCall {
		return
	}
	ts, ok := wire.TaskHandle(ev.Msg.Result, t.modernFor(r))
	if !ok {
		return
	}
	tk := t.newTask(r, ts, t.modernFor(r), ev.Time)
	tk.AfterCancelHandle = true
	t.recordStatus(tk, ts, ViaHandle, ev.Time)
	if !tk.Terminal() {
		tk.cancelDue = true
		t.due(ev.Time)
	}
}

// due marks immediate task work (a tasks/cancel or tasks/result to
// begin), for NextDeadline.
func (t *Tracker) due(at time.Time) {
	if t.observing {
		// A proxy's tracker sends nothing: a host's task work is the
		// host's, and a due time nobody clears would keep Due (and the
		// recorder's timer) spinning (found in review).
		return
	}
	if t.taskDue.IsZero() || at.Before(t.taskDue) {
		t.taskDue = at
	}
}

func (t *Tracker) newTask(r *Request, ts wire.TaskState, modern bool, at time.Time) *Task {
	tk := &Task{ID: clip(ts.ID, 4096), HandleAt: at, modern: modern}
	r.Task = tk
	t.tasks[tk.ID] = r
	return tk
}

// pollInterval is how long after a poll's answer the next one is due: the
// server's suggestion, else the configured default.
func (t *Tracker) pollInterval(tk *Task) time.Duration {
	if tk.PollInterval > 0 {
		return max(tk.PollInterval, MinPollInterval)
	}
	return t.cfg.PollInterval
}

// taskDeadline is when a task request gives up, and which limit that is:
// its maximum (nothing resets it), or the task's TTL, counted from the
// handle's arrival (the server's createdAt is on the server's clock).
func (r *Request) taskDeadline() (time.Time, Limit) {
	d, limit := r.Timeout.MaxDeadline, LimitMax
	if tk := r.Task; tk != nil && tk.TTLKnown && !tk.TTLUnlimited && tk.TTL > 0 {
		if ttl := tk.HandleAt.Add(tk.TTL); ttl.Before(d) {
			d, limit = ttl, LimitTTL
		}
	}
	return d, limit
}

// TTLLeft is the time left of a task's TTL, and whether it has one.
func (r *Request) TTLLeft(now time.Time) (time.Duration, bool) {
	tk := r.Task
	if tk == nil || !tk.TTLKnown || tk.TTLUnlimited || tk.TTL <= 0 {
		return 0, false
	}
	return max(0, tk.HandleAt.Add(tk.TTL).Sub(now)), true
}

// nextTaskWork is when taskRequests next has something to begin for r.
func (r *Request) nextTaskWork() (time.Time, bool) {
	tk := r.Task
	if tk == nil || r.ByHost {
		// A host's task is polled by the host: a proxy's tracker begins
		// no task request, so its poll times are no deadline of Due's.
		return time.Time{}, false
	}
	if tk.resultDue && tk.fetching.IsZero() && !tk.resultAt.IsZero() {
		return tk.resultAt, true
	}
	if (r.State.IsActive() && !tk.Terminal() || tk.confirmDue) && tk.polling.IsZero() && !tk.NextPollAt.IsZero() {
		return tk.NextPollAt, true
	}
	return time.Time{}, false
}

// taskRequests begins the task requests due at now (Due's second part),
// for the caller to send like any request (with no progress token): a
// tasks/cancel for a task whose cancel was requested, a tasks/result for a
// legacy task whose terminal status was seen, and a tasks/get for every
// task whose poll interval has passed and that has no poll in flight. Each
// is an ordinary request with its own timeout.
func (t *Tracker) taskRequests(now time.Time) []*Request {
	t.taskDue = time.Time{}
	var out []*Request
	for i := 0; i < len(t.active); i++ {
		r := t.active[i]
		if r.Task != nil {
			out = t.taskWork(r, now, out)
		}
	}
	// A handle that came after a transport cancel belongs to a request
	// already final, whose tasks/cancel is due once; a task that finished
	// after tasks/cancel has its (late) outcome to fetch.
	// In the order the requests began, not the map's: a tracker fed the
	// same events must begin the same requests under the same IDs (a
	// replay plays a trace on from a checkpoint, and must reach what the
	// run reached).
	var final []*Request
	for _, r := range t.tasks {
		if r.State.IsFinal() && (r.Task.cancelDue || r.Task.resultDue || r.Task.confirmDue) {
			final = append(final, r)
		}
	}
	slices.SortFunc(final, func(a, b *Request) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID.String(), b.ID.String())
	})
	for _, r := range final {
		out = t.taskWork(r, now, out)
	}
	return out
}

func (t *Tracker) taskWork(r *Request, now time.Time, out []*Request) []*Request {
	tk := r.Task
	if tk.cancelDue {
		tk.cancelDue = false
		c := t.beginChild(r, wire.MethodTasksCancel, RoleCancel, now)
		tk.CancelID, tk.cancelling = c.ID, c.ID
		out = append(out, c)
	}
	if tk.resultDue && tk.fetching.IsZero() && now.Before(tk.resultAt) {
		t.due(tk.resultAt) // taskRequests cleared it: still to do
	}
	if tk.resultDue && tk.fetching.IsZero() && !now.Before(tk.resultAt) {
		tk.resultDue = false
		c := t.beginChild(r, wire.MethodTasksResult, RoleResult, now)
		tk.fetching = c.ID
		out = append(out, c)
	}
	if tk.updateDue != nil && tk.updating.IsZero() && r.State.IsActive() {
		out = append(out, t.beginUpdate(r, now))
	}
	if tk.listenDue && r.State.IsActive() {
		tk.listenDue = false
		c := t.beginChild(r, wire.MethodSubscriptionsListen, RoleListen, now)
		tk.listen = c.ID
		out = append(out, c)
	}
	// A task is polled until its terminal status, then once more (the
	// status must stand: one that changes is flagged), never while its
	// tasks/result is awaited.
	if tk.confirmDue && (r.State == StateTimedOut || r.State.IsFinal() && r.Cancel != nil) {
		// The request was given up before the poll that would confirm
		// its task's end: nothing more is sent for it.
		tk.confirmDue = false
	}
	pollable := r.State.IsActive() && !tk.Terminal() || tk.confirmDue
	if pollable && tk.polling.IsZero() && !tk.NextPollAt.IsZero() && now.Before(tk.NextPollAt) && tk.confirmDue {
		t.due(tk.NextPollAt) // taskRequests cleared it: still to do
	}
	if pollable && tk.polling.IsZero() && !tk.NextPollAt.IsZero() && !now.Before(tk.NextPollAt) {
		tk.confirmDue = false
		c := t.beginChild(r, wire.MethodTasksGet, RolePoll, now)
		tk.polling = c.ID
		tk.pollWait, tk.pollFirst = now.Sub(tk.pollBase), tk.pollBase.Equal(tk.HandleAt)
		tk.NextPollAt = time.Time{}
		out = append(out, c)
	}
	return out
}

func (t *Tracker) beginChild(parent *Request, method string, role TaskRole, now time.Time) *Request {
	params := wire.TaskParams(parent.Task.ID)
	switch role {
	case RoleListen:
		params = listenParams(parent.Task.ID)
	case RoleUpdate:
		params = updateParams(parent.Task.ID, parent.Task.updateDue)
	}
	c := t.Begin(method, params, RequestOptions{Timeout: t.cfg.PollTimeout}, now)
	c.Parent, c.Role, c.ChildParams = parent.ID, role, params
	t.taskChildren++
	c.ProgressToken = wire.ID{}
	// The task's own requests are not the user's: the header counts the
	// task, not its polls.
	t.counts.InFlight--
	c.Target = parent.Task.ID
	return c
}

// childSent notes when a task's cancel left: that is the task's cancel
// signal.
func (t *Tracker) childSent(c *Request, ev *event.Event) {
	p := t.byID[c.Parent]
	if p == nil || p.Task == nil || c.Role != RoleCancel {
		return
	}
	p.Task.CancelSentAt = ev.Time
	if p.Cancel != nil && p.Cancel.Signal == event.SignalNone {
		p.Cancel.Signal = event.SignalTaskCancel
		p.Cancel.SignalAt = ev.Time
	}
}

// childAnswered applies the answer to one of a task's requests to the
// task. The child itself was finished as any request is.
func (t *Tracker) childAnswered(c *Request, ev *event.Event) {
	p := t.byID[c.Parent]
	if p == nil || p.Task == nil {
		return
	}
	tk := p.Task
	t.log.ring.buf[t.curLog].Method = c.Method
	msg := &ev.Msg
	switch c.Role {
	case RolePoll:
		if tk.polling != c.ID {
			// An answer to a poll given up on (it timed out): another is
			// in flight or due, and this one's status is older than it.
			return
		}
		tk.polling = wire.ID{}
		if msg.Kind == wire.KindError {
			tk.LastPollError = clipError(msg.Error)
			t.pollRefused(p, c, ev, 0)
			if tk.Polls == 0 && msg.Error.Code == wire.CodeInvalidParams && !tk.Terminal() {
				t.violate(ViolationTaskNotDurable, "the first tasks/get of task "+strconv.Quote(clip(tk.ID, 128))+
					" was refused with -32602 (no such task), though the server had returned its handle", p, c.ID, ev)
			} else if msg.Error.Code == wire.CodeInvalidParams && !tk.Terminal() && p.State.IsActive() {
				// The server no longer knows the task (it expired, or was
				// deleted): nothing more will come of it.
				p.LocalError = "the server no longer knows the task (tasks/get: " + clip(msg.Error.Message, 256) + ")"
				if p.State == StateCancelRequested {
					t.settle(p, ev.Time)
				} else {
					t.finish(p, StateFailed, ev.Time)
				}
				return
			}
		} else if ts, err := wire.DecodeTask(msg.Result); err == nil {
			tk.Polls++
			tk.LastPollAt = ev.Time
			tk.LastPollError = nil
			t.applyTask(p, ts, ViaPoll, ev)
		} else {
			t.violate(ViolationMalformedMessage, "tasks/get result is not a task: "+err.Error(), p, c.ID, ev)
		}
		if p.State.IsActive() && !tk.Terminal() {
			tk.NextPollAt = ev.Time.Add(t.pollInterval(tk))
		}
	case RoleResult:
		// The outcome is in: a terminal status seen while this call was
		// out asks for no other.
		tk.fetching, tk.resultDue = wire.ID{}, false
		t.taskOutcome(p, ev)
	case RoleUpdate:
		t.updateAnswered(tk, c, msg, ev.Time)
	case RoleCancel:
		if msg.Kind == wire.KindError {
			tk.CancelError = clipError(msg.Error)
			return
		}
		tk.CancelAckAt = ev.Time
		ts, tsErr := wire.DecodeTask(msg.Result)
		// Terminal before the cancel: as inflight knew it, or as the
		// server's own answer says (a status other than cancelled that
		// ends the task).
		wasTerminal := tk.Terminal() && tk.TerminalAt.Before(c.Created)
		endedBefore := tsErr == nil && wire.IsTerminalTaskStatus(ts.Status) && ts.Status != wire.TaskCancelled
		if !tk.modern && (wasTerminal || endedBefore) {
			status := tk.Status
			if endedBefore {
				status = clip(ts.Status, 64)
			}
			t.violate(ViolationTaskCancelTerminalAccepted, "tasks/cancel of task "+strconv.Quote(clip(tk.ID, 128))+
				", already "+status+", was acknowledged instead of refused with -32602", p, c.ID, ev)
		}
		if p.State == StateCancelRequested {
			// Watch for the task's fate for the late window after the ack.
			p.Cancel.SettleBy = ev.Time.Add(p.LateWindow)
		}
		if tsErr == nil {
			if !tk.modern && !wasTerminal && !endedBefore && ts.Status != wire.TaskCancelled {
				t.violate(ViolationTaskCancelNotCancelled, "tasks/cancel of task "+strconv.Quote(clip(tk.ID, 128))+
					" was answered with status "+strconv.Quote(clip(ts.Status, 64))+", not cancelled", p, c.ID, ev)
			}
			t.applyTask(p, ts, ViaCancel, ev)
		}
	}
}

// onTaskNotification applies a task status notification (legacy
// notifications/tasks/status; modern notifications/tasks) to its task.
func (t *Tracker) onTaskNotification(ev *event.Event) {
	ts, err := wire.DecodeTask(ev.Msg.Params)
	if err != nil {
		t.violate(ViolationMalformedMessage, ev.Msg.Method+": "+err.Error(), nil, wire.ID{}, ev)
		return
	}
	r := t.tasks[ts.ID]
	if r == nil {
		return // a task inflight does not follow (or one evicted): logged only
	}
	t.log.ring.buf[t.curLog].ID = r.ID
	t.applyTask(r, ts, ViaNotification, ev)
}

// recordStatus updates what the task says of itself, and reports whether
// a status other than its terminal one came after it (a violation the
// caller records).
func (t *Tracker) recordStatus(tk *Task, ts wire.TaskState, via TaskVia, at time.Time) (afterTerminal bool) {
	if tk.Terminal() && ts.Status != tk.Status {
		return true
	}
	if ts.Message != "" || via != ViaHandle {
		tk.Message = clip(ts.Message, maxMessageBytes)
	}
	if ts.PollInterval > 0 {
		// Kept as the server said it (at least 1ns, so that it still
		// counts as given), for the detail to show what the floor overrode.
		tk.PollInterval = max(time.Duration(ts.PollInterval*float64(time.Millisecond)), 1)
		tk.PollFloored = tk.PollInterval < MinPollInterval
	}
	if ts.TTLSet {
		tk.TTLKnown, tk.TTLUnlimited = true, ts.TTLNull
		tk.TTL = time.Duration(ts.TTL * float64(time.Millisecond))
	}
	if len(ts.InputRequests) > 0 {
		tk.InputRequests = clip(string(ts.InputRequests), maxMessageBytes)
	}
	if ts.Status != tk.Status || len(tk.History) == 0 || (len(tk.History) > 0 && tk.History[len(tk.History)-1].Message != tk.Message) {
		// A change of status or of what the task says of it.
		tk.Status = clip(ts.Status, 64)
		if len(tk.History) < MaxTaskHistory {
			tk.History = append(tk.History, TaskChange{At: at, Status: tk.Status, Message: tk.Message, Via: via})
		} else {
			tk.HistoryDropped++
		}
		if tk.Terminal() && tk.TerminalAt.IsZero() {
			tk.TerminalAt = at
		}
	}
	return false
}

// applyTask applies a task status the server reported to the task's
// request: a terminal status ends the request (or, after tasks/cancel, is
// its fate), and a change after a terminal status is a violation.
func (t *Tracker) applyTask(r *Request, ts wire.TaskState, via TaskVia, ev *event.Event) {
	tk := r.Task
	if ts.ID != tk.ID {
		t.violate(ViolationMalformedMessage, "a task status for "+strconv.Quote(clip(ts.ID, 128))+" answered a request about task "+strconv.Quote(clip(tk.ID, 128)), r, r.ID, ev)
		return
	}
	wasTerminal := tk.Terminal()
	defer t.fetchForInput(r, ev.Time)
	if t.recordStatus(tk, ts, via, ev.Time) {
		if tk.AfterTerminal == "" {
			tk.AfterTerminal, tk.AfterTerminalVia = clip(ts.Status, 64), via
		}
		t.violate(ViolationTaskStatusAfterTerminal, "task "+strconv.Quote(clip(tk.ID, 128))+" said "+strconv.Quote(clip(ts.Status, 64))+
			" ("+via.String()+") after its terminal status "+strconv.Quote(tk.Status), r, r.ID, ev)
		return
	}
	if wasTerminal || !tk.Terminal() {
		return
	}
	// The first terminal status: one more poll, a poll interval later,
	// to see that it stands.
	if !t.observing && !r.ByHost {
		tk.confirmDue = true
		tk.NextPollAt = ev.Time.Add(t.pollInterval(tk))
		t.due(tk.NextPollAt)
	}
	cancelled := r.Cancel != nil
	switch {
	case tk.Status == wire.TaskCancelled && cancelled:
		if r.State == StateCancelRequested {
			t.settle(r, ev.Time) // honoured
		}
	case tk.Status == wire.TaskCancelled:
		r.LocalError = "the server cancelled the task (inflight did not ask)"
		if tk.Message != "" {
			r.LocalError += ": " + tk.Message
		}
		t.finish(r, StateFailed, ev.Time)
	case cancelled:
		// Finished anyway after tasks/cancel: its fate, flagged; the
		// result is late, never a success.
		tk.EndedAfterCancel = tk.Status
		tk.AfterCancel = ev.Time.Sub(r.Cancel.At)
		r.Late.Response = true
		r.Late.ResponseAt = ev.Time
		r.Late.AfterCancel = tk.AfterCancel
		r.Late.LastAt = ev.Time
		t.flag(r)
		t.changes.add(Change{Kind: ChangeLate, ID: r.ID, At: ev.Time, What: ArrivalResponse})
		if tk.modern {
			t.keepTaskOutcome(r, ts, ev)
		} else {
			tk.resultDue = true
			t.due(ev.Time)
		}
		if r.State == StateCancelRequested {
			t.settle(r, ev.Time)
		}
	case tk.modern:
		t.keepTaskOutcome(r, ts, ev)
		t.endTask(r, ts.Result, ts.Error, ev.Time)
	case r.State.IsFinal():
		// Legacy, the outcome in already: the tasks/result called on
		// input_required brought it before the status said so.
	default:
		// Legacy: the outcome is fetched with tasks/result.
		tk.resultDue = true
		t.due(ev.Time)
	}
}

// keepTaskOutcome keeps the message that carried a modern task's outcome
// as the request's response, for the detail view.
func (t *Tracker) keepTaskOutcome(r *Request, ts wire.TaskState, ev *event.Event) {
	if ts.Error != nil {
		r.Error = clipError(ts.Error)
		b, _ := json.Marshal(ts.Error)
		t.raw.put(rawKey{r.ID, rawTaskOutcome}, b)
		return
	}
	if len(ts.Result) > 0 {
		t.raw.put(rawKey{r.ID, rawTaskOutcome}, bytes.Clone(ts.Result))
	}
}

// TaskOutcome is the outcome a task request's task brought (its result
// object, or its JSON-RPC error object; isError says which), while the
// raw store keeps it.
func (t *Tracker) TaskOutcome(id wire.ID) (raw []byte, isError bool, ok bool) {
	r := t.byID[id]
	if r == nil || r.Task == nil {
		return nil, false, false
	}
	raw, ok = t.raw.get(rawKey{id, rawTaskOutcome})
	return raw, r.Error != nil && ok, ok
}

// taskOutcome applies a legacy tasks/result answer: exactly what the
// underlying request would have returned.
func (t *Tracker) taskOutcome(r *Request, ev *event.Event) {
	msg := &ev.Msg
	if msg.Kind == wire.KindError {
		b, _ := json.Marshal(msg.Error)
		t.raw.put(rawKey{r.ID, rawTaskOutcome}, b)
	} else {
		t.raw.put(rawKey{r.ID, rawTaskOutcome}, bytes.Clone(msg.Result))
	}
	if r.State != StateTask && !endedBeforeCancel(r) {
		// After tasks/cancel (or the task's end was already applied): a
		// late result, kept, not folded into success.
		if msg.Kind == wire.KindError {
			r.Error = clipError(msg.Error)
		}
		return
	}
	if msg.Kind == wire.KindError {
		t.endTask(r, nil, msg.Error, ev.Time)
		return
	}
	t.endTask(r, msg.Result, nil, ev.Time)
}

// endTask ends a task request that was not cancelled with its outcome.
func (t *Tracker) endTask(r *Request, result json.RawMessage, rpcErr *wire.Error, at time.Time) {
	if r.State != StateTask && !endedBeforeCancel(r) {
		return
	}
	switch {
	case rpcErr != nil:
		r.Error = clipError(rpcErr)
		t.finish(r, StateFailed, at)
	case isToolError(result):
		r.ToolError = true
		t.finish(r, StateFailed, at)
	case r.Task.Status == wire.TaskFailed:
		r.LocalError = "the task failed"
		if r.Task.Message != "" {
			r.LocalError += ": " + r.Task.Message
		}
		t.finish(r, StateFailed, at)
	default:
		t.finish(r, StateCompleted, at)
	}
}

// childEnded frees the task for its next poll or fetch once one of its
// requests ended, answered or not (a poll that timed out is followed by the
// next one).
func (t *Tracker) childEnded(c *Request, now time.Time) {
	p := t.byID[c.Parent]
	if p == nil || p.Task == nil {
		return
	}
	tk := p.Task
	switch {
	case c.Role == RolePoll && tk.polling == c.ID && !c.responded:
		// Given up on without an answer (childAnswered handles one).
		tk.polling = wire.ID{}
		if p.State.IsActive() && !tk.Terminal() {
			tk.NextPollAt = now.Add(t.pollInterval(tk))
		}
		tk.pollBase = now
	case c.Role == RoleResult && tk.fetching == c.ID && !c.responded:
		// The result never came: ask again a poll interval later (not at
		// once: a failing server would be asked in a loop), unless the
		// connection is gone.
		tk.fetching = wire.ID{}
		if !t.closed && !p.State.IsFinal() {
			tk.resultDue = true
			tk.resultAt = now.Add(t.pollInterval(tk))
			t.due(tk.resultAt)
		}
	case c.Role == RoleCancel && tk.cancelling == c.ID:
		tk.cancelling = wire.ID{}
	case c.Role == RoleUpdate && tk.updating == c.ID && !c.responded:
		// Given up on without an answer: the server may not have its
		// answers, so they may be given again.
		tk.updating = wire.ID{}
		tk.unanswer()
	}
}

// listenParams asks a modern server for a task's notifications/tasks.
func listenParams(taskID string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"notifications": map[string]any{"taskIds": []string{taskID}}})
	return b
}

// taskListenAcked applies the acknowledgement of a task's listen: the
// server lists the task IDs it will send notifications/tasks for. One
// that does not list this task offers none, and the listen is closed.
func (t *Tracker) taskListenAcked(c *Request, ev *event.Event, now time.Time) {
	p := t.byID[c.Parent]
	if p == nil || p.Task == nil {
		return
	}
	var ack struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	_ = json.Unmarshal(ev.Msg.Params, &ack)
	for _, id := range ack.Notifications.TaskIDs {
		if id == p.Task.ID {
			p.Task.Listening = true
			return
		}
	}
	t.closeTaskListen(c, now)
}

// closeTaskListen cancels a task's listen (its task ended, or the server
// offers no notifications for it); Due returns it in Cancels for the caller to
// send the transport's cancel, as for a timeout.
func (t *Tracker) closeTaskListen(c *Request, now time.Time) {
	if c.State.IsFinal() || c.State == StateCancelRequested || c.closeDue {
		return
	}
	c.closeDue = true
	if t.closeDueAt.IsZero() || now.Before(t.closeDueAt) {
		// expire closes it; taskRequests (which clears taskDue) must not
		// lose it from NextDeadline.
		t.closeDueAt = now
	}
}

// endedBeforeCancel reports a task request cancelled after its task had
// already reached its terminal status (a legacy task whose tasks/result
// was on its way): the cancel came too late to matter, and the outcome is
// the request's, as for an answer read before a cancel.
func endedBeforeCancel(r *Request) bool {
	tk := r.Task
	return r.State == StateCancelRequested && tk != nil && tk.Terminal() && r.Cancel != nil &&
		!tk.TerminalAt.IsZero() && tk.TerminalAt.Before(r.Cancel.At)
}
