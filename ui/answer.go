package ui

import (
	"encoding/json"
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/answer"
	"inflight/ui/look"
	"inflight/ui/question"
	"inflight/ui/screen"
	"inflight/wire"
)

// Answering the server's questions in the TUI.
//
// Modern era: a request the server answered with input_required waits in
// session.StateWaitingInput; its round's input requests are answered in
// the answer form (a, or enter on its row), and Tracker.Answer begins the
// next round, sent as send() sends a request. roots/list is answered from
// --root without a prompt.
//
// Legacy era: the server's own requests wait in the questions' queue
// (questions.go) and are answered in the same form.

// handleQuestion takes a legacy server's question, or its end.
func (m *Model) handleQuestion(msg questionMsg) tea.Cmd {
	again := waitQuestion(m.opts.Questions, m.clock.done())
	q := msg.q
	switch msg.kind {
	case questionAsked:
		m.questions.add(q)
		// Its own row's a answers it (its request's too, when it is tied
		// to one: the tracker may not have said yet).
		m.setStatus(levelInfo, fmt.Sprintf("↘ %s from the server · waiting for you: a on its row answers", m.opts.line(q.method)))
	case questionNotSent:
		// The client's word (through Serve) that the answer to q could not
		// be sent: q waits again, and its form opens again as typed.
		m.questions.add(q)
		why := "the answer could not be sent"
		if msg.err != nil {
			why += ": " + msg.err.Error()
		}
		var shown bool
		if m.focus.mode, shown = m.answering.notSent(q, why, m.focus.mode); !shown {
			why += " — a answers it again"
		}
		m.setStatus(levelError, m.opts.line(q.method)+" "+m.opts.line(q.id.String())+": "+why)
	case questionWithdrawn, questionExpired:
		m.questions.drop(q)
		text := "the server withdrew this question"
		if closed, _ := m.tracker.TransportClosed(); q.lastState(m.tracker) == session.ServerLost || (closed || m.conn.state == connLost) && q.lastState(m.tracker) != session.ServerWithdrawn {
			// Serve's ctx ends with the connection too.
			text = "the connection closed before this question was answered"
		}
		if msg.kind == questionExpired {
			text = "nobody answered within " + look.Dur(m.opts.Questions.wait) + ": inflight refused the question"
		}
		if m.focus.mode == keymap.ModeAnswer && m.answering.on(q) {
			m.focus.mode = m.answering.close(m.focus.mode)
			m.setStatus(levelWarn, m.opts.line(q.method)+": "+text)
		} else {
			m.setStatus(levelInfo, m.opts.line(q.method)+" "+m.opts.line(q.id.String())+": "+text)
		}
	}
	return again
}

// answerIntercept takes the keys that open the form: a, and enter on a
// row that waits for the user; and on a row of the server's own requests
// in the list, the keys on one (question.RowKey).
func (m *Model) answerIntercept(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if m.focus.mode != keymap.ModeList && m.focus.mode != keymap.ModeDetail {
		return nil, false
	}
	if m.focus.mode == keymap.ModeDetail && m.screens.incoming.Request() != nil {
		return nil, false // the detail's own keys (handleDetailKey)
	}
	if s := m.screens.list.Incoming(); s != nil && m.focus.mode == keymap.ModeList {
		act := question.RowKey(m.env(), s, msg, true, m.questions.of(s) != nil)
		return m.questionAction(msg, act), act != nil
	}
	open := key.Matches(msg, m.keys.Answer)
	if !open && m.focus.mode == keymap.ModeList && msg.String() == "enter" {
		r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
		open = ok && m.questions.asks(m.tracker, r)
	}
	if !open {
		if pressed(msg, m.keys.Answer) {
			m.setStatus(levelInfo, "nothing waits for your answer here")
			return nil, true
		}
		return nil, false
	}
	m.status.clear()
	return m.openAnswer(), true
}

// openAnswer opens the form on the selected request's question: its
// round's, else the oldest legacy question waiting on it.
func (m *Model) openAnswer() tea.Cmd {
	r, _ := m.screens.selectedRequest(m.tracker, m.focus.mode)
	var act screen.Action
	if r != nil && (r.State == session.StateWaitingInput || len(r.TaskAsks()) > 0) {
		m.focus.mode, act = m.answering.openRound(m.env(), r, rootsOrEmpty(m.opts.Roots), m.focus.mode)
		return m.doAnswer(act)
	}
	var id wire.ID
	if r != nil {
		id = r.ID
	}
	q := m.questions.waitingOn(m.tracker, id)
	if q == nil {
		m.setStatus(levelInfo, "nothing waits for your answer here")
		return nil
	}
	m.focus.mode, act = m.answering.openQuestion(m.env(), q, m.focus.mode)
	return m.doAnswer(act)
}

