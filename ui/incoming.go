package ui

import (
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/detail"
	"inflight/ui/question"
	"inflight/ui/screen"
)

// A legacy server's own requests (elicitation/create, sampling/
// createMessage, roots/list) are rows of their own in the list (ui/list
// draws them, ↘), and have a detail of their own (ui/question). What is
// here routes to them: which one keys act on, opening its detail, and
// carrying out what a key on one asks (answer it, decline it). Session
// decides what each is and where it stands; nothing here judges a
// message.

// selectedIncoming is the incoming row keys act on: the one the detail
// shows, else the list's selection (nil: a request, or nothing).
func (s *screens) selectedIncoming(mode keymap.Mode) *session.ServerRequest {
	switch mode {
	case keymap.ModeDetail:
		return s.incoming.Request()
	case keymap.ModeList:
		return s.list.Incoming()
	}
	return nil
}

// questionAction carries out what a key on one of the server's requests
// asked (question.RowKey on its row in the list, or its detail's
// Update); msg is the key or the wheel, for the global keys when the
// detail did not use it.
func (m *Model) questionAction(msg tea.Msg, act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case screen.Unused:
		if k, ok := msg.(tea.KeyPressMsg); ok {
			return m.handleGlobalKey(k)
		}
	case screen.Run:
		return a.Cmd
	case screen.Status:
		// screen.Level and statusLevel count the same levels alike.
		m.setStatus(statusLevel(a.Level), a.Text)
	case question.ToggleWrap:
		m.setStatus(levelInfo, m.pager.toggleWrap())
	case question.Open:
		m.screens.openQuestion(&m.focus, a.Request, m.size.width)
	case question.Answer:
		m.status.clear()
		if q := m.questions.of(a.Request); q != nil {
			var act screen.Action
			m.focus.mode, act = m.answering.openQuestion(m.env(), q, m.focus.mode)
			return m.doAnswer(act)
		}
	case question.Decline:
		q := m.questions.of(a.Request)
		if q == nil {
			return nil
		}
		m.questions.drop(q)
		m.focus.mode, _ = m.answering.closeOn([]*serverQuestion{q}, m.focus.mode)
		m.setStatus(levelInfo, "↘ "+m.opts.line(a.Request.Method)+": declined (c on a question declines it)")
		return declineCmd([]*serverQuestion{q})
	}
	return nil
}

// openQuestion shows one of the server's requests in the detail.
func (s *screens) openQuestion(f *focus, sr *session.ServerRequest, width int) {
	s.detail = detail.Model{}
	s.incoming = question.New(sr, width)
	f.mode = keymap.ModeDetail
}

// waitingInput counts the modern requests waiting for the user's input:
// active, but nothing of theirs is on the wire, so the header counts them
// as waiting for you, not in flight.
func waitingInput(t *session.Tracker) int {
	input, _ := t.Waiting()
	return input
}

// waitingForYou is the header's "? N waiting for you": modern requests
// waiting for input, modern tasks whose inputRequests a answers, and the
// legacy server's own requests not answered yet (in a view attached to a
// proxy, attaching, they wait for the host, not you). A task waiting
// stays in flight too: it lives on the server, polled, its TTL running.
func waitingForYou(t *session.Tracker, attaching bool) int {
	input, server := t.Waiting()
	if attaching {
		return input
	}
	return input + t.TasksWaiting() + server
}
