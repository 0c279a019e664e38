package ui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/detail"
	"inflight/ui/question"
	"inflight/ui/screen"
	"inflight/wire"
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
func (m *Model) selectedIncoming() *session.ServerRequest {
	switch m.mode {
	case keymap.ModeDetail:
		return m.incoming.Request()
	case keymap.ModeList:
		return m.list.Incoming()
	}
	return nil
}

// questionOf is the question in the answer queue that s is (nil when it
// is not waiting there: answered, ended, or answered without a prompt).
func (m *Model) questionOf(s *session.ServerRequest) *serverQuestion {
	if s == nil || !s.Open() {
		return nil
	}
	for _, q := range m.questions {
		// A question bound to another record is another request under the
		// same ID (one abandoned, say, whose form is still open).
		if q.id == s.ID && q.method == s.Method && (q.rec == nil || q.rec == s) {
			return q
		}
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
		m.toggleWrap()
	case question.Open:
		m.openIncomingDetail(a.Request)
	case question.Answer:
		m.status = statusLine{}
		if q := m.questionOf(a.Request); q != nil {
			return m.openQuestion(q)
		}
	case question.Decline:
		q := m.questionOf(a.Request)
		if q == nil {
			return nil
		}
		m.dropQuestion(q)
		if m.answer.Legacy() == q {
			m.closeAnswer()
		}
		m.setStatus(levelInfo, "↘ "+m.line(a.Request.Method)+": declined (c on a question declines it)")
		return declineCmd([]*serverQuestion{q})
	}
	return nil
}

// incomingFate is where one of the server's requests is, in the list's
// words.
func incomingFate(m *Model, s *session.ServerRequest) string {
	return question.Fate(s, m.questionOf(s) != nil)
}

// incomingAsks reports whether the incoming row keys act on waits for
// the user's answer (the key map enables a then).
func (m *Model) incomingAsks() bool {
	return m.questionOf(m.selectedIncoming()) != nil
}

// openIncomingDetail shows one of the server's requests in the detail.
func (m *Model) openIncomingDetail(s *session.ServerRequest) {
	m.detail = detail.Model{}
	m.incoming = question.New(s, m.width)
	m.mode = keymap.ModeDetail
}

// waitingInput counts the modern requests waiting for the user's input:
// active, but nothing of theirs is on the wire, so the header counts them
// as waiting for you, not in flight.
func (m *Model) waitingInput() int {
	input, _ := m.tracker.Waiting()
	return input
}

// waitingForYou is the header's "? N waiting for you": modern requests
// waiting for input and the legacy server's own requests not answered
// yet (in a view attached to a proxy they wait for the host, not you).
func (m *Model) waitingForYou() int {
	input, server := m.tracker.Waiting()
	if m.attaching() {
		return input
	}
	return input + server
}

// questionFates follows, after each event the tracker applied, the fate
// of the legacy questions still queued for the user: one withdrawn,
// lost, refused by the client (nobody answered in time) or never to be
// answered leaves the queue (questionOver), and its open form closes
// saying why (Serve's own word of it may be late or, with a full queue,
// never come); one whose request ended first keeps its form, which says
// so. No stale answer is sent without the user knowing.
func (m *Model) questionFates() {
	for i := 0; i < len(m.questions); i++ {
		q := m.questions[i]
		s := m.serverRequest(q)
		if s == nil {
			continue
		}
		onForm := m.mode == keymap.ModeAnswer && m.answer.Legacy() == q
		switch {
		case questionOver(q, s):
			m.dropQuestion(q)
			i--
			why := incomingFate(m, s)
			if s.State == session.ServerWithdrawn {
				why = "the server withdrew this question"
				if s.Reason != "" {
					why += " (" + m.line(s.Reason) + ")"
				}
			}
			if onForm {
				m.closeAnswer()
				m.setStatus(levelWarn, m.line(q.method)+": "+why+"; nothing was sent")
			}
		case s.State == session.ServerAbandoned:
			if onForm {
				m.answer = m.answer.Warn("its request #" + m.line(s.During.String()) + " ended first: the server may no longer read an answer")
			}
		}
	}
}

// answerNotSent takes the client's word (through Serve) that the answer
// to q could not be sent: q waits again, and its form opens again as the
// user typed it, saying why, when the user is on the list or a detail
// (elsewhere the status line says so, and a answers it again).
func (m *Model) answerNotSent(q *serverQuestion, err error) {
	if !m.queued(q) {
		m.questions = append(m.questions, q)
	}
	why := "the answer could not be sent"
	if err != nil {
		why += ": " + err.Error()
	}
	if q.form != nil && (m.mode == keymap.ModeList || m.mode == keymap.ModeDetail) {
		m.answer = q.form.Failed(why + " — enter sends it again, esc answers later")
		m.showAnswer()
		m.setStatus(levelError, m.line(q.method)+" "+m.line(q.id.String())+": "+why)
		return
	}
	m.setStatus(levelError, m.line(q.method)+" "+m.line(q.id.String())+": "+why+" — a answers it again")
}

// queued reports whether q is in the answer queue.
func (m *Model) queued(q *serverQuestion) bool {
	for _, o := range m.questions {
		if o == q {
			return true
		}
	}
	return false
}

// answerRoundFailed shows the modern form again, as the user typed it,
// when the round it sent could not be sent (id is the round's): the
// request failed with it (session's verdict), so the form says so and
// sends nothing more; the status line already says why.
func (m *Model) answerRoundFailed(id wire.ID, err error) {
	f := m.sentRound
	if f == nil || f.ID() != id {
		return
	}
	m.sentRound = nil
	if m.mode != keymap.ModeList && m.mode != keymap.ModeDetail {
		return
	}
	m.answer = f.Dead(fmt.Sprintf("this answer could not be sent: %v — the request failed with it (esc closes)", err))
	m.showAnswer()
}
