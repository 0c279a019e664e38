package hostile

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"inflight/wire"
)

// Task peers: servers whose tool answers with a task handle (issue 11), in
// either era — a legacy handle when the client spoke initialize, a modern
// resultType "task" otherwise — and that serve tasks/get, tasks/result
// (legacy) and tasks/cancel well but for the one thing each gets wrong,
// so that every task violation inflight knows is set off by a peer of
// ours through the real client.

// taskCreatedAt is the createdAt every peer task reports.
const taskCreatedAt = "2026-12-01T00:00:00Z"

// TaskTTLMs is the ttl every peer task reports.
const TaskTTLMs = 60000

// PeerTask is one task of a task peer.
type PeerTask struct {
	ID     string
	CallID wire.ID
	// Status is the task's status; Polls the tasks/get it answered.
	Status string
	Polls  int
	// Gets counts every tasks/get for it, answered or refused.
	Gets int
}

// taskBook is a session's tasks.
type taskBook struct {
	mu    sync.Mutex
	n     int
	tasks map[string]*PeerTask
}

// Legacy reports whether the client spoke the legacy era (it sent
// initialize).
func (s *Session) Legacy() bool {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.legacy
}

// newTask records a working task for call id and returns a copy of it as
// created: the book's task is changed only under its lock (a tasks/cancel
// may come while the handle is written).
func (s *Session) newTask(call wire.ID) PeerTask {
	b := &s.book
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tasks == nil {
		b.tasks = map[string]*PeerTask{}
	}
	b.n++
	tk := &PeerTask{ID: fmt.Sprintf("task-%d", b.n), CallID: call, Status: wire.TaskWorking}
	b.tasks[tk.ID] = tk
	return *tk
}

// withTask runs fn on the task params name, under the book's lock; it
// reports false when there is no such task.
func (s *Session) withTask(params json.RawMessage, fn func(tk *PeerTask)) bool {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(params, &p)
	b := &s.book
	b.mu.Lock()
	defer b.mu.Unlock()
	tk := b.tasks[p.TaskID]
	if tk == nil {
		return false
	}
	fn(tk)
	return true
}

// TaskScript is a task peer: a task server that is well-behaved except
// where a hook says otherwise.
type TaskScript struct {
	Name string
	// PollMs is the pollInterval the peer gives (0: none).
	PollMs int
	// Work is how many tasks/get answer working before one says completed.
	Work int
	// Undeclared answers a tools/call that did not ask for a task (legacy:
	// no task field) with a task handle all the same.
	Undeclared bool
	// AfterHandle runs once the handle was sent.
	AfterHandle func(s *Session, tk PeerTask)
	// Get, when set, answers a tasks/get of a known task instead (it
	// reports false to leave it to the default); the task's Gets already
	// counts it.
	Get func(s *Session, tk *PeerTask, req Request) bool
	// Result, when set, answers a legacy tasks/result of a terminal task.
	Result func(s *Session, tk PeerTask, req Request)
	// Cancel, when set, answers tasks/cancel of a known task instead.
	Cancel func(s *Session, tk *PeerTask, req Request) bool
	// Other answers any other request (reports false for -32601).
	Other func(s *Session, req Request) bool
}

// Peer is the script as a stdio peer.
func (ts TaskScript) Peer() Stdio {
	return Stdio{Name: ts.Name, Tasks: true, Call: ts.call, Handle: ts.handle}
}

func (ts TaskScript) call(s *Session, req Request) {
	legacy := s.Legacy()
	if legacy && !declaresTask(req.Params) && !ts.Undeclared {
		_ = s.Reply(req.ID, textResult("called without a task"))
		return
	}
	tk := s.newTask(req.ID)
	_ = s.Reply(req.ID, TaskHandleResult(tk, ts.PollMs, legacy))
	if ts.AfterHandle != nil {
		ts.AfterHandle(s, tk)
	}
}

func declaresTask(params json.RawMessage) bool {
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	return json.Unmarshal(params, &p) == nil && len(p.Task) > 0 && p.Task[0] == '{'
}

