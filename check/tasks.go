package check

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"inflight/report"
	"inflight/runner"
	"inflight/session"
	"inflight/wire"
)

// The tasks group: when the server declares task support, the battery
// runs a task tool as a task to its end, polls it once more, cancels a
// second run with tasks/cancel, cancels the finished task, and asks for a
// task that does not exist. Each check says what it saw, with the spec's
// words, as the cancellation checks do.

// IDs of the tasks group.
const (
	CheckTaskTerminal       = "tasks.terminal_immutable"
	CheckTaskCancel         = "tasks.cancel"
	CheckTaskCancelTerminal = "tasks.cancel_terminal"
	CheckTaskUnknown        = "tasks.unknown_id"
	CheckTaskNoCancelled    = "tasks.no_notifications_cancelled"
)

// taskChecks are the group's checks, in the order they run.
var taskChecks = []string{CheckTaskTerminal, CheckTaskCancel, CheckTaskCancelTerminal, CheckTaskUnknown, CheckTaskNoCancelled}

const (
	pageTasksLegacy = "2025-11-25/basic/utilities/tasks.mdx"
	pageTasksModern = "extensions/tasks/tasks.md"
	// taskUnknownID is the task the battery asks for, which no server made.
	taskUnknownID = "never-issued-by-inflight-check"
	// defaultTaskWait bounds a task's run to its terminal status.
	defaultTaskWait = 60 * time.Second
	// demoTaskTool is the demo's task tool that honours tasks/cancel.
	demoTaskTool        = "task_job"
	defaultDemoTaskArgs = `{"seconds":1.5,"steps":6,"pollMs":100}`
)

func taskRequirement(id string, modern bool) (requirement, bool) {
	page := pageTasksLegacy
	if modern {
		page = pageTasksModern
	}
	switch id {
	case CheckTaskTerminal:
		if modern {
			return requirement{"a finished task stays finished", LevelMust,
				"If the status is `completed`, the server MUST return a `Task` object with status `completed` and a `result` field containing the final result of the task.", page}, true
		}
		return requirement{"a finished task stays finished", LevelMust,
			"Tasks with a `completed`, `failed`, or `cancelled` status are in a terminal state and MUST NOT transition to any other status", page}, true
	case CheckTaskCancel:
		if modern {
			return requirement{"tasks/cancel is acknowledged", LevelMust,
				"On success, the server MUST acknowledge the request with an empty result. … the task's observable status MAY remain `working` (or some other non-terminal status) after the ack", page}, true
		}
		return requirement{"tasks/cancel cancels the task", LevelMust,
			"Upon receiving a valid cancellation request, receivers SHOULD attempt to stop the task execution and MUST transition the task to `cancelled` status before sending the response.", page}, true
	case CheckTaskCancelTerminal:
		return requirement{"cancelling a finished task is refused", LevelMust,
			"Receivers MUST reject cancellation requests for tasks already in a terminal status (`completed`, `failed`, or `cancelled`) with error code `-32602` (Invalid params).", page}, true
	case CheckTaskUnknown:
		if modern {
			return requirement{"an unknown task is refused", LevelMust,
				"Invalid or nonexistent `taskId`: `-32602` (Invalid params) — Servers MUST return this error for `tasks/get`.", page}, true
		}
		return requirement{"an unknown task is refused", LevelMust,
			"Receivers MUST return standard JSON-RPC errors for the following protocol error cases: Invalid or nonexistent `taskId` in `tasks/get`, `tasks/result`, or `tasks/cancel`: `-32602` (Invalid params)", page}, true
	case CheckTaskNoCancelled:
		if modern {
			return requirement{"tasks are never cancelled with notifications/cancelled", LevelMust,
				"The `notifications/cancelled` notification MUST NOT be used for task cancellation.", page}, true
		}
		return requirement{"tasks are never cancelled with notifications/cancelled", LevelMust,
			"For task-augmented requests, the `tasks/cancel` request MUST be used instead of the `notifications/cancelled` notification.", pageCancelLegacy}, true
	}
	return requirement{}, false
}

