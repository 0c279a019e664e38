package ui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/session"
)

// A request the server answered with a task handle continues as its task,
// in the same row: its polls (tasks/get), its tasks/result and its
// tasks/cancel are the task's requests, sent when the tracker says they
// are due (session.Tracker.Due) and shown in the task's detail, not as
// rows.

// due carries out what the tracker has due at now (session.Tracker.Due):
// the changes go to the trace, the cancels of expired timeouts and the
// task requests begun are returned as commands that send them. A view on
// a proxy has nothing due of its own: the host's requests have no deadline
// of inflight's, and their cancels' late windows end when the proxy says
// they did (NoteLateWindowOver).
func (m *Model) due(now time.Time) []tea.Cmd {
	if m.attaching() {
		return nil
	}
	d := m.tracker.Due(now)
	m.changed(d.Changes)
	// A watch that ended settles its request here, not on an event: the
	// status line about it ("cancellation requested") goes with it.
	m.settledStatus(d.Changes)
	var cmds []tea.Cmd
	for _, x := range d.Cancels {
		// A legacy server's question open on it is declined after the cancel.
		cmds = append(cmds, declineAfter(cancelCmd(m.conn, m.connGen, x.ID, x.Reason, false), m.takeQuestions(x.ID)))
	}
	for _, r := range d.Requests {
		if tw := m.opts.Trace; tw != nil {
			_ = tw.State(r.Created, r, r.State, r.State)
		}
		conn, gen := m.conn, m.connGen
		req := client.Request{ID: r.ID, Method: r.Method, Params: r.ChildParams, LateWindow: r.LateWindow}
		cmds = append(cmds, func() tea.Msg {
			if err := conn.Send(context.Background(), req); err != nil {
				return sendFailedMsg{gen: gen, id: req.ID, err: err}
			}
			return nil
		})
	}
	return cmds
}

// isTaskRequest reports one of a task's own requests (a poll, its
// tasks/result or tasks/cancel), which the list does not show as a row.
func isTaskRequest(r *session.Request) bool { return r.Role != session.RoleNone }

// taskCall reports whether a call of tool t is sent as a task: in the
// legacy era, always for a tool that requires it, when asked (ctrl+t) for
// one that allows it.
func (c *composer) taskCall(t toolInfo) bool {
	return c.legacy && (t.TaskSupport == "required" || (t.TaskSupport == "optional" && c.asTask))
}

// toggleTask is ctrl+t in a tool's form; it says what it did.
func (c *composer) toggleTask() string {
	t, ok := c.tool()
	switch {
	case c.kind != kindTool || !ok:
		return "ctrl+t runs a tool call as a task; this is no tool call"
	case !c.legacy:
		return "in the modern era the server decides whether a call becomes a task (inflight always declares the tasks extension)"
	case t.TaskSupport == "required":
		return "this tool requires a task: it is always sent as one"
	case t.TaskSupport != "optional":
		return "this tool does not support tasks (its execution.taskSupport is not optional or required)"
	}
	c.asTask = !c.asTask
	if c.asTask {
		return "this call will run as a task (tasks/get polls it; c sends tasks/cancel)"
	}
	return "this call will run as an ordinary request"
}

// taskLine is the tool form's line about tasks, "" when none applies.
func (c *composer) taskLine(t toolInfo) string {
	switch {
	case !c.legacy && (t.TaskSupport == "required" || t.TaskSupport == "optional"):
		return "the tool supports tasks: the server decides whether this call becomes one"
	case !c.legacy:
		return ""
	case t.TaskSupport == "required":
		return "runs as a task: the tool requires one (tasks/get polls it; c sends tasks/cancel)"
	case t.TaskSupport == "optional" && c.asTask:
		return "runs as a task · ctrl+t to send it as an ordinary request"
	case t.TaskSupport == "optional":
		return "an ordinary request · ctrl+t to run it as a task (the tool allows one)"
	}
	return ""
}
