package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/session"
	"inflight/wire"
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

// taskParts tell a task at work: its status and message, when it was
// polled and when it is polled next. The message takes the width before
// the poll timing (prioTiming): it is what the server says it is doing.
func (m *Model) taskParts(r *session.Request, now time.Time) []cellPart {
	st := m.styles
	tk := r.Task
	parts := m.lateParts(r)
	// STATE says "⧗ task"; this says what the task says of itself.
	parts = append(parts, cellPart{variants: []string{m.line(tk.Status)}, style: st.Running, prio: prioSignal})
	if tk.Status == wire.TaskInputRequired {
		parts = append(parts, cellPart{variants: []string{"the server asks for input (answering it is not supported yet)", "asks for input"}, style: st.Warn, prio: prioFlag})
	}
	if tk.Message != "" {
		parts = append(parts, cellPart{variants: []string{fmt.Sprintf("%q", m.line(tk.Message))}, style: st.Running, prio: prioSignal, cut: true, keep: 8})
	}
	if !tk.LastPollAt.IsZero() {
		parts = append(parts, cellPart{variants: []string{"polled " + fmtDur(now.Sub(tk.LastPollAt)) + " ago"}, style: st.Dim, prio: prioTiming})
	}
	if !tk.NextPollAt.IsZero() {
		parts = append(parts, cellPart{variants: []string{"next in " + fmtDur(max(0, tk.NextPollAt.Sub(now)))}, style: st.Dim, prio: prioTiming})
	} else if tk.Polls > 0 || !tk.LastPollAt.IsZero() {
		parts = append(parts, cellPart{variants: []string{"polling…"}, style: st.Dim, prio: prioTiming})
	}
	return parts
}

// taskCancelParts tell a task whose tasks/cancel waits for its fate.
func (m *Model) taskCancelParts(r *session.Request, now time.Time) []cellPart {
	st := m.styles
	tk := r.Task
	parts := m.lateParts(r)
	switch {
	case tk.CancelError != nil:
		parts = append(parts, cellPart{variants: []string{fmt.Sprintf("tasks/cancel refused: error %d %s", tk.CancelError.Code, m.line(tk.CancelError.Message)), "tasks/cancel refused"},
			style: st.Error, prio: prioSignal, cut: true, keep: len("tasks/cancel refused")})
	case !tk.CancelAckAt.IsZero():
		ago := fmtDur(now.Sub(tk.CancelAckAt)) + " ago"
		parts = append(parts, cellPart{variants: []string{"tasks/cancel acknowledged " + ago, "acknowledged " + ago, "acked " + ago}, style: st.Cancelling, prio: prioSignal})
	case !tk.CancelSentAt.IsZero():
		ago := fmtDur(now.Sub(tk.CancelSentAt)) + " ago"
		parts = append(parts, cellPart{variants: []string{"tasks/cancel sent " + ago + ", not acknowledged", "tasks/cancel sent " + ago}, style: st.Cancelling, prio: prioSignal})
	default:
		parts = append(parts, cellPart{variants: []string{"sending tasks/cancel…"}, style: st.Cancelling, prio: prioSignal})
	}
	if !tk.Terminal() {
		parts = append(parts, cellPart{variants: []string{"task still " + m.line(tk.Status), m.line(tk.Status)}, style: st.Dim, prio: prioWatch})
	}
	if left, ok := lateWindowLeft(r, now); ok {
		l := fmtDur(left)
		parts = append(parts, cellPart{variants: []string{"watching for its fate · " + l + " left", l + " left"}, style: st.Dim, prio: prioWatch})
	}
	return append(parts, cellPart{variants: []string{"cancellation requested"}, style: st.Cancelling, prio: prioRepeats})
}

