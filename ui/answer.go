package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/schemaform"
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
	form *answerForm
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

// answerForm is the open answer form: one question at a time.
type answerForm struct {
	// id is the request the question belongs to (zero for a legacy
	// question tied to none).
	id wire.ID
	// legacy is the server's own request being answered (nil: modern).
	legacy *serverQuestion
	// Modern: the round's input requests still to answer, the one shown
	// (cur), and the answers so far.
	asked   []session.InputRequest
	cur     int
	answers map[string]json.RawMessage

	method  string
	message string   // the elicitation's message
	url     string   // a URL-mode elicitation's URL (shown, never opened)
	lines   []string // sampling: the messages and preferences
	fields  []schemaform.Field
	schema  schemaform.Form
	focus   int
	err     string
	// warn says what changed under the form (the question's request
	// ended first): the answer can still be sent.
	warn string
	// dead: a modern form shown again, as typed, after its round could not
	// be sent (the request failed): it only tells, it sends nothing.
	dead bool
}

// anyway begins a schema objection the form says before sending.
const anyway = "enter again sends it anyway: "

// answerKeys are the form's keys (shown in its hint line).
var (
	answerDecline = key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "decline"))
	answerDismiss = key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "cancel"))
	// answerDetails leaves the form, unanswered, for the request's detail
	// (enter on a waiting row opens the form, not the detail).
	answerDetails = key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "details"))
)

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
		if m.mode == keymap.ModeAnswer && m.answer.legacy == msg.q {
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
	if cmd, ok := m.incomingKey(msg); ok {
		return cmd, true
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
		m.answer = answerForm{id: r.ID, asked: asked, answers: map[string]json.RawMessage{}}
		return m.nextAsked()
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
	m.answer = answerForm{legacy: q}
	if s := m.serverRequest(q); s != nil {
		m.answer.id = s.During
	}
	m.prevAnswer = m.mode
	m.mode = keymap.ModeAnswer
	return m.answer.build(m, q.method, q.params)
}

// nextAsked moves the modern form to the next input request that needs
// the user, answering roots/list from --root on the way; past the last it
// sends the round.
func (m *Model) nextAsked() tea.Cmd {
	f := &m.answer
	for f.cur < len(f.asked) {
		q := f.asked[f.cur]
		if q.Method == wire.MethodRootsList {
			f.answers[q.Key] = rootsOrEmpty(m.opts.Roots)
			f.cur++
			continue
		}
		if m.mode != keymap.ModeAnswer {
			m.prevAnswer = m.mode
		}
		m.mode = keymap.ModeAnswer
		return f.build(m, q.Method, q.Params)
	}
	return m.sendAnswers(f.id, f.answers)
}

// sendAnswers answers the round and sends the next one.
func (m *Model) sendAnswers(id wire.ID, answers map[string]json.RawMessage) tea.Cmd {
	var kept *answerForm
	if m.mode == keymap.ModeAnswer && m.answer.legacy == nil && len(m.answer.fields) > 0 {
		f := m.answer
		f.err, f.warn = "", ""
		// The question shown last (answering moved past it, and past any
		// roots answered without a prompt).
		for f.cur > 0 && (f.cur >= len(f.asked) || f.asked[f.cur].Method == wire.MethodRootsList) {
			f.cur--
		}
		kept = &f
	}
	m.closeAnswer()
	rt, err := m.tracker.Answer(id, answers, m.now())
	if err != nil {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: not answered — %s", id, look.RefusalText(err, m.now())))
		return nil
	}
	m.changed([]session.Change{rt.Change})
	if kept != nil {
		kept.id = rt.ID
		m.sentRound = kept
	}
	m.setStatus(levelInfo, fmt.Sprintf("#%s: answered — round %d sent", rt.ID, rt.Round))
	m.status.about = rt.ID
	m.afterChange()
	conn, gen := m.conn, m.connGen
	req := client.Request{ID: rt.ID, Method: rt.Method, Params: rt.Params, ProgressToken: rt.ProgressToken}
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
		if ch.Kind == session.ChangeState && m.mode == keymap.ModeAnswer && m.answer.legacy == nil && ch.ID == m.answer.id && ch.To != session.StateWaitingInput {
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
			cmds = append(cmds, m.sendAnswers(r.ID, answers))
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
	m.answer = answerForm{}
}

// build fills the form for one question.
func (f *answerForm) build(m *Model, method string, params json.RawMessage) tea.Cmd {
	f.method, f.message, f.url, f.lines, f.fields, f.focus, f.err = method, "", "", nil, nil, 0, ""
	f.schema = schemaform.Form{}
	switch method {
	case wire.MethodElicitationCreate:
		var p struct {
			Mode    string          `json:"mode"`
			Message string          `json:"message"`
			URL     string          `json:"url"`
			Schema  json.RawMessage `json:"requestedSchema"`
		}
		_ = json.Unmarshal(params, &p)
		f.message = p.Message
		if p.Mode == "url" {
			f.url = p.URL
			break
		}
		f.schema = schemaform.Read(p.Schema, m.line)
		for _, prm := range f.schema.Params {
			if prm.Type == "boolean" {
				fl := schemaform.BoolField(prm.Name, prm.Default == "true")
				fl.Hint, fl.Required = prm.Hint, prm.Required
				f.fields = append(f.fields, fl)
				continue
			}
			fl := schemaform.TextField(prm.Name, prm.Type, prm.Required, "", prm.Hint)
			fl.Input.SetValue(prm.Default) // defaults pre-filled (SEP-1034)
			f.fields = append(f.fields, fl)
		}
	case wire.MethodSamplingCreate:
		f.lines = samplingLines(params)
		fl := schemaform.TextField("reply", "string", true, "the assistant's reply", "")
		f.fields = append(f.fields, fl)
	default:
		f.message = "inflight cannot answer " + method + "; decline it"
	}
	return f.focusOn(0)
}

func (f *answerForm) focusOn(i int) tea.Cmd {
	if len(f.fields) == 0 {
		return nil
	}
	i = (i + len(f.fields)) % len(f.fields)
	for j := range f.fields {
		f.fields[j].Input.Blur()
	}
	f.focus = i
	if !f.fields[i].IsBool {
		return f.fields[i].Input.Focus()
	}
	return nil
}

// samplingLines is what a sampling request shows: its messages, the
// system prompt and the model preferences (raw: sanitised when drawn).
func samplingLines(params json.RawMessage) []string {
	var p struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		SystemPrompt string `json:"systemPrompt"`
		MaxTokens    int    `json:"maxTokens"`
		Prefs        *struct {
			Hints []struct {
				Name string `json:"name"`
			} `json:"hints"`
			Cost         *float64 `json:"costPriority"`
			Speed        *float64 `json:"speedPriority"`
			Intelligence *float64 `json:"intelligencePriority"`
		} `json:"modelPreferences"`
	}
	_ = json.Unmarshal(params, &p)
	var out []string
	if p.SystemPrompt != "" {
		out = append(out, "system: "+p.SystemPrompt)
	}
	for _, msg := range p.Messages {
		out = append(out, msg.Role+": "+contentText(msg.Content))
	}
	var prefs []string
	if p.Prefs != nil {
		var hints []string
		for _, h := range p.Prefs.Hints {
			hints = append(hints, h.Name)
		}
		if len(hints) > 0 {
			prefs = append(prefs, "hints "+strings.Join(hints, ", "))
		}
		for _, pr := range []struct {
			name string
			v    *float64
		}{{"cost", p.Prefs.Cost}, {"speed", p.Prefs.Speed}, {"intelligence", p.Prefs.Intelligence}} {
			if pr.v != nil {
				prefs = append(prefs, pr.name+" "+strconv.FormatFloat(*pr.v, 'g', 3, 64))
			}
		}
	}
	if p.MaxTokens > 0 {
		prefs = append(prefs, "max "+strconv.Itoa(p.MaxTokens)+" tokens")
	}
	if len(prefs) > 0 {
		out = append(out, "model preferences: "+strings.Join(prefs, " · "))
	}
	return out
}

// contentText is a message's content in words: its text, or its type.
func contentText(raw json.RawMessage) string {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var one block
	if json.Unmarshal(raw, &one) == nil && one.Type != "" {
		if one.Type == "text" {
			return one.Text
		}
		return "[" + one.Type + "]"
	}
	var many []block
	if json.Unmarshal(raw, &many) == nil {
		parts := make([]string, 0, len(many))
		for _, b := range many {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			} else {
				parts = append(parts, "["+b.Type+"]")
			}
		}
		return strings.Join(parts, " ")
	}
	return string(raw)
}

