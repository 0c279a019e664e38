package ui

import (
	"context"
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
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/wire"
)

// Answering the server's questions in the TUI (issue 12).
//
// Modern era: a request the server answered with input_required waits in
// session.StateWaitingInput; its round's input requests are answered in
// the answer form (a, or enter on its row), and Tracker.Answer begins the
// next round, sent as send() sends a request. roots/list is answered from
// --root without a prompt.
//
// Legacy era: the server's own requests reach Questions.Serve, the
// client's ServerRequests handler, on one of the client's worker
// goroutines. Serve hands the question to the UI as a message (through a
// channel a command waits on, as the events come) and waits, bounded,
// for the answer on a channel of the question's own; Update never blocks.
// A server that withdraws its question (notifications/cancelled) ends
// Serve's ctx, and the form closes.

// DefaultAnswerWait bounds how long a legacy server's question waits for
// the user before inflight refuses it.
const DefaultAnswerWait = 5 * time.Minute

// Questions hands a legacy server's requests to the UI. Its Serve is
// client.Config.ServerRequests; the same Questions goes in Options.
type Questions struct {
	ch    chan questionMsg
	roots json.RawMessage
	wait  time.Duration
}

// NewQuestions makes the hand-over. roots is the roots/list result
// (from --root; nil answers an empty list); wait bounds how long a
// question waits for the user (0: DefaultAnswerWait).
func NewQuestions(roots json.RawMessage, wait time.Duration) *Questions {
	if wait <= 0 {
		wait = DefaultAnswerWait
	}
	return &Questions{ch: make(chan questionMsg, 64), roots: rootsOrEmpty(roots), wait: wait}
}

func rootsOrEmpty(roots json.RawMessage) json.RawMessage {
	if len(roots) == 0 {
		return json.RawMessage(`{"roots":[]}`)
	}
	return roots
}

// questionKind is what a questionMsg says about a question.
type questionKind uint8

const (
	questionAsked     questionKind = iota
	questionWithdrawn              // the server cancelled it
	questionExpired                // nobody answered within the bound
	questionNotSent                // the answer could not be sent: the form again
)

// questionMsg carries a legacy server's question, or its end, to Update.
type questionMsg struct {
	kind questionKind
	q    *serverQuestion
	err  error // questionNotSent: why
}

// serverQuestion is one legacy server request waiting for the user.
type serverQuestion struct {
	id     wire.ID // the server's ID (session.ServerRequest.ID)
	method string
	params json.RawMessage
	// at is when the client read it (session.ServerRequest.At; zero when
	// the handler's ctx did not say): with id, its record, and no other
	// under the same ID.
	at    time.Time
	reply chan serverReply // buffered 1: Update never waits on it
	// rec is the tracker's record of it, once found (it stays the same
	// record after the question ends: its fate is read from it).
	rec *session.ServerRequest
	// form is the form as it was when the user answered, kept so that an
	// answer that could not be sent opens again as typed.
	form *answer.Model
	// replied: the UI wrote an answer to reply (the form, or a decline).
	// Its record answered then is that answer, which may yet come back
	// (questionNotSent, maybe before the RequestFailed that makes the
	// record wait again); answered before it, the client refused it.
	replied bool
}

type serverReply struct {
	result json.RawMessage
	err    *wire.Error
}