func (ts TaskScript) handle(s *Session, req Request) bool {
	legacy := s.Legacy()
	unknown := func() {
		_ = s.Send(wire.ErrorResponse(req.ID, wire.CodeInvalidParams, "no such task"))
	}
	switch req.Method {
	case wire.MethodTasksGet:
		var reply string
		handled := false
		found := s.withTask(req.Params, func(tk *PeerTask) {
			tk.Gets++
			if ts.Get != nil && ts.Get(s, tk, req) {
				handled = true
				return
			}
			tk.Polls++
			if tk.Status == wire.TaskWorking && tk.Polls > ts.Work {
				tk.Status = wire.TaskCompleted
			}
			reply = TaskStateResult(*tk, ts.PollMs, legacy, true)
		})
		switch {
		case !found:
			unknown()
		case !handled:
			_ = s.Reply(req.ID, reply)
		}
	case wire.MethodTasksResult:
		var tk PeerTask
		if !s.withTask(req.Params, func(t *PeerTask) { tk = *t }) {
			unknown()
			return true
		}
		if ts.Result != nil {
			ts.Result(s, tk, req)
			return true
		}
		_ = s.Reply(req.ID, textResult("the work of "+tk.ID+" is done"))
	case wire.MethodTasksCancel:
		var reply []byte
		found := s.withTask(req.Params, func(tk *PeerTask) {
			if ts.Cancel != nil && ts.Cancel(s, tk, req) {
				return
			}
			if wire.IsTerminalTaskStatus(tk.Status) {
				reply = wire.ErrorResponse(req.ID, wire.CodeInvalidParams, "task "+tk.ID+" is already "+tk.Status)
				return
			}
			tk.Status = wire.TaskCancelled
			if legacy {
				reply = wire.ResultResponse(req.ID, json.RawMessage(TaskStateResult(*tk, ts.PollMs, true, false)))
			} else {
				reply = wire.ResultResponse(req.ID, json.RawMessage(`{"resultType":"complete"}`))
			}
		})
		switch {
		case !found:
			unknown()
		case reply != nil:
			_ = s.Send(reply)
		}
	default:
		if ts.Other != nil {
			return ts.Other(s, req)
		}
		return false
	}
	return true
}

// taskFields is a task's members, in the era's names.
func taskFields(tk PeerTask, pollMs int, legacy bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `"taskId":%s,"status":%s,"createdAt":%q,"lastUpdatedAt":%q`, quote(tk.ID), quote(tk.Status), taskCreatedAt, taskCreatedAt)
	ttl, poll := "ttlMs", "pollIntervalMs"
	if legacy {
		ttl, poll = "ttl", "pollInterval"
	}
	fmt.Fprintf(&b, `,%q:%d`, ttl, TaskTTLMs)
	if pollMs > 0 {
		fmt.Fprintf(&b, `,%q:%d`, poll, pollMs)
	}
	return b.String()
}

// TaskHandleResult is the CreateTaskResult for tk: a legacy "task"
// member, or a modern resultType "task".
func TaskHandleResult(tk PeerTask, pollMs int, legacy bool) string {
	if legacy {
		return `{"task":{` + taskFields(tk, pollMs, true) + `}}`
	}
	return `{"resultType":"task",` + taskFields(tk, pollMs, false) + `}`
}

// TaskStateResult is a tasks/get result (or a legacy tasks/cancel
// result) for tk; a modern completed task inlines its result when
// withResult is set.
func TaskStateResult(tk PeerTask, pollMs int, legacy, withResult bool) string {
	if legacy {
		return `{` + taskFields(tk, pollMs, true) + `}`
	}
	out := `{"resultType":"complete",` + taskFields(tk, pollMs, false)
	if withResult && tk.Status == wire.TaskCompleted {
		out += `,"result":` + textResult("the work of "+tk.ID+" is done")
	}
	return out + `}`
}

// TaskNotification is the task status notification for tk: legacy
// notifications/tasks/status, modern notifications/tasks; sub, when not
// zero, is the subscriptions/listen it is delivered on.
func TaskNotification(tk PeerTask, pollMs int, legacy bool, sub wire.ID) []byte {
	if legacy {
		return wire.Notification(wire.NotifyTaskStatus, json.RawMessage(`{`+taskFields(tk, pollMs, true)+`}`))
	}
	params := `{` + taskFields(tk, pollMs, false)
	if tk.Status == wire.TaskCompleted {
		params += `,"result":` + textResult("the work of "+tk.ID+" is done")
	}
	if !sub.IsZero() {
		params += fmt.Sprintf(`,"_meta":{%q:%s}`, wire.MetaSubscriptionID, sub.Raw())
	}
	return wire.Notification(wire.NotifyTasks, json.RawMessage(params+`}`))
}

func taskDiscoverResult(peer string) string {
	return fmt.Sprintf(`{"resultType":"complete","supportedVersions":[%q],"capabilities":{"tools":{},"extensions":{%q:{}}},"_meta":{%q:{"name":%q,"version":"1"}}}`,
		wire.VersionModern, wire.ExtensionTasks, wire.MetaServerInfo, ServerName+" "+peer)
}

func taskInitializeResult(peer string) string {
	return fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":%q,"version":"1"}}`,
		wire.Version20251125, ServerName+" "+peer)
}