// answerKey handles a key in the form.
func (m *Model) answerKey(msg tea.KeyPressMsg) tea.Cmd {
	f := &m.answer
	switch {
	case key.Matches(msg, m.keys.Back):
		m.closeAnswer()
		m.setStatus(levelInfo, "not answered yet: a opens the form again")
		return nil
	case key.Matches(msg, answerDetails):
		id := f.id
		if q := f.legacy; q != nil {
			if s := m.serverRequest(q); s != nil {
				// The server's question itself: its params, its tie.
				m.closeAnswer()
				m.openIncomingDetail(s)
				m.setStatus(levelInfo, "not answered yet: a opens the form again")
				return nil
			}
		}
		m.closeAnswer()
		if r, ok := m.tracker.Get(id); ok && !id.IsZero() {
			m.list.selected = r.ID
			m.openDetail()
			m.setStatus(levelInfo, "not answered yet: a opens the form again")
		}
		return nil
	case f.dead:
		// Shown again after its round could not be sent: the request
		// failed with it, and nothing more can be sent on it.
		if msg.String() == "enter" || key.Matches(msg, answerDecline) || key.Matches(msg, answerDismiss) {
			f.err = "the request failed with the round that could not be sent: nothing more can be sent on it — esc closes, r on its row re-issues it"
		}
		return nil
	case msg.String() == "enter":
		return m.answerWith("accept")
	case key.Matches(msg, answerDecline):
		return m.answerWith("decline")
	case key.Matches(msg, answerDismiss):
		if f.method != wire.MethodElicitationCreate {
			f.err = "a sampling request has no cancel: ctrl+d declines it"
			return nil
		}
		return m.answerWith("cancel")
	case msg.String() == "tab" || msg.String() == "down":
		return f.focusOn(f.focus + 1)
	case msg.String() == "shift+tab" || msg.String() == "up":
		return f.focusOn(f.focus - 1)
	case f.focus < len(f.fields) && f.fields[f.focus].IsBool:
		if msg.String() == "space" {
			f.fields[f.focus].On = !f.fields[f.focus].On
		}
		return nil
	}
	return f.toInput(msg)
}