// Serve answers one of the server's requests (client.Config.ServerRequests):
// roots/list at once from --root, anything else by the user.
func (q *Questions) Serve(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
	if method == wire.MethodRootsList {
		return q.roots, nil
	}
	id, _ := client.ServerRequestID(ctx)
	at, _ := client.ServerRequestAt(ctx)
	sq := &serverQuestion{id: id, method: method, params: params, at: at, reply: make(chan serverReply, 1)}
	timer := time.NewTimer(q.wait)
	defer timer.Stop()
	select {
	case q.ch <- questionMsg{kind: questionAsked, q: sq}:
	case <-ctx.Done():
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "withdrawn"}
	case <-timer.C:
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "inflight's interface took no more questions"}
	}
	tell := func(k questionKind) {
		select {
		case q.ch <- questionMsg{kind: k, q: sq}:
		default: // a full queue: the UI finds out from the tracker
		}
	}
	// expired tells the UI that inflight refuses the question, waiting for
	// room: the tracker would see the refusal only as an answer sent,
	// which the form could then answer again (and the status say
	// accepted). Only the server's cancel or the client's end stops it.
	expired := func() {
		select {
		case q.ch <- questionMsg{kind: questionExpired, q: sq}:
		case <-ctx.Done():
		}
	}
	// An answer that cannot be sent (the POST failed) comes back to the
	// user: the form opens again, as typed, with the error, and what the
	// user answers then is sent instead (the client calls this on the
	// request's goroutine once Serve returned).
	client.OnAnswerFailed(ctx, func(err error) (json.RawMessage, *wire.Error, bool) {
		select {
		case q.ch <- questionMsg{kind: questionNotSent, q: sq, err: err}:
		case <-ctx.Done():
			return nil, nil, false
		}
		again := time.NewTimer(q.wait)
		defer again.Stop()
		select {
		case r := <-sq.reply:
			return r.result, r.err, true
		case <-ctx.Done():
			tell(questionWithdrawn)
		case <-again.C:
			expired()
		}
		return nil, nil, false
	})
	select {
	case r := <-sq.reply:
		return r.result, r.err
	case <-ctx.Done():
		tell(questionWithdrawn)
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "withdrawn"}
	case <-timer.C:
		expired()
		return nil, &wire.Error{Code: wire.CodeInternalError,
			Message: "the user did not answer " + method + " within " + look.Dur(q.wait)}
	}
}

// waitQuestion is the command that waits for the next question, until
// the model stops (so that no goroutine outlives the program).
func waitQuestion(q *Questions, stop <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		select {
		case msg := <-q.ch:
			return msg
		case <-stop:
			return nil
		}
	}
}

// asks reports whether r waits for the user: a modern round's input
// requests, or a legacy question that arrived during it.
func (m *Model) asks(r *session.Request) bool {
	if r == nil {
		return false
	}
	if r.State == session.StateWaitingInput {
		return true
	}
	return m.questionFor(r.ID) != nil
}

// questionFor is the oldest legacy question waiting that belongs to the
// request id (nil when none does). A question tied to no request is no
// request's: it has a row of its own (incoming.go), where enter and a
// answer it.
func (m *Model) questionFor(id wire.ID) *serverQuestion {
	if id.IsZero() {
		return nil
	}
	for _, q := range m.questions {
		s := m.serverRequest(q)
		if s == nil || s.During.IsZero() || questionOver(q, s) {
			continue
		}
		if r, ok := m.tracker.Get(s.During); ok && r.ID == id {
			return q
		}
	}
	return nil
}

// questionOver reports whether the record s says that question q can no
// longer be answered: withdrawn, lost, not answered, or answered when the
// UI never replied (the client refused it: nobody answered in time).
// Open and abandoned ones can be, and so can one the UI replied to whose
// record says answered: the answer came back unsent (questionNotSent),
// and the RequestFailed that makes the record wait again may be behind.
func questionOver(q *serverQuestion, s *session.ServerRequest) bool {
	if s == nil {
		return false
	}
	switch s.State {
	case session.ServerWaiting, session.ServerAbandoned:
		return false
	case session.ServerWithdrawn, session.ServerLost, session.ServerNotAnswered:
		return true
	}
	return !q.replied
}

// serverRequest is the tracker's record of a legacy question (nil before
// the tracker applied its arrival).
func (m *Model) serverRequest(q *serverQuestion) *session.ServerRequest {
	if q.rec != nil {
		return q.rec
	}
	// The open record under its ID may be another's: the server withdrew
	// a question and asked a new one under its ID, and this question came
	// through Serve before the events saying so were applied (two
	// channels, no order). Bound to the old record, it would leave with
	// its withdrawal; the read time tells them apart.
	if s, ok := m.tracker.ServerRequest(q.id); ok && s.Method == q.method && (q.at.IsZero() || s.At.Equal(q.at)) {
		q.rec = s
		return s
	}
	return nil
}