var taskToolsListResult = fmt.Sprintf(`{"resultType":"complete","tools":[{"name":%q,"description":"Runs as a task, and misbehaves.","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`, ToolName)

// TaskPollMs is the poll interval the task peers give (where they give
// one): short, so that the tests are quick.
const TaskPollMs = 20

// TaskFlip's task completes at its first poll, then says working again:
// every later tasks/get, and (legacy) a notifications/tasks/status just
// before it answers tasks/result.
var TaskFlip = TaskScript{Name: "task-flip", PollMs: TaskPollMs,
	Get: func(s *Session, tk *PeerTask, req Request) bool {
		if tk.Status != wire.TaskCompleted || tk.Polls == 0 {
			return false
		}
		flipped := *tk
		flipped.Status = wire.TaskWorking
		_ = s.Reply(req.ID, TaskStateResult(flipped, TaskPollMs, s.Legacy(), false))
		return true
	},
	Result: func(s *Session, tk PeerTask, req Request) {
		flipped := tk
		flipped.Status = wire.TaskWorking
		_ = s.Send(TaskNotification(flipped, TaskPollMs, true, wire.ID{}))
		_ = s.Reply(req.ID, textResult("the work of "+tk.ID+" is done"))
	}}.Peer()

// TaskCancelledNotification ends its own task with notifications/cancelled
// naming it (_meta io.modelcontextprotocol/related-task) right after the
// handle, and says cancelled from then on.
var TaskCancelledNotification = TaskScript{Name: "task-cancelled-notification", PollMs: TaskPollMs, Work: 1000,
	AfterHandle: func(s *Session, tk PeerTask) {
		s.withTask(wire.TaskParams(tk.ID), func(t *PeerTask) { t.Status = wire.TaskCancelled })
		params := fmt.Sprintf(`{"requestId":%s,"reason":"the server gave up","_meta":{%q:{"taskId":%s}}}`,
			tk.CallID.Raw(), wire.MetaRelatedTask, quote(tk.ID))
		_ = s.Send(wire.Notification(wire.NotifyCancelled, json.RawMessage(params)))
	}}.Peer()

// TaskResultDelay bounds how long TaskCancelAcceptsTerminal holds its
// answer to tasks/result.
const TaskResultDelay = 600 * time.Millisecond

// TaskCancelAcceptsTerminal (legacy) completes at the first poll, holds its
// answer to tasks/result until the client sent tasks/cancel (at most
// TaskResultDelay), and acknowledges tasks/cancel of the completed task
// with success instead of -32602.
var TaskCancelAcceptsTerminal = TaskScript{Name: "task-cancel-accepts-terminal", PollMs: TaskPollMs,
	Cancel: func(s *Session, tk *PeerTask, req Request) bool {
		if !wire.IsTerminalTaskStatus(tk.Status) {
			return false
		}
		_ = s.Reply(req.ID, TaskStateResult(*tk, TaskPollMs, s.Legacy(), false))
		return true
	}}.Peer()

// TaskCancelAcknowledgesCompleted (legacy) polls working until a
// tasks/cancel comes, then acknowledges it with the task completed: the
// work ended before the cancel, and a cancel of a terminal task MUST be
// refused with -32602. (inflight itself sends no tasks/cancel for a task
// it knows has ended, so this is how a client meets the violation.)
var TaskCancelAcknowledgesCompleted = TaskScript{Name: "task-cancel-acknowledges-completed", PollMs: TaskPollMs, Work: 1 << 30,
	Cancel: func(s *Session, tk *PeerTask, req Request) bool {
		tk.Status = wire.TaskCompleted
		_ = s.Reply(req.ID, TaskStateResult(*tk, TaskPollMs, s.Legacy(), false))
		return true
	}}.Peer()

// TaskCancelNotCancelled (legacy) answers tasks/cancel of its working task
// with the task still working, and completes it anyway after Work polls.
var TaskCancelNotCancelled = TaskScript{Name: "task-cancel-not-cancelled", PollMs: TaskPollMs, Work: 8,
	Cancel: func(s *Session, tk *PeerTask, req Request) bool {
		if wire.IsTerminalTaskStatus(tk.Status) {
			return false
		}
		_ = s.Reply(req.ID, TaskStateResult(*tk, TaskPollMs, s.Legacy(), false))
		return true
	}}.Peer()

// TaskUndeclared (legacy) answers a tools/call without the task field with
// a task handle.
var TaskUndeclared = TaskScript{Name: "task-undeclared", PollMs: TaskPollMs, Work: 1, Undeclared: true}.Peer()

