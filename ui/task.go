package ui

import (
	"context"
	"fmt"
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
// are due (session.Tracker.Due) and shown in the task's detail, not as
// rows.

// due carries out what the tracker has due at now (session.Tracker.Due):
// the changes go to the trace, the cancels of expired timeouts and the
// task requests begun are returned as commands that send them. A view on
// a proxy has nothing due of its own: the host's requests have no deadline
// of inflight's, and their cancels' late windows end when the proxy says
// they did (NoteLateWindowOver).
func (m *Model) due(now time.Time) []tea.Cmd {
	if m.attaching() || m.replaying() {
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