// toInput hands a message to the focused text field.
func (f *answerForm) toInput(msg tea.Msg) tea.Cmd {
	if f.focus >= len(f.fields) || f.fields[f.focus].IsBool {
		return nil
	}
	var cmd tea.Cmd
	fl := &f.fields[f.focus]
	fl.Input, cmd = fl.Input.Update(msg)
	f.err = ""
	return cmd
}

// answerWith answers the question shown with one of the spec's actions:
// accept (the form's content, or the sampling reply), decline, cancel.
func (m *Model) answerWith(action string) tea.Cmd {
	f := &m.answer
	var result json.RawMessage
	var rpcErr *wire.Error
	switch {
	case f.method == wire.MethodSamplingCreate && action == "accept":
		text := strings.TrimSpace(f.fields[0].Input.Value())
		if text == "" {
			f.err = "write the reply (ctrl+d declines)"
			return nil
		}
		result = mustJSON(map[string]any{"role": "assistant", "content": map[string]string{"type": "text", "text": text},
			"model": "inflight-user", "stopReason": "endTurn"})
	case f.method == wire.MethodSamplingCreate:
		rpcErr = &wire.Error{Code: wire.CodeUserRejected, Message: "User rejected sampling request"}
	case f.method != wire.MethodElicitationCreate:
		rpcErr = &wire.Error{Code: wire.CodeMethodNotFound, Message: "inflight does not answer " + f.method}
	case action == "accept" && f.url == "":
		content, err := f.content()
		if err != nil {
			f.err = err.Error()
			return nil
		}
		if err := f.schema.Validate(content); err != nil {
			// Said once; enter again sends it anyway (a fair probe of
			// the server's own checks).
			if msg := anyway + strings.ReplaceAll(err.Error(), "the tool's schema", "the requested schema"); f.err != msg {
				f.err = msg
				return nil
			}
		}
		result = mustJSON(map[string]any{"action": "accept", "content": content})
	default:
		result = mustJSON(map[string]string{"action": action})
	}
	if q := f.legacy; q != nil {
		if s := m.serverRequest(q); questionOver(q, s) {
			// Its fate changed under the form: an answer now would be
			// stale (and the client sends none for a withdrawn one, nor
			// for one it refused).
			m.dropQuestion(q)
			m.closeAnswer()
			m.setStatus(levelWarn, fmt.Sprintf("%s %s: not sent — %s", m.line(q.method), m.line(q.id.String()), incomingFate(m, s)))
			return nil
		}
		q.reply <- serverReply{result: result, err: rpcErr}
		q.replied = true
		kept := *f
		kept.err, kept.warn = "", ""
		q.form = &kept
		m.dropQuestion(q)
		m.closeAnswer()
		m.setStatus(levelInfo, fmt.Sprintf("%s %s: %s", m.line(q.method), m.line(q.id.String()), answeredWord(action, q.method)))
		return nil
	}
	key := f.asked[f.cur].Key
	if rpcErr != nil {
		// "If an error occurs or the user declines the sampling request,
		// the client does not need to replay the initial call"
		// (sampling.mdx): the conversation ends here.
		id := f.id
		m.closeAnswer()
		ch, err := m.tracker.EndConversation(id, "declined "+key+" ("+f.method+"); not retried", m.now())
		if err != nil {
			m.setStatus(levelWarn, fmt.Sprintf("#%s: %s", id, look.RefusalText(err, m.now())))
			return nil
		}
		m.changed([]session.Change{ch})
		m.setStatus(levelInfo, fmt.Sprintf("#%s: sampling declined; the request is not retried", id))
		return nil
	}
	f.answers[key] = result
	f.cur++
	return m.nextAsked()
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

// content is the accepted elicitation's content.
func (f *answerForm) content() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for i := range f.fields {
		fl := &f.fields[i]
		if fl.IsBool {
			out[fl.Name] = json.RawMessage(strconv.FormatBool(fl.On))
			continue
		}
		v := strings.TrimSpace(fl.Input.Value())
		if v == "" {
			if fl.Required {
				return nil, fmt.Errorf("%s is required", fl.Name)
			}
			continue
		}
		raw, err := schemaform.JSONValue(fl.Type, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", fl.Name, err)
		}
		out[fl.Name] = raw
	}
	return out, nil
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
		if m.answer.id == id {
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
		if m.answer.legacy == q {
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

// waitingParts are the row's last column for a request waiting for the
// user: `for you · round 2 · elicitation "Confirm deletion of 3 files?"`;
// a narrow row keeps the question and drops the words first.
func (m *Model) waitingParts(r *session.Request) []look.Part {
	st := m.styles
	asked, _ := r.Asked()
	parts := []look.Part{{Variants: []string{"for you"}, Style: st.Warn, Prio: look.PrioTiming}}
	round := strconv.Itoa(r.Round())
	parts = append(parts, look.Part{Variants: []string{"round " + round}, Style: st.Warn, Prio: look.PrioTiming})
	shown := 0
	for _, q := range asked {
		if q.Method == wire.MethodRootsList {
			continue
		}
		if shown == 0 {
			parts = append(parts, look.Part{Variants: []string{questionText(m, q.Method, q.Params)}, Style: st.Warn, Prio: look.PrioSignal, Cut: true, Keep: len("elicitation")})
		}
		shown++
	}
	if shown > 1 {
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("+%d more", shown-1)}, Style: st.Warn, Prio: look.PrioFlag})
	}
	return parts
}