// serverDeclaresTasks reports whether the server's capabilities declare
// task-augmented tools/call, and says where it looked.
func serverDeclaresTasks(caps []byte, modern bool) (bool, string) {
	var c struct {
		Tasks *struct {
			Requests *struct {
				Tools *struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	_ = json.Unmarshal(caps, &c)
	if modern {
		return c.Extensions[wire.ExtensionTasks] != nil, "its server/discover capabilities list no " + wire.ExtensionTasks + " extension"
	}
	ok := c.Tasks != nil && c.Tasks.Requests != nil && c.Tasks.Requests.Tools != nil && c.Tasks.Requests.Tools.Call != nil
	return ok, "its initialize capabilities have no tasks.requests.tools.call"
}

// taskTool finds the tool the group runs: --task-tool, else the first in
// tools/list whose execution.taskSupport is required or optional.
func (b *battery) taskTool() (string, string) {
	if b.o.TaskTool != "" {
		return b.o.TaskTool, ""
	}
	tools := b.tools()
	if tools == nil {
		why := "tools/list could not be read"
		if b.toolListErr != "" {
			why = b.toolListErr
		}
		return "", why + ", so no task tool could be found; name one with --task-tool"
	}
	for _, t := range tools {
		if t.Name == demoTaskTool && t.Execution.TaskSupport != "" {
			// The demo's well-behaved task tool, as slow is its slow tool.
			return t.Name, ""
		}
	}
	for _, t := range tools {
		if t.Execution.TaskSupport == "required" || t.Execution.TaskSupport == "optional" {
			return t.Name, ""
		}
	}
	return "", "no tool in tools/list declares execution.taskSupport; name one with --task-tool"
}

// startTask calls the task tool (as a task in the legacy era) and waits
// until it is a task or has ended.
func (b *battery) startTask(tool string) *session.Request {
	params, _ := runner.ToolCallParams(tool, b.o.TaskArgs)
	if !b.modern {
		params, _ = runner.WithTask(params, 0)
	}
	r, err := b.cn.Begin(b.ctx, wire.MethodToolsCall, params, session.RequestOptions{Timeout: b.o.Timeout, MaxTimeout: defaultTaskWait})
	if err != nil {
		return r
	}
	if b.cn.Wait(b.ctx, func() bool { return r.State.IsFinal() || r.IsTask() }, time.Time{}) == runner.WaitInterrupted {
		b.interrupted = true
	}
	return r
}

// checkTasks runs the group, or lists it as skipped with why.
func (b *battery) checkTasks() {
	tool, ok := b.taskGroupTool()
	if !ok {
		return
	}
	b.step("running %s as a task to its end", tool)
	done := b.startTask(tool)
	if b.interrupted {
		return
	}
	if !done.IsTask() {
		hint := ""
		if len(b.o.TaskArgs) == 0 && done.State == session.StateFailed {
			hint = "; if it needs arguments, give them with --task-args"
		}
		b.skip(fmt.Sprintf("%s did not become a task: %s%s", tool, whyNoTask(done), hint), taskChecks...)
		return
	}
	b.finish(done)
	tk := done.Task
	if !tk.Terminal() {
		b.taskInconclusive(CheckTaskTerminal, fmt.Sprintf("task %q reached no terminal status in %s (ended %s, last status %s)",
			tk.ID, fmtElapsed(done.Elapsed(time.Now())), describeState(done), tk.Status))
	} else {
		b.checkTaskStaysTerminal(tk)
		b.checkTaskCancelTerminal(tk)
	}
	if !b.checkTaskCancel(tool) {
		return
	}
	b.checkTaskUnknown()
	b.checkTaskNoCancelled()
}

// taskGroupTool is the tool the tasks group runs as a task; !ok when the
// group does not run (its checks skipped, with why).
func (b *battery) taskGroupTool() (tool string, ok bool) {
	switch {
	case b.o.NoTasks:
		b.skip("--no-tasks", taskChecks...)
		return "", false
	case b.gone() && b.lostDuring != "":
		b.skip("not run: the connection was lost during "+b.lostDuring, taskChecks...)
		return "", false
	case b.interrupted || b.gone():
		b.skip("not run: the battery stopped before the tasks group", taskChecks...)
		return "", false
	}
	info := b.cn.Info()
	if ok, why := serverDeclaresTasks(info.Capabilities, b.modern); !ok && b.o.TaskTool == "" {
		b.skip("the server declares no task support ("+why+")", taskChecks...)
		return "", false
	}
	tool, why := b.taskTool()
	if tool == "" {
		b.skip(why, taskChecks...)
		return "", false
	}
	switch {
	case len(b.o.TaskArgs) > 0:
	case tool == demoTaskTool:
		// Quick, as slow's defaults are: a run to the end, then one to cancel.
		b.o.TaskArgs = json.RawMessage(defaultDemoTaskArgs)
	default:
		// A tool that requires arguments is refused without them: give it
		// the smallest its schema accepts, and say so.
		for _, t := range b.tools() {
			if args, made := argsFromSchema(t.InputSchema); t.Name == tool && made {
				b.o.TaskArgs = args
				b.line("  %s requires %s: the tasks group calls it with %s, made from its input schema (--task-args to choose)",
					tool, strings.Join(t.RequiredArgs(), ", "), args)
			}
		}
	}
	return tool, true
}

// checkTaskStaysTerminal polls the task tk, terminal already, once more:
// its status must stand.
func (b *battery) checkTaskStaysTerminal(tk *session.Task) {
	poll := b.request(wire.MethodTasksGet, wire.TaskParams(tk.ID), defaultProbeTimeout)
	status := taskStatusOf(b.cn.Tracker(), poll)
	switch {
	case b.cn.Tracker().Violations().Count(session.ViolationTaskStatusAfterTerminal) > 0:
		b.addTask(CheckTaskTerminal, false, fmt.Sprintf("task %q said another status after it was %s (a violation the tracker recorded)", tk.ID, tk.Status))
	case status == "":
		b.addTask(CheckTaskTerminal, false, fmt.Sprintf("task %q was %s; a tasks/get %s after that ended %s", tk.ID, tk.Status,
			report.Span(time.Since(tk.TerminalAt)), describeState(poll)))
	case status != tk.Status:
		b.addTask(CheckTaskTerminal, false, fmt.Sprintf("task %q was %s; a tasks/get after that said %s", tk.ID, tk.Status, status))
	default:
		b.addTask(CheckTaskTerminal, true, fmt.Sprintf("task %q was %s after %d poll%s, and a tasks/get after that said %s too", tk.ID, tk.Status,
			tk.Polls, report.Plural(tk.Polls), status))
	}
}

// checkTaskCancelTerminal cancels the task tk, which already ended: a
// legacy server refuses it with -32602.
func (b *battery) checkTaskCancelTerminal(tk *session.Task) {
	if b.modern {
		b.skip("the tasks extension asks only that an unknown task be refused", CheckTaskCancelTerminal)
		return
	}
	b.step("cancelling task %s, which already ended", tk.ID)
	c := b.request(wire.MethodTasksCancel, wire.TaskParams(tk.ID), defaultProbeTimeout)
	switch {
	case c.Error != nil && c.Error.Code == wire.CodeInvalidParams:
		b.addTask(CheckTaskCancelTerminal, true, fmt.Sprintf("tasks/cancel of the %s task was refused with -32602 (%q)", tk.Status, c.Error.Message))
	case c.Error != nil:
		b.addTask(CheckTaskCancelTerminal, false, fmt.Sprintf("tasks/cancel of the %s task was refused with %d (%q), not -32602", tk.Status, c.Error.Code, c.Error.Message))
	default:
		b.addTask(CheckTaskCancelTerminal, false, fmt.Sprintf("tasks/cancel of the %s task ended %s instead of an error", tk.Status, describeState(c)))
	}
}

// checkTaskCancel runs tool as a task again and cancels it with
// tasks/cancel; false when the battery was interrupted.
func (b *battery) checkTaskCancel(tool string) bool {
	b.step("running %s as a task again and cancelling it with tasks/cancel", tool)
	r := b.startTask(tool)
	switch {
	case b.interrupted:
		return false
	case !r.IsTask():
		b.taskInconclusive(CheckTaskCancel, fmt.Sprintf("the second run of %s did not become a task (it ended %s)", tool, describeState(r)))
	case r.State.IsFinal():
		b.taskInconclusive(CheckTaskCancel, fmt.Sprintf("the second task ended %s before it could be cancelled", r.Task.Status))
	default:
		_ = b.cn.Cancel(r.ID, "inflight check: cancelling a task", session.CauseUser)
		b.cn.Settle(r.ID, b.o.LateWindow+defaultProbeTimeout)
		if tk := r.Task; tk.Pending() {
			// A status that settled the task may come before the
			// acknowledgement: wait for it, bounded.
			b.cn.Wait(b.ctx, func() bool { return !tk.Pending() }, time.Now().Add(defaultProbeTimeout))
		}
		b.judgeTaskCancel(r)
	}
	return true
}

// checkTaskUnknown asks for a task inflight never saw: it must be refused
// with -32602.
func (b *battery) checkTaskUnknown() {
	b.step("asking for task %q, which inflight never saw", taskUnknownID)
	u := b.request(wire.MethodTasksGet, wire.TaskParams(taskUnknownID), defaultProbeTimeout)
	switch {
	case u.Error != nil && u.Error.Code == wire.CodeInvalidParams:
		b.addTask(CheckTaskUnknown, true, fmt.Sprintf("tasks/get of an unknown task was refused with -32602 (%q)", u.Error.Message))
	case u.Error != nil:
		b.addTask(CheckTaskUnknown, false, fmt.Sprintf("tasks/get of an unknown task was refused with %d (%q), not -32602", u.Error.Code, u.Error.Message))
	default:
		b.addTask(CheckTaskUnknown, false, "tasks/get of an unknown task ended "+describeState(u)+" instead of -32602")
	}
}

// checkTaskNoCancelled: the server must not send notifications/cancelled
// for a task.
func (b *battery) checkTaskNoCancelled() {
	if n := b.cn.Tracker().Violations().Count(session.ViolationCancelledForTask); n > 0 {
		b.addTask(CheckTaskNoCancelled, false, fmt.Sprintf("the server sent notifications/cancelled for a task %d time%s", n, report.Plural(n)))
	} else {
		b.addTask(CheckTaskNoCancelled, true, "the server sent no notifications/cancelled naming a task during the group (inflight sent tasks/cancel, never notifications/cancelled, for its tasks)")
	}
}

// judgeTaskCancel says what tasks/cancel did: its acknowledgement, and the
// task's status after it, as far as the watch saw.
func (b *battery) judgeTaskCancel(r *session.Request) {
	tk := r.Task
	switch {
	case tk.CancelError != nil:
		b.addTask(CheckTaskCancel, false, fmt.Sprintf("tasks/cancel of the working task %q was refused: %d %q", tk.ID, tk.CancelError.Code, tk.CancelError.Message))
		return
	case tk.CancelAckAt.IsZero():
		b.addTask(CheckTaskCancel, false, fmt.Sprintf("tasks/cancel of task %q had no answer in the %s watched (ended %s)", tk.ID, report.Span(b.o.LateWindow+defaultProbeTimeout), describeState(r)))
		return
	}
	ack := tk.CancelAckAt.Sub(r.Cancel.At)
	fate := "then said " + tk.Status
	switch {
	case tk.EndedAfterCancel != "":
		fate = fmt.Sprintf("then ended %s %s after the cancel", tk.EndedAfterCancel, report.Span(tk.AfterCancel))
	case !tk.Terminal():
		fate = fmt.Sprintf("still said %s when the %s watch ended", tk.Status, report.Span(r.LateWindow))
	}
	detail := fmt.Sprintf("tasks/cancel of task %q was acknowledged %s after it left; the task %s", tk.ID, report.Fine(ack), fate)
	if b.modern {
		// Cooperative: only the acknowledgement is required.
		b.addTask(CheckTaskCancel, true, detail)
		return
	}
	b.addTask(CheckTaskCancel, tk.Status == wire.TaskCancelled && tk.EndedAfterCancel == "", detail)
}

// oneLine is s on one line (a server's error may span many), clipped.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// taskStatusOf is the status a tasks/get answered, "" when it did not.
func taskStatusOf(tr *session.Tracker, r *session.Request) string {
	if r.State != session.StateCompleted {
		return ""
	}
	raw, ok := tr.RawResponse(r.ID)
	if !ok {
		return ""
	}
	msg, err := wire.Decode(raw)
	if err != nil {
		return ""
	}
	ts, err := wire.DecodeTask(msg.Result)
	if err != nil {
		return ""
	}
	return ts.Status
}

func (b *battery) addTask(id string, ok bool, detail string) {
	req, _ := taskRequirement(id, b.modern)
	status := StatusPass
	if !ok {
		status = StatusWarn
		if req.Level == LevelMust {
			status = StatusFail
		}
	}
	b.record(Finding{ID: id, Title: req.Title, Status: status, Level: req.Level, Quote: req.Quote, Page: req.Page, Detail: detail})
}

func (b *battery) taskInconclusive(id, detail string) {
	req, _ := taskRequirement(id, b.modern)
	b.record(Finding{ID: id, Title: req.Title, Status: StatusWarn, Level: req.Level, Quote: req.Quote, Page: req.Page, Detail: detail})
}
