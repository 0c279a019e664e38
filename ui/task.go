package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// A request the server answered with a task handle continues as its task,
// in the same row: its polls (tasks/get), its tasks/result and its
// tasks/cancel are the task's requests, sent when the tracker says they
// are due (TaskRequests) and shown in the task's detail, not as rows.

// taskWork sends the task requests due at now.
func (m *Model) taskWork(now time.Time) []tea.Cmd {
	var cmds []tea.Cmd
	for _, r := range m.tracker.TaskRequests(now) {
		if tw := m.opts.Trace; tw != nil {
			_ = tw.State(r.Created, r, r.State, r.State)
		}
		conn, gen := m.conn, m.connGen
		req := client.Request{ID: r.ID, Method: r.Method, Params: r.ChildParams}
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
// the poll timing (look.PrioTiming): it is what the server says it is doing.
func (m *Model) taskParts(r *session.Request, now time.Time) []look.Part {
	st := m.styles
	tk := r.Task
	parts := m.lateParts(r)
	// STATE says "⧗ task"; this says what the task says of itself.
	parts = append(parts, look.Part{Variants: []string{m.line(tk.Status)}, Style: st.Running, Prio: look.PrioSignal})
	if tk.Status == wire.TaskInputRequired {
		parts = append(parts, look.Part{Variants: []string{"the server asks for input (answering it is not supported yet)", "asks for input"}, Style: st.Warn, Prio: look.PrioFlag})
	}
	if tk.Message != "" {
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("%q", m.line(tk.Message))}, Style: st.Running, Prio: look.PrioSignal, Cut: true, Keep: 8})
	}
	if !tk.LastPollAt.IsZero() {
		parts = append(parts, look.Part{Variants: []string{"polled " + look.Dur(now.Sub(tk.LastPollAt)) + " ago"}, Style: st.Dim, Prio: look.PrioTiming})
	}
	if !tk.NextPollAt.IsZero() {
		parts = append(parts, look.Part{Variants: []string{"next in " + look.Dur(max(0, tk.NextPollAt.Sub(now)))}, Style: st.Dim, Prio: look.PrioTiming})
	} else if tk.Polls > 0 || !tk.LastPollAt.IsZero() {
		parts = append(parts, look.Part{Variants: []string{"polling…"}, Style: st.Dim, Prio: look.PrioTiming})
	}
	return parts
}

// taskCancelParts tell a task whose tasks/cancel waits for its fate.
func (m *Model) taskCancelParts(r *session.Request, now time.Time) []look.Part {
	st := m.styles
	tk := r.Task
	parts := m.lateParts(r)
	switch {
	case tk.CancelError != nil:
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("tasks/cancel refused: error %d %s", tk.CancelError.Code, m.line(tk.CancelError.Message)), "tasks/cancel refused"},
			Style: st.Error, Prio: look.PrioSignal, Cut: true, Keep: len("tasks/cancel refused")})
	case !tk.CancelAckAt.IsZero():
		ago := look.Dur(now.Sub(tk.CancelAckAt)) + " ago"
		parts = append(parts, look.Part{Variants: []string{"tasks/cancel acknowledged " + ago, "acknowledged " + ago, "acked " + ago}, Style: st.Cancelling, Prio: look.PrioSignal})
	case !tk.CancelSentAt.IsZero():
		ago := look.Dur(now.Sub(tk.CancelSentAt)) + " ago"
		parts = append(parts, look.Part{Variants: []string{"tasks/cancel sent " + ago + ", not acknowledged", "tasks/cancel sent " + ago}, Style: st.Cancelling, Prio: look.PrioSignal})
	default:
		parts = append(parts, look.Part{Variants: []string{"sending tasks/cancel…"}, Style: st.Cancelling, Prio: look.PrioSignal})
	}
	if !tk.Terminal() {
		parts = append(parts, look.Part{Variants: []string{"task still " + m.line(tk.Status), m.line(tk.Status)}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if left, ok := look.LateWindowLeft(r, now); ok {
		l := look.Dur(left)
		parts = append(parts, look.Part{Variants: []string{"watching for its fate · " + l + " left", l + " left"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	return append(parts, look.Part{Variants: []string{"cancellation requested"}, Style: st.Cancelling, Prio: look.PrioRepeats})
}

// taskFacts is the detail header's line about the task.
func (m *Model) taskFacts(r *session.Request, now time.Time, width int) string {
	st := m.styles
	tk := r.Task
	id := m.line(clipRunes(tk.ID, 40))
	parts := []look.Part{{Variants: []string{"task " + id + " " + m.line(tk.Status), m.line(tk.Status)}, Style: st.Running, Prio: look.PrioSignal}}
	if tk.Message != "" {
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("%q", m.line(tk.Message))}, Style: st.Running, Prio: look.PrioSignal, Cut: true, Keep: 10})
	}
	polls := fmt.Sprintf("%d %s", tk.Polls, look.CountNoun(tk.Polls, "poll", "polls"))
	long := polls
	if !tk.LastPollAt.IsZero() {
		long += ", last " + look.Dur(now.Sub(tk.LastPollAt)) + " ago"
	}
	if !tk.NextPollAt.IsZero() && r.IsActive() {
		long += ", next in " + look.Dur(max(0, tk.NextPollAt.Sub(now)))
	}
	interval := fmt.Sprintf(" (no interval from the server: every %s)", look.Dur(m.tracker.Config().PollInterval))
	if tk.PollInterval > 0 {
		interval = fmt.Sprintf(" (the server's interval %s)", look.Dur(tk.PollInterval))
	}
	parts = append(parts, look.Part{Variants: []string{long + interval, long, polls}, Style: st.Dim, Prio: look.PrioWatch})
	switch left, ok := r.TTLLeft(now); {
	case ok && r.IsActive():
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("ttl %s, %s left", look.Dur(tk.TTL), look.Dur(left)), "ttl " + look.Dur(left) + " left"}, Style: st.Dim, Prio: look.PrioSignal})
	case ok:
		parts = append(parts, look.Part{Variants: []string{"ttl " + look.Dur(tk.TTL)}, Style: st.Dim, Prio: look.PrioWatch})
	case tk.TTLUnlimited:
		parts = append(parts, look.Part{Variants: []string{"ttl unlimited"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if r.IsActive() {
		parts = append(parts, look.Part{Variants: []string{"no response timeout (max " + look.Dur(r.Timeout.Max) + ")", "max " + look.Dur(r.Timeout.Max)}, Style: st.Dim, Prio: look.PrioRepeats})
	}
	return look.BuildCell(parts, width)
}

// writeTask is the detail body's TASK section: every status change, where
// it came from, the cancel and its acknowledgement, and the outcome.
func (m *Model) writeTask(b *strings.Builder, r *session.Request) {
	st := m.styles
	tk := r.Task
	head := fmt.Sprintf("TASK %s (%d %s", m.line(tk.ID), tk.Polls, look.CountNoun(tk.Polls, "poll", "polls"))
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
		b.WriteString(fmt.Sprintf("%-8s %s  %s\n", look.Ago(l.at.Sub(startOf(r))), l.at.Format("15:04:05.000"), l.text))
	}
	if tk.EndedAfterCancel != "" {
		b.WriteString(st.Flag.Render(fmt.Sprintf("⚑ %s after tasks/cancel (+%s): its outcome is kept below as late, never a success", m.line(tk.EndedAfterCancel), look.Dur(tk.AfterCancel))) + "\n")
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