// questionText names a question in a few words: `elicitation "…"`.
func questionText(m *Model, method string, params json.RawMessage) string {
	var p struct {
		Message  string `json:"message"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(params, &p)
	switch method {
	case wire.MethodElicitationCreate:
		return "elicitation " + strconv.Quote(m.line(clipRunes(p.Message, 80)))
	case wire.MethodSamplingCreate:
		text := ""
		if n := len(p.Messages); n > 0 {
			text = contentText(p.Messages[n-1].Content)
		}
		return "sampling " + strconv.Quote(m.line(clipRunes(text, 80)))
	}
	return m.line(method)
}

// serverAskCell is the row's last column for a legacy request the
// server's own question waits on: `↘ elicitation/create from the server ·
// waiting for you` ("" when none does).
func (m *Model) serverAskCell(r *session.Request, w int) string {
	if r.Conv == nil {
		return ""
	}
	for _, s := range r.Conv.ServerRequests {
		if s.Open() {
			method := m.line(s.Method)
			short, _, _ := strings.Cut(method, "/")
			return look.BuildCell([]look.Part{{Variants: []string{
				"↘ " + method + " from the server · waiting for you",
				"↘ " + method + " · waiting for you",
				"↘ " + short + " · waiting for you",
				"↘ " + short + " waits",
			}, Style: m.styles.Warn, Prio: look.PrioFlag}}, w)
		}
	}
	return ""
}

// viewAnswer draws the form, in the composer's style.
func (m *Model) viewAnswer(height int) string {
	st := m.styles
	f := &m.answer
	var b strings.Builder
	title := "ANSWER THE SERVER "
	about := m.line(f.method)
	if f.legacy != nil {
		about = "↘ " + about + " from the server (its ID " + m.line(f.legacy.id.String()) + ")"
	} else {
		about += fmt.Sprintf(" · %s", m.line(f.asked[f.cur].Key))
		// Roots are answered without a prompt: not counted.
		n, at := 0, 0
		for i, q := range f.asked {
			if q.Method != wire.MethodRootsList {
				n++
				if i <= f.cur {
					at++
				}
			}
		}
		if n > 1 {
			about += fmt.Sprintf(" · question %d of %d", at, n)
		}
	}
	if !f.id.IsZero() {
		if r, ok := m.tracker.Get(f.id); ok {
			head := "#" + r.ID.String() + " " + m.requestLabel(r, false)
			if f.legacy == nil {
				head += " · round " + strconv.Itoa(r.Round())
			}
			about = head + " · " + about
		}
	}
	b.WriteString(look.Fit("  "+st.Title.Render(title)+st.Dim.Render(about), m.width) + "\n")
	hint := "tab/↓ next field · enter accept · ctrl+d decline · ctrl+x cancel · ctrl+o details · esc back (answer later)"
	if m.width < 110 {
		hint = "enter accept · ctrl+d decline · ctrl+x cancel · ctrl+o details · esc later"
	}
	if f.method == wire.MethodSamplingCreate {
		hint = "enter send the reply · ctrl+d decline · ctrl+o details · esc back (answer later)"
	}
	if f.url != "" && len(f.fields) == 0 {
		hint = "enter accept (you opened it) · ctrl+d decline · ctrl+x cancel · ctrl+o details · esc later"
	}
	b.WriteString(st.Dim.Render(look.Fit("  "+hint, m.width)) + "\n\n")
	if f.message != "" {
		for _, l := range wrapText(m.line(f.message), m.width-4) {
			b.WriteString(look.Fit("  "+st.Bold.Render(l), m.width) + "\n")
		}
		b.WriteString("\n")
	}
	if f.url != "" {
		// The spec asks that the target's host be shown clearly, before
		// the user consents to go there.
		b.WriteString(st.Warn.Render(look.Fit("  open this URL yourself (inflight never opens it): ", m.width)) + "\n")
		if host := urlHost(f.url); host != "" {
			b.WriteString(look.Fit("  site  "+st.Bold.Render(m.line(host)), m.width) + "\n")
		} else {
			b.WriteString(st.Warn.Render(look.Fit("  the server's URL has no host inflight can read: do not open it unchecked", m.width)) + "\n")
		}
		for _, l := range wrapText(m.line(f.url), m.width-4) {
			b.WriteString(look.Fit("  "+l, m.width) + "\n")
		}
		b.WriteString("\n")
		b.WriteString(st.Dim.Render(look.Fit("  enter says you did (accept); ctrl+d declines; ctrl+x cancels", m.width)) + "\n")
	}
	for _, l := range f.lines {
		for _, w := range wrapText(m.line(l), m.width-4) {
			b.WriteString(look.Fit("  "+w, m.width) + "\n")
		}
	}
	if len(f.lines) > 0 {
		b.WriteString("\n")
	}
	for i := range f.fields {
		b.WriteString(m.answerFieldLine(i) + "\n")
	}
	if f.schema.Note != "" {
		b.WriteString(st.Warn.Render(look.Fit("  "+f.schema.Note, m.width)) + "\n")
	}
	if f.warn != "" {
		b.WriteString("\n" + st.Warn.Render(look.Fit("  ⚑ "+m.line(f.warn), m.width)) + "\n")
	}
	if f.err != "" {
		b.WriteString("\n")
		for i, l := range wrapText(m.line(f.err), m.width-6) {
			mark := "  ✗ "
			if i > 0 {
				mark = "    "
			}
			b.WriteString(st.Error.Render(look.Fit(mark+l, m.width)) + "\n")
		}
	}
	return b.String()
}

func (m *Model) answerFieldLine(i int) string {
	st := m.styles
	f := &m.answer.fields[i]
	if !f.IsBool {
		f.Input.SetWidth(max(10, min(40, m.width-schemaform.LabelWidth-30)))
	}
	cursor := "  "
	if i == m.answer.focus {
		cursor = st.Cursor.Render("▌ ")
	}
	label := m.line(f.Name)
	if f.Required {
		label += "*"
	}
	value := f.Input.View()
	if f.IsBool {
		value = "[ ]"
		if f.On {
			value = "[x]"
		}
		value += st.Dim.Render("  space toggles")
	}
	hint := ""
	if f.Type != "" && !f.IsBool {
		hint = st.Dim.Render("  " + f.Type)
	}
	if f.Hint != "" {
		hint += st.Dim.Render(" · " + m.line(f.Hint))
	}
	return look.Fit(cursor+look.Fit(label, schemaform.LabelWidth)+value+hint, m.width)
}

// wrapText breaks s into lines of at most w runes, at spaces.
func wrapText(s string, w int) []string {
	if w < 10 {
		w = 10
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case len([]rune(line))+1+len([]rune(word)) > w:
				out = append(out, line)
				line = word
			default:
				line += " " + word
			}
		}
		out = append(out, line)
		if len(out) > 12 {
			return append(out[:12], "…")
		}
	}
	return out
}