// taskFacts is the detail header's line about the task.
func (m *Model) taskFacts(r *session.Request, now time.Time, width int) string {
	st := m.styles
	tk := r.Task
	id := m.line(clipRunes(tk.ID, 40))
	parts := []cellPart{{variants: []string{"task " + id + " " + m.line(tk.Status), m.line(tk.Status)}, style: st.Running, prio: prioSignal}}
	if tk.Message != "" {
		parts = append(parts, cellPart{variants: []string{fmt.Sprintf("%q", m.line(tk.Message))}, style: st.Running, prio: prioSignal, cut: true, keep: 10})
	}
	polls := fmt.Sprintf("%d %s", tk.Polls, countNoun(tk.Polls, "poll", "polls"))
	long := polls
	if !tk.LastPollAt.IsZero() {
		long += ", last " + fmtDur(now.Sub(tk.LastPollAt)) + " ago"
	}
	if !tk.NextPollAt.IsZero() && r.IsActive() {
		long += ", next in " + fmtDur(max(0, tk.NextPollAt.Sub(now)))
	}
	interval := fmt.Sprintf(" (no interval from the server: every %s)", fmtDur(m.tracker.Config().PollInterval))
	if tk.PollInterval > 0 {
		interval = fmt.Sprintf(" (the server's interval %s)", fmtDur(tk.PollInterval))
	}
	parts = append(parts, cellPart{variants: []string{long + interval, long, polls}, style: st.Dim, prio: prioWatch})
	switch left, ok := r.TTLLeft(now); {
	case ok && r.IsActive():
		parts = append(parts, cellPart{variants: []string{fmt.Sprintf("ttl %s, %s left", fmtDur(tk.TTL), fmtDur(left)), "ttl " + fmtDur(left) + " left"}, style: st.Dim, prio: prioSignal})
	case ok:
		parts = append(parts, cellPart{variants: []string{"ttl " + fmtDur(tk.TTL)}, style: st.Dim, prio: prioWatch})
	case tk.TTLUnlimited:
		parts = append(parts, cellPart{variants: []string{"ttl unlimited"}, style: st.Dim, prio: prioWatch})
	}
	if r.IsActive() {
		parts = append(parts, cellPart{variants: []string{"no response timeout (max " + fmtDur(r.Timeout.Max) + ")", "max " + fmtDur(r.Timeout.Max)}, style: st.Dim, prio: prioRepeats})
	}
	return buildCell(parts, width)
}

// writeTask is the detail body's TASK section: every status change, where
// it came from, the cancel and its acknowledgement, and the outcome.
func (m *Model) writeTask(b *strings.Builder, r *session.Request) {
	st := m.styles
	tk := r.Task
	head := fmt.Sprintf("TASK %s (%d %s", m.line(tk.ID), tk.Polls, countNoun(tk.Polls, "poll", "polls"))
	if tk.HistoryDropped > 0 {
		head += fmt.Sprintf("; %d later status changes not kept", tk.HistoryDropped)
	}
	b.WriteString(st.Bold.Render(head+")") + "\n")
	if tk.AfterCancelHandle {
		b.WriteString(st.Flag.Render("⚑ the task handle came after the request was cancelled: the task was cancelled with tasks/cancel too") + "\n")
	}
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, c := range tk.History {
		t := fmt.Sprintf("%-14s (%s)", m.line(c.Status), c.Via)
		if c.Message != "" {
			t += fmt.Sprintf(" %q", m.line(c.Message))
		}
		lines = append(lines, line{c.At, t})
	}
	if !tk.CancelSentAt.IsZero() {
		lines = append(lines, line{tk.CancelSentAt, "tasks/cancel sent"})
	}
	if !tk.CancelAckAt.IsZero() {
		lines = append(lines, line{tk.CancelAckAt, "tasks/cancel acknowledged"})
	}
	if tk.CancelError != nil {
		lines = append(lines, line{tk.CancelSentAt, fmt.Sprintf("tasks/cancel refused: error %d %s", tk.CancelError.Code, m.line(tk.CancelError.Message))})
	}
	// In time order: a status change and the cancel interleave.
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && lines[j].at.Before(lines[j-1].at); j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	for _, l := range lines {
		b.WriteString(fmt.Sprintf("%-8s %s  %s\n", fmtAgo(l.at.Sub(startOf(r))), l.at.Format("15:04:05.000"), l.text))
	}
	if tk.EndedAfterCancel != "" {
		b.WriteString(st.Flag.Render(fmt.Sprintf("⚑ %s after tasks/cancel (+%s): its outcome is kept below as late, never a success", m.line(tk.EndedAfterCancel), fmtDur(tk.AfterCancel))) + "\n")
	}
	if tk.InputRequests != "" && tk.Status == wire.TaskInputRequired {
		b.WriteString("\n" + st.Bold.Render("WHAT THE SERVER ASKS FOR (inputRequests; answering is not supported yet)") + "\n")
		b.WriteString(m.prettyJSON([]byte(tk.InputRequests)) + "\n")
	}
	if raw, isErr, ok := m.tracker.TaskOutcome(r.ID); ok {
		title := "TASK RESULT"
		switch {
		case tk.EndedAfterCancel != "":
			title = "TASK RESULT AFTER tasks/cancel (late; ignored)"
		case isErr:
			title = "TASK ERROR"
		}
		b.WriteString("\n" + st.Bold.Render(title) + "\n")
		b.WriteString(m.prettyJSON(raw) + "\n")
	}
}

// taskSig is what the detail body shows of a task, to know when to build
// it again.
type taskSig struct {
	changes, polls, input int
	sent, acked, refused  bool
	after                 string
	outcome               bool
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

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