// doAnswer carries out what the answer form asks.
func (m *Model) doAnswer(act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case screen.Batch:
		cmds := make([]tea.Cmd, 0, len(a))
		for _, one := range a {
			cmds = append(cmds, m.doAnswer(one))
		}
		return tea.Batch(cmds...)
	case screen.Run:
		return a.Cmd
	case screen.Close:
		m.focus.mode = m.answering.close(m.focus.mode)
	case screen.Status:
		m.setStatus(statusLevel(a.Level), a.Text) // the same levels, in the same order
		if !a.About.IsZero() {
			m.status.about = a.About
		}
	case answer.Details:
		// Unanswered, for the detail of what the form asks: a legacy
		// question's own (its params, its tie), else its request's.
		m.focus.mode = m.answering.close(m.focus.mode)
		var s *session.ServerRequest
		if q, ok := a.Question.(*serverQuestion); ok {
			s = q.record(m.tracker)
		}
		r, ok := m.tracker.Get(a.ID)
		switch {
		case s != nil:
			m.screens.openQuestion(&m.focus, s, m.size.width)
		case ok && !a.ID.IsZero():
			m.screens.list = m.screens.list.Select(r.ID, m.screens.list.Following())
			m.screens.openDetail(&m.focus, m.tracker, m.size.width, m.chrome().bodyHeight(m.size.height))
		default:
			return nil
		}
		m.setStatus(levelInfo, answer.LaterText)
	case answer.Reply:
		m.focus.mode = m.answering.close(m.focus.mode)
		return m.doAnswer(m.questions.reply(m.tracker, a, m.opts.line))
	case answer.SendRound:
		return m.sendAnswers(a.ID, a.Answers, a.Kept)
	case answer.Decline:
		// The conversation ends here, its request not retried.
		m.focus.mode = m.answering.close(m.focus.mode)
		ch, err := m.tracker.EndConversation(a.ID, a.Reason, m.opts.moment())
		if err != nil {
			m.setStatus(levelWarn, fmt.Sprintf("#%s: %s", a.ID, look.RefusalText(err, m.opts.moment())))
			return nil
		}
		traceChanged(m.opts.records(), m.tracker, []session.Change{ch})
		m.setStatus(levelInfo, fmt.Sprintf("#%s: sampling declined; the request is not retried", a.ID))
	}
	return nil
}

// sendAnswers answers the round and sends the next one; kept is the form
// as last shown (nil: none), shown again if the round cannot be sent.
func (m *Model) sendAnswers(id wire.ID, answers map[string]json.RawMessage, kept *answer.Model) tea.Cmd {
	m.focus.mode = m.answering.close(m.focus.mode)
	if r, ok := m.tracker.Get(id); ok && r.IsTask() {
		// The tasks/update is sent with the task's other requests when
		// Update next asks the tracker what is due.
		level, text := answerTask(m.tracker, id, answers, m.opts.moment())
		m.setStatus(level, text)
		m.status.about = id
		return nil
	}
	rt, err := m.tracker.Answer(id, answers, m.opts.moment())
	if err != nil {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: not answered — %s", id, look.RefusalText(err, m.opts.moment())))
		return nil
	}
	traceChanged(m.opts.records(), m.tracker, []session.Change{rt.Change})
	m.answering.sentAs(kept, rt.ID)
	m.setStatus(levelInfo, fmt.Sprintf("#%s: answered — round %d sent", rt.ID, rt.Round))
	m.status.about = rt.ID
	m.screens.followNewest(m.tracker)
	return m.conn.send(client.Request{ID: rt.ID, Method: rt.Method, Params: rt.Params, ProgressToken: rt.ProgressToken, LateWindow: rt.LateWindow})
}