// convSig is what the detail's CONVERSATION section is built from.
type convSig struct {
	rounds, answered, serverReqs, serverEnded int
	last                                      session.State
	stopped                                   string
}

func convSigOf(r *session.Request) convSig {
	c := r.Conv
	if c == nil {
		return convSig{}
	}
	s := convSig{rounds: len(c.Rounds), serverReqs: len(c.ServerRequests), stopped: c.Stopped}
	for _, rd := range c.Rounds {
		if !rd.AnsweredAt.IsZero() {
			s.answered++
		}
		s.last = rd.Outcome
	}
	for _, sr := range c.ServerRequests {
		if !sr.Open() {
			s.serverEnded++
		}
	}
	return s
}

// writeConversation is the detail's CONVERSATION section: every round
// with its ID, what was asked and answered (requestState only as opaque
// bytes), and the legacy server's own requests with their fate.
func (m *Model) writeConversation(b *strings.Builder, r *session.Request) {
	st := m.styles
	c := r.Conv
	// Times from the request's start (its first round), where ELAPSED
	// counts from.
	start := r.Created
	at := func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return look.Ago(t.Sub(start))
	}
	if n := len(c.Rounds); n > 0 {
		b.WriteString(st.Bold.Render(fmt.Sprintf("CONVERSATION (%d %s)", n, look.CountNoun(n, "round", "rounds"))) + "\n")
		for i, rd := range c.Rounds {
			line := fmt.Sprintf("round %d  #%s  sent %s", i+1, m.line(rd.ID.String()), at(rd.Began))
			if !rd.ResponseAt.IsZero() {
				line += fmt.Sprintf(" → %s %s", look.StateName(rd.Outcome), at(rd.ResponseAt))
			} else if rd.Outcome.IsFinal() {
				line += " → " + look.StateName(rd.Outcome)
			}
			b.WriteString("  " + line + "\n")
			for _, q := range rd.Asked {
				b.WriteString(st.Dim.Render("      asked "+m.line(q.Key)+": ") + questionText(m, q.Method, q.Params) + "\n")
			}
			if len(rd.RequestState) > 0 {
				b.WriteString(st.Dim.Render(fmt.Sprintf("      requestState: %d opaque bytes, echoed as they came", len(rd.RequestState))) + "\n")
			}
			if !rd.AnsweredAt.IsZero() {
				keys := make([]string, 0, len(rd.Answers))
				for k, v := range rd.Answers {
					keys = append(keys, m.line(k)+" "+answerWord(v))
				}
				sort.Strings(keys)
				b.WriteString(st.Dim.Render("      answered "+at(rd.AnsweredAt)+": ") + strings.Join(keys, ", ") + "\n")
			}
		}
		if c.Stopped != "" {
			b.WriteString(st.Warn.Render("  "+m.line(c.Stopped)) + "\n")
		}
	}
	if len(c.ServerRequests) > 0 {
		b.WriteString(st.Bold.Render("THE SERVER'S REQUESTS") + "\n")
		if n := c.ServerRequestsDropped; n > 0 {
			b.WriteString(st.Dim.Render(fmt.Sprintf("  … %d older ones that had ended are not kept; these %d are the open ones and the newest", n, len(c.ServerRequests))) + "\n")
		}
		for _, s := range c.ServerRequests {
			fate := "waiting for you"
			if !s.Open() {
				fate = strings.ReplaceAll(s.State.String(), "_", " ") + " " + at(s.Ended)
			}
			b.WriteString(fmt.Sprintf("  ↘ %s  id %s  %s · %s\n", m.line(s.Method), m.line(s.ID.String()), at(s.At), fate))
		}
	}
}

// answerWord says what an answer was, in a word: an elicitation's action,
// else "answered".
func answerWord(raw json.RawMessage) string {
	var a struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(raw, &a) == nil && a.Action != "" {
		return a.Action
	}
	return "answered"
}

// inputRequiredParts say why a request ended input_required: the round
// cap (flagged), how the conversation was stopped, or a request begun
// where nobody could answer.
func (m *Model) inputRequiredParts(r *session.Request) []look.Part {
	st := m.styles
	switch c := r.Conv; {
	case c != nil && c.GaveUp:
		return []look.Part{{Variants: []string{"⚑ " + m.line(c.Stopped)}, Style: st.Flag, Prio: look.PrioFlag}}
	case c != nil && c.Stopped != "":
		return []look.Part{{Variants: []string{m.line(c.Stopped)}, Style: st.Warn, Prio: look.PrioSignal, Cut: true, Keep: look.MinCut}}
	}
	return []look.Part{{Variants: []string{"the server needs input (MRTR): not answered here", "needs input: not answered"}, Style: st.Warn, Prio: look.PrioSignal}}
}

// urlHost is the host a URL names (lower case, port kept), "" when it has
// none (a scheme without one, or not a URL).
func urlHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Host)
}