// TaskNotDurable refuses the first tasks/get of each task with -32602 (no
// such task), then serves it.
var TaskNotDurable = TaskScript{Name: "task-not-durable", PollMs: TaskPollMs, Work: 1,
	Get: func(s *Session, tk *PeerTask, req Request) bool {
		if tk.Gets > 1 {
			return false
		}
		_ = s.Send(wire.ErrorResponse(req.ID, wire.CodeInvalidParams, "no such task"))
		return true
	}}.Peer()

// TaskPromptName is the prompt TaskForPrompt answers with a task handle.
const TaskPromptName = "task-prompt"

// TaskForPrompt answers prompts/get, which does not support tasks, with a
// task handle.
var TaskForPrompt = TaskScript{Name: "task-for-prompt", PollMs: TaskPollMs, Work: 1,
	Other: func(s *Session, req Request) bool {
		if req.Method != wire.MethodPromptsGet {
			return false
		}
		tk := s.newTask(req.ID)
		_ = s.Reply(req.ID, TaskHandleResult(tk, TaskPollMs, s.Legacy()))
		return true
	}}.Peer()

// TaskRateLimitMessage is the error TaskRateLimited refuses a poll with.
const TaskRateLimitMessage = "rate limit exceeded: too many requests, slow down"

// taskRateLimited refuses the first tasks/get of each task as rate-limited
// (a JSON-RPC error, -32000), then serves it; pollMs is the interval it
// gave (0: none), which the client kept to all the same.
func taskRateLimited(name string, pollMs int) Stdio {
	return TaskScript{Name: name, PollMs: pollMs, Work: 1,
		Get: func(s *Session, tk *PeerTask, req Request) bool {
			if tk.Gets > 1 {
				return false
			}
			_ = s.Send(wire.ErrorResponse(req.ID, -32000, TaskRateLimitMessage))
			return true
		}}.Peer()
}

// TaskRateLimited gives a poll interval and refuses the first poll, made
// after it, as rate-limited; TaskRateLimitedUnguided gives none.
var (
	TaskRateLimited         = taskRateLimited("task-rate-limited", TaskPollMs)
	TaskRateLimitedUnguided = taskRateLimited("task-rate-limited-unguided", 0)
)

// TaskPeers lists the task peers.
func TaskPeers() []Stdio {
	return []Stdio{TaskFlip, TaskCancelledNotification, TaskCancelAcceptsTerminal, TaskCancelNotCancelled, TaskUndeclared,
		TaskNotDurable, TaskForPrompt, TaskCancelAcknowledgesCompleted, TaskRateLimited, TaskRateLimitedUnguided, TaskListen, TaskListenBeforeAck}
}

// TaskListenPollMs is the poll interval TaskListen gives: long, so that
// nothing but its notifications/tasks can end the task during a test.
const TaskListenPollMs = 60000

// taskListen answers a modern subscriptions/listen whose notifications
// name taskIds: it acknowledges them (unless beforeAck: then only after
// the notification), and sends each task's completion as
// notifications/tasks on the stream (_meta subscriptionId: the listen's
// ID). The stream stays open until the client ends it.
func taskListen(name string, beforeAck bool) Stdio {
	return TaskScript{Name: name, PollMs: TaskListenPollMs, Work: 1000,
		Other: func(s *Session, req Request) bool {
			if req.Method != wire.MethodSubscriptionsListen {
				return false
			}
			var p struct {
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
			}
			_ = json.Unmarshal(req.Params, &p)
			ids, _ := json.Marshal(p.Notifications.TaskIDs)
			ack := wire.Notification(wire.NotifySubscriptionAck, json.RawMessage(fmt.Sprintf(`{"_meta":{%q:%s},"notifications":{"taskIds":%s}}`,
				wire.MetaSubscriptionID, req.ID.Raw(), ids)))
			if !beforeAck {
				_ = s.Send(ack)
			}
			for _, id := range p.Notifications.TaskIDs {
				var done PeerTask
				if s.withTask(wire.TaskParams(id), func(tk *PeerTask) { tk.Status = wire.TaskCompleted; done = *tk }) {
					_ = s.Send(TaskNotification(done, TaskListenPollMs, false, req.ID))
				}
			}
			if beforeAck {
				_ = s.Send(ack)
			}
			select {
			case <-s.CancelledCh(req.ID):
			case <-s.Done():
			}
			return true
		}}.Peer()
}

// TaskListen delivers its tasks' completion as notifications/tasks on a
// subscriptions/listen; TaskListenBeforeAck does so before it
// acknowledges the subscription.
var (
	TaskListen          = taskListen("task-listen", false)
	TaskListenBeforeAck = taskListen("task-listen-before-ack", true)
)
