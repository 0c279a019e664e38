package ui

import (
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
	if m.opts.attaching() || m.opts.replaying() {
		return nil
	}
	d := m.tracker.Due(now)
	traceChanged(m.opts.records(), m.tracker, d.Changes)
	// A watch that ended settles its request here, not on an event: the
	// status line about it ("cancellation requested") goes with it.
	m.status.settled(d.Changes)
	var cmds []tea.Cmd
	for _, x := range d.Cancels {
		// A legacy server's question open on it is declined after the cancel.
		cmds = append(cmds, declineAfter(m.conn.cancel(x.ID, x.Reason, false), m.takeQuestions(x.ID)))
	}
	for _, r := range d.Requests {
		if tw := m.opts.Trace; tw != nil {
			_ = tw.State(r.Created, r, r.State, r.State)
		}
		cmds = append(cmds, m.conn.send(client.Request{ID: r.ID, Method: r.Method, Params: r.ChildParams, LateWindow: r.LateWindow}))
	}
	return cmds
}

// isTaskRequest reports one of a task's own requests (a poll, its
// tasks/result or tasks/cancel), which the list does not show as a row.
func isTaskRequest(r *session.Request) bool { return r.Role != session.RoleNone }
