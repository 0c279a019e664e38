package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/session"
	"inflight/ui/answer"
	"inflight/ui/look"
	"inflight/ui/question"
	"inflight/ui/screen"
	"inflight/wire"
)

// A legacy server's own requests reach Questions.Serve, the client's
// ServerRequests handler, on one of the client's worker goroutines. Serve
// hands the question to the UI as a message (through a channel a command
// waits on, as the events come) and waits, bounded, for the answer on a
// channel of the question's own; Update never blocks. The root keeps the
// questions waiting in a questionQueue. A server that withdraws its
// question (notifications/cancelled) ends Serve's ctx, and the form
// closes.

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

// over reports whether the record s says that q can no longer be
// answered: withdrawn, lost, not answered, or answered when the UI never
// replied (the client refused it: nobody answered in time). Open and
// abandoned ones can be, and so can one the UI replied to whose record
// says answered: the answer came back unsent (questionNotSent), and the
// RequestFailed that makes the record wait again may be behind.
func (q *serverQuestion) over(s *session.ServerRequest) bool {
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

// record is the tracker's record of q (nil before the tracker applied its
// arrival); the first one found stays q's.
func (q *serverQuestion) record(t *session.Tracker) *session.ServerRequest {
	if q.rec != nil {
		return q.rec
	}
	// The open record under its ID may be another's: the server withdrew
	// a question and asked a new one under its ID, and this question came
	// through Serve before the events saying so were applied (two
	// channels, no order). Bound to the old record, it would leave with
	// its withdrawal; the read time tells them apart.
	if s, ok := t.ServerRequest(q.id); ok && s.Method == q.method && (q.at.IsZero() || s.At.Equal(q.at)) {
		q.rec = s
		return s
	}
	return nil
}

// lastState is where the tracker has q, newest record first
// (ServerWaiting when it has none).
func (q *serverQuestion) lastState(t *session.Tracker) session.ServerRequestState {
	all := t.ServerRequests()
	for i := len(all) - 1; i >= 0 && i >= len(all)-64; i-- {
		if all[i].ID == q.id && all[i].Method == q.method {
			return all[i].State
		}
	}
	return session.ServerWaiting
}

// questionQueue is the legacy server's questions waiting for the user,
// oldest first. A question joins it when Serve hands it over (and again
// when its answer could not be sent), and leaves it when the user answers
// or declines it, when a cancel of its request takes it, or when the
// tracker says it can no longer be answered (fates). What it answers it
// reads in the tracker it is handed; what the user sees of it is the
// root's to say.
type questionQueue struct {
	qs []*serverQuestion
}

// add queues q, unless it waits already.
func (qq *questionQueue) add(q *serverQuestion) {
	if !qq.has(q) {
		qq.qs = append(qq.qs, q)
	}
}

// has reports whether q waits in the queue.
func (qq *questionQueue) has(q *serverQuestion) bool {
	return slices.Contains(qq.qs, q)
}

// drop takes q out of the queue.
func (qq *questionQueue) drop(q *serverQuestion) {
	if i := slices.Index(qq.qs, q); i >= 0 {
		qq.qs = slices.Delete(qq.qs, i, i+1)
	}
}

// len is how many questions wait.
func (qq *questionQueue) len() int { return len(qq.qs) }

// of is the question in the queue that s is (nil when it is not waiting
// there: answered, ended, or answered without a prompt).
func (qq *questionQueue) of(s *session.ServerRequest) *serverQuestion {
	if s == nil || !s.Open() {
		return nil
	}
	for _, q := range qq.qs {
		// A question bound to another record is another request under the
		// same ID (one abandoned, say, whose form is still open).
		if q.id == s.ID && q.method == s.Method && (q.rec == nil || q.rec == s) {
			return q
		}
	}
	return nil
}

// waitingOn is the oldest question waiting that belongs to the request
// id (nil when none does). A question tied to no request is no
// request's: it has a row of its own, where enter and a answer it.
func (qq *questionQueue) waitingOn(t *session.Tracker, id wire.ID) *serverQuestion {
	if id.IsZero() {
		return nil
	}
	for _, q := range qq.qs {
		s := q.record(t)
		if s == nil || s.During.IsZero() || q.over(s) {
			continue
		}
		if r, ok := t.Get(s.During); ok && r.ID == id {
			return q
		}
	}
	return nil
}

// asks reports whether r waits for the user: a modern round's input
// requests, a modern task's (input_required), or a legacy question that
// arrived during it.
func (qq *questionQueue) asks(t *session.Tracker, r *session.Request) bool {
	if r == nil {
		return false
	}
	if r.State == session.StateWaitingInput || len(r.TaskAsks()) > 0 {
		return true
	}
	return qq.waitingOn(t, r.ID) != nil
}

// take removes the questions waiting on the request id and returns them,
// for the caller to decline once the request's cancel is out.
func (qq *questionQueue) take(t *session.Tracker, id wire.ID) []*serverQuestion {
	var qs []*serverQuestion
	for q := qq.waitingOn(t, id); q != nil; q = qq.waitingOn(t, id) {
		qs = append(qs, q)
		qq.drop(q)
	}
	return qs
}

// takeAll empties the queue and returns what it held (X declines every
// question, those tied to no request too).
func (qq *questionQueue) takeAll() []*serverQuestion {
	qs := qq.qs
	qq.qs = nil
	return qs
}

// questionFate is what the tracker's record says became of a queued
// question: gone (withdrawn, lost, refused by the client, never to be
// answered: it left the queue), or its request ended first (it stays,
// and can still be answered). why says it in words.
type questionFate struct {
	q    *serverQuestion
	gone bool
	why  string
}

// fates follows, after the tracker applied an event, the fate of the
// questions still queued: those that can no longer be answered (over)
// leave the queue. Serve's own word of it may be late or, with a full
// channel, never come; the caller closes an open form on one saying why,
// and warns one whose request ended first. No stale answer is sent
// without the user knowing.
func (qq *questionQueue) fates(t *session.Tracker, line func(string) string) []questionFate {
	var out []questionFate
	for i := 0; i < len(qq.qs); i++ {
		q := qq.qs[i]
		s := q.record(t)
		if s == nil {
			continue
		}
		switch {
		case q.over(s):
			qq.drop(q)
			i--
			why := question.Fate(s, qq.of(s) != nil)
			if s.State == session.ServerWithdrawn {
				why = "the server withdrew this question"
				if s.Reason != "" {
					why += " (" + line(s.Reason) + ")"
				}
			}
			out = append(out, questionFate{q: q, gone: true, why: why})
		case s.State == session.ServerAbandoned:
			out = append(out, questionFate{q: q, why: "its request #" + line(s.During.String()) + " ended first: the server may no longer read an answer"})
		}
	}
	return out
}

// reply hands the form's answer to its question's Serve and takes the
// question out of the queue, unless its fate changed under the form: an
// answer then would be stale (and the client sends none for a withdrawn
// one, nor for one it refused). It returns what the status line says.
func (qq *questionQueue) reply(t *session.Tracker, a answer.Reply, line func(string) string) screen.Status {
	q := a.Question.(*serverQuestion)
	if s := q.record(t); q.over(s) {
		qq.drop(q)
		return screen.Status{Level: screen.Warn, Text: fmt.Sprintf("%s %s: not sent — %s", line(q.method), line(q.id.String()), question.Fate(s, qq.of(s) != nil))}
	}
	q.reply <- serverReply{result: a.Result, err: a.Err}
	q.replied = true
	kept := a.Kept
	q.form = &kept
	qq.drop(q)
	return screen.Status{Level: screen.Info, Text: fmt.Sprintf("%s %s: %s", line(q.method), line(q.id.String()), answeredWord(a.Action, q.method))}
}

// answeredWord is the status line's word for the answer the user chose.
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

// mustJSON is v as JSON (v is one of our own values: it always encodes).
func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
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
// they are no longer in the queue).
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