// handleQuestion takes a legacy server's question, or its end.
func (m *Model) handleQuestion(msg questionMsg) tea.Cmd {
	again := waitQuestion(m.opts.Questions, m.stop)
	switch msg.kind {
	case questionAsked:
		m.questions = append(m.questions, msg.q)
		// Its own row's a answers it (its request's too, when it is tied
		// to one: the tracker may not have said yet).
		m.setStatus(levelInfo, fmt.Sprintf("↘ %s from the server · waiting for you: a on its row answers", m.line(msg.q.method)))
	case questionNotSent:
		m.answerNotSent(msg.q, msg.err)
	case questionWithdrawn, questionExpired:
		m.dropQuestion(msg.q)
		text := "the server withdrew this question"
		if closed, _ := m.tracker.TransportClosed(); m.serverRequestState(msg.q) == session.ServerLost || (closed || m.state == connLost) && m.serverRequestState(msg.q) != session.ServerWithdrawn {
			// Serve's ctx ends with the connection too.
			text = "the connection closed before this question was answered"
		}
		if msg.kind == questionExpired {
			text = "nobody answered within " + look.Dur(m.opts.Questions.wait) + ": inflight refused the question"
		}
		if m.mode == keymap.ModeAnswer && m.answer.Legacy() == msg.q {
			m.closeAnswer()
			m.setStatus(levelWarn, m.line(msg.q.method)+": "+text)
		} else {
			m.setStatus(levelInfo, m.line(msg.q.method)+" "+m.line(msg.q.id.String())+": "+text)
		}
	}
	return again
}

// serverRequestState is where the tracker has a legacy question, newest
// record first (ServerWaiting when it has none).
func (m *Model) serverRequestState(q *serverQuestion) session.ServerRequestState {
	all := m.tracker.ServerRequests()
	for i := len(all) - 1; i >= 0 && i >= len(all)-64; i-- {
		if all[i].ID == q.id && all[i].Method == q.method {
			return all[i].State
		}
	}
	return session.ServerWaiting
}

func (m *Model) dropQuestion(q *serverQuestion) {
	for i, o := range m.questions {
		if o == q {
			m.questions = append(m.questions[:i], m.questions[i+1:]...)
			return
		}
	}
}

// answerIntercept takes the keys that open the form: a, and enter on a
// row that waits for the user.
func (m *Model) answerIntercept(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if m.mode != keymap.ModeList && m.mode != keymap.ModeDetail {
		return nil, false
	}
	if m.mode == keymap.ModeDetail && m.incoming.Request() != nil {
		return nil, false // the detail's own keys (handleDetailKey)
	}
	if s := m.list.Incoming(); s != nil && m.mode == keymap.ModeList {
		act := question.RowKey(m.env(), s, msg, true, m.questionOf(s) != nil)
		return m.questionAction(msg, act), act != nil
	}
	open := key.Matches(msg, m.keys.Answer)
	if !open && m.mode == keymap.ModeList && msg.String() == "enter" {
		r, ok := m.selectedRequest()
		open = ok && m.asks(r)
	}
	if !open {
		if pressed(msg, m.keys.Answer) {
			m.setStatus(levelInfo, "nothing waits for your answer here")
			return nil, true
		}
		return nil, false
	}
	m.status = statusLine{}
	return m.openAnswer(), true
}

// openAnswer opens the form on the selected request's question.
func (m *Model) openAnswer() tea.Cmd {
	r, _ := m.selectedRequest()
	var id wire.ID
	if r != nil {
		id = r.ID
	}
	if r != nil && r.State == session.StateWaitingInput {
		asked, _ := r.Asked()
		var act screen.Action
		m.answer, act = answer.OpenRound(m.env(), answerSchema, r.ID, asked, rootsOrEmpty(m.opts.Roots))
		if m.answer.Shown() {
			m.showAnswer()
		}
		return m.doAnswer(act)
	}
	q := m.questionFor(id)
	if q == nil {
		m.setStatus(levelInfo, "nothing waits for your answer here")
		return nil
	}
	return m.openQuestion(q)
}