// answerTask gives a modern task's questions their answers (the tracker
// keeps them for the tasks/update Due begins), and says so for the
// status line.
func answerTask(t *session.Tracker, id wire.ID, answers map[string]json.RawMessage, now time.Time) (statusLevel, string) {
	if err := t.AnswerTask(id, answers, now); err != nil {
		return levelWarn, fmt.Sprintf("#%s: not answered — %s", id, look.RefusalText(err, now))
	}
	return levelInfo, fmt.Sprintf("#%s: answered — tasks/update sent; the task goes on", id)
}

// autoAnswer follows what the tracker just changed (changes): the legacy
// questions whose fate it settled leave the queue, and their form closes
// saying why; a form whose question can no longer be answered closes; and
// the rounds that ask only for roots are answered without a prompt (from
// --root).
func (m *Model) autoAnswer(changes []session.Change) tea.Cmd {
	for _, f := range m.questions.fates(m.tracker, m.opts.line) {
		switch {
		case m.focus.mode != keymap.ModeAnswer || !m.answering.on(f.q):
			// Not on the form: its row says what became of it.
		case f.gone:
			m.focus.mode = m.answering.close(m.focus.mode)
			m.setStatus(levelWarn, m.opts.line(f.q.method)+": "+f.why+"; nothing was sent")
		default:
			m.answering.form = m.answering.form.Warn(f.why)
		}
	}
	var cmds []tea.Cmd
	for _, ch := range changes {
		if ch.Kind == session.ChangeState && m.focus.mode == keymap.ModeAnswer && m.answering.form.Legacy() == nil && ch.ID == m.answering.form.ID() && ch.To != session.StateWaitingInput {
			// The request left waiting under the form (the connection
			// was lost): there is nothing to answer any more.
			m.focus.mode = m.answering.close(m.focus.mode)
			m.setStatus(levelWarn, fmt.Sprintf("#%s is %s: its question can no longer be answered", ch.ID, look.StateName(ch.To)))
		}
		if ch.Kind != session.ChangeState || ch.To != session.StateWaitingInput {
			continue
		}
		r, ok := m.tracker.Get(ch.ID)
		if !ok || r.State != session.StateWaitingInput {
			continue
		}
		asked, _ := r.Asked()
		answers := map[string]json.RawMessage{}
		for _, q := range asked {
			if q.Method != wire.MethodRootsList {
				answers = nil
				break
			}
			answers[q.Key] = rootsOrEmpty(m.opts.Roots)
		}
		if answers != nil {
			cmds = append(cmds, m.sendAnswers(r.ID, answers, nil))
			continue
		}
		m.setStatus(levelInfo, fmt.Sprintf("#%s waits for you: press a to answer", r.ID))
		m.status.about = r.ID
	}
	return tea.Batch(cmds...)
}

// cancelWaiting is c on a request that waits for the user. Modern:
// nothing is in flight, so nothing is sent; the tracker drops the
// conversation. Legacy: the server's open question is declined first,
// then the request is cancelled as usual (handled reports false).
func (m *Model) cancelWaiting(id wire.ID, reason string, cause session.CancelCause) (cmd tea.Cmd, done bool, declines []*serverQuestion) {
	r, ok := m.tracker.Get(id)
	if !ok {
		return nil, false, nil
	}
	if r.State == session.StateWaitingInput {
		ch, err := m.tracker.RequestCancel(id, reason, cause, m.opts.moment())
		if err != nil {
			m.setStatus(levelWarn, fmt.Sprintf("#%s: nothing to cancel — %s", id, look.RefusalText(err, m.opts.moment())))
			return nil, true, nil
		}
		traceChanged(m.opts.records(), m.tracker, []session.Change{ch})
		if m.answering.form.ID() == id {
			m.focus.mode = m.answering.close(m.focus.mode)
		}
		m.setStatus(levelInfo, fmt.Sprintf("#%s: no request in flight; the conversation was dropped (nothing sent)", id))
		return nil, true, nil
	}
	return nil, false, m.takeQuestions(id)
}

// takeQuestions removes the legacy questions waiting that belong to the
// request id (closing the form on one), for the caller to decline once
// the request's cancel is out.
func (m *Model) takeQuestions(id wire.ID) []*serverQuestion {
	qs := m.questions.take(m.tracker, id)
	var closed bool
	if m.focus.mode, closed = m.answering.closeOn(qs, m.focus.mode); closed {
		m.setStatus(levelWarn, fmt.Sprintf("#%s is being cancelled: the server's question is declined", id))
	}
	return qs
}