// openQuestion opens the form on one legacy question.
func (m *Model) openQuestion(q *serverQuestion) tea.Cmd {
	var during wire.ID
	if s := m.serverRequest(q); s != nil {
		during = s.During
	}
	var act screen.Action
	m.answer, act = answer.OpenQuestion(m.env(), answerSchema, answer.Question{ID: q.id, Method: q.method, Params: q.params, Ref: q}, during)
	m.showAnswer()
	return m.doAnswer(act)
}

// answerSchema reads an elicitation's requested schema for the form as
// the composer reads a tool's input schema.
func answerSchema(raw json.RawMessage, line func(string) string) answer.Schema {
	tf := schemaform.Read(raw, line)
	s := answer.Schema{Note: tf.Note, Check: tf.Validate}
	for _, p := range tf.Params {
		s.Params = append(s.Params, answer.Param{Name: p.Name, Type: p.Type, Required: p.Required, Default: p.Default, Hint: p.Hint})
	}
	return s
}

// showAnswer shows the form, remembering the screen it was opened from.
func (m *Model) showAnswer() {
	if m.mode != keymap.ModeAnswer {
		m.prevAnswer = m.mode
	}
	m.mode = keymap.ModeAnswer
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
		m.closeAnswer()
	case screen.Status:
		m.setStatus(statusLevel(a.Level), a.Text) // the same levels, in the same order
		if !a.About.IsZero() {
			m.status.about = a.About
		}
	case answer.Details:
		m.answerDetails(a)
	case answer.Reply:
		m.replyQuestion(a)
	case answer.SendRound:
		return m.sendAnswers(a.ID, a.Answers, a.Kept)
	case answer.Decline:
		// The conversation ends here, its request not retried.
		m.closeAnswer()
		ch, err := m.tracker.EndConversation(a.ID, a.Reason, m.now())
		if err != nil {
			m.setStatus(levelWarn, fmt.Sprintf("#%s: %s", a.ID, look.RefusalText(err, m.now())))
			return nil
		}
		m.changed([]session.Change{ch})
		m.setStatus(levelInfo, fmt.Sprintf("#%s: sampling declined; the request is not retried", a.ID))
	}
	return nil
}

// answerDetails leaves the form, unanswered, for the detail of what it
// asks: a legacy question's own, else its request's.
func (m *Model) answerDetails(a answer.Details) {
	if q, ok := a.Question.(*serverQuestion); ok {
		if s := m.serverRequest(q); s != nil {
			// The server's question itself: its params, its tie.
			m.closeAnswer()
			m.openIncomingDetail(s)
			m.setStatus(levelInfo, answer.LaterText)
			return
		}
	}
	m.closeAnswer()
	if r, ok := m.tracker.Get(a.ID); ok && !a.ID.IsZero() {
		m.list = m.list.Select(r.ID, m.list.Following())
		m.openDetail()
		m.setStatus(levelInfo, answer.LaterText)
	}
}

// replyQuestion hands the form's answer to a legacy question to Serve,
// unless its fate changed under the form: an answer then would be stale
// (and the client sends none for a withdrawn one, nor for one it
// refused).
func (m *Model) replyQuestion(a answer.Reply) {
	q := a.Question.(*serverQuestion)
	if s := m.serverRequest(q); questionOver(q, s) {
		m.dropQuestion(q)
		m.closeAnswer()
		m.setStatus(levelWarn, fmt.Sprintf("%s %s: not sent — %s", m.line(q.method), m.line(q.id.String()), incomingFate(m, s)))
		return
	}
	q.reply <- serverReply{result: a.Result, err: a.Err}
	q.replied = true
	kept := a.Kept
	q.form = &kept
	m.dropQuestion(q)
	m.closeAnswer()
	m.setStatus(levelInfo, fmt.Sprintf("%s %s: %s", m.line(q.method), m.line(q.id.String()), answeredWord(a.Action, q.method)))
}

// sendAnswers answers the round and sends the next one; kept is the form
// as last shown (nil: none), shown again if the round cannot be sent.
func (m *Model) sendAnswers(id wire.ID, answers map[string]json.RawMessage, kept *answer.Model) tea.Cmd {
	m.closeAnswer()
	rt, err := m.tracker.Answer(id, answers, m.now())
	if err != nil {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: not answered — %s", id, look.RefusalText(err, m.now())))
		return nil
	}
	m.changed([]session.Change{rt.Change})
	if kept != nil {
		sent := kept.SentAs(rt.ID)
		m.sentRound = &sent
	}
	m.setStatus(levelInfo, fmt.Sprintf("#%s: answered — round %d sent", rt.ID, rt.Round))
	m.status.about = rt.ID
	m.afterChange()
	conn, gen := m.conn, m.connGen
	req := client.Request{ID: rt.ID, Method: rt.Method, Params: rt.Params, ProgressToken: rt.ProgressToken, LateWindow: rt.LateWindow}
	return func() tea.Msg {
		if err := conn.Send(context.Background(), req); err != nil {
			return sendFailedMsg{gen: gen, id: req.ID, err: err}
		}
		return nil
	}
}

// autoAnswer answers, without a prompt, the rounds that ask only for
// roots (from --root): changes are what the tracker just changed.
func (m *Model) autoAnswer(changes []session.Change) tea.Cmd {
	m.questionFates()
	var cmds []tea.Cmd
	for _, ch := range changes {
		if ch.Kind == session.ChangeState && m.mode == keymap.ModeAnswer && m.answer.Legacy() == nil && ch.ID == m.answer.ID() && ch.To != session.StateWaitingInput {
			// The request left waiting under the form (the connection
			// was lost): there is nothing to answer any more.
			m.closeAnswer()
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

// closeAnswer leaves the form.
func (m *Model) closeAnswer() {
	if m.mode == keymap.ModeAnswer {
		m.mode = m.prevAnswer
		if m.mode == keymap.ModeAnswer || m.mode == keymap.ModeComposer {
			m.mode = keymap.ModeList
		}
	}
	m.answer = answer.Model{}
}

func answeredWord(action, method string) string {
	switch {
	case method == wire.MethodSamplingCreate && action == "accept":
		return "replied"
	case method == wire.MethodSamplingCreate:
		return "declined"
	case action == "accept":
		return "accepted"
	case action == "decline":
		return "declined"
	}
	return "cancelled (dismissed)"
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
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
		ch, err := m.tracker.RequestCancel(id, reason, cause, m.now())
		if err != nil {
			m.setStatus(levelWarn, fmt.Sprintf("#%s: nothing to cancel — %s", id, look.RefusalText(err, m.now())))
			return nil, true, nil
		}
		m.changed([]session.Change{ch})
		if m.answer.ID() == id {
			m.closeAnswer()
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
	var qs []*serverQuestion
	for {
		q := m.questionFor(id)
		if q == nil {
			break
		}
		qs = append(qs, q)
		m.dropQuestion(q)
		if m.answer.Legacy() == q {
			m.closeAnswer()
			m.setStatus(levelWarn, fmt.Sprintf("#%s is being cancelled: the server's question is declined", id))
		}
	}
	return qs
}

// declineAfter runs cancel (the request's notifications/cancelled), then
// declines the server's questions that were waiting on it: cancelled
// first, the server learns that the call is abandoned before it reads the
// decline, rather than answering the call on the strength of the decline.
func declineAfter(cancel tea.Cmd, qs []*serverQuestion) tea.Cmd {
	if len(qs) == 0 {
		return cancel
	}
	decline := declineCmd(qs)
	return func() tea.Msg {
		msg := cancel()
		decline()
		return msg
	}
}

// declineCmd declines the server's questions qs (answered by no one else:
// they are no longer in Model.questions).
func declineCmd(qs []*serverQuestion) tea.Cmd {
	if len(qs) == 0 {
		return nil
	}
	for _, q := range qs {
		q.replied = true // here, on Update's goroutine
	}
	return func() tea.Msg {
		for _, q := range qs {
			res, rpcErr := mustJSON(map[string]string{"action": "decline"}), (*wire.Error)(nil)
			if q.method == wire.MethodSamplingCreate {
				res, rpcErr = nil, &wire.Error{Code: wire.CodeUserRejected, Message: "User rejected sampling request"}
			}
			q.reply <- serverReply{result: res, err: rpcErr}
		}
		return nil
	}
}
