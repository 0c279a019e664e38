package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/detail"
	"inflight/ui/look"
	"inflight/wire"
)

// A legacy server's own requests (elicitation/create, sampling/
// createMessage, roots/list) are rows of their own in the list (ui/list
// draws them, ↘). What is here acts on them: the keys on a selected one
// (answer it, decline it), its detail, and the questions' queue. Session
// decides what each is and where it stands; nothing here judges a
// message.

// selectedIncoming is the incoming row keys act on: the one the detail
// shows, else the list's selection (nil: a request, or nothing).
func (m *Model) selectedIncoming() *session.ServerRequest {
	switch m.mode {
	case keymap.ModeDetail:
		return m.incoming.srv
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

// incomingKey handles the keys on an incoming row (in the list, or its
// detail): enter and a answer it, c and C decline it, and the keys that
// act only on inflight's own requests say so rather than do nothing.
func (m *Model) incomingKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	s := m.selectedIncoming()
	if s == nil {
		return nil, false
	}
	k := &m.keys
	what := "↘ " + m.line(s.Method) + " is the server's request"
	switch {
	case pressed(msg, k.Answer) || (m.mode == keymap.ModeList && msg.String() == "enter" && m.questionOf(s) != nil):
		m.status = statusLine{}
		q := m.questionOf(s)
		if q == nil {
			m.setStatus(levelInfo, what+", "+incomingFate(m, s)+": nothing to answer")
			return nil, true
		}
		return m.openQuestion(q), true
	case m.mode == keymap.ModeList && msg.String() == "enter":
		m.openIncomingDetail(s)
		return nil, true
	case pressed(msg, k.Cancel) || pressed(msg, k.CancelReason):
		// The natural cancel of a question is to decline it (its request,
		// if any, goes on: c on that row cancels it).
		q := m.questionOf(s)
		if q == nil {
			m.setStatus(levelInfo, what+", "+incomingFate(m, s)+": there is nothing to decline")
			return nil, true
		}
		m.dropQuestion(q)
		if m.answer.Legacy() == q {
			m.closeAnswer()
		}
		m.setStatus(levelInfo, "↘ "+m.line(s.Method)+": declined (c on a question declines it)")
		return declineCmd([]*serverQuestion{q}), true
	case pressed(msg, k.Reissue) || pressed(msg, k.Edit):
		m.setStatus(levelInfo, what+": only inflight's own requests can be re-issued")
		return nil, true
	case pressed(msg, k.StopWatching), pressed(msg, k.Longer), pressed(msg, k.Shorter):
		m.setStatus(levelInfo, what+": inflight runs no timeout or watch on it (the server times out its own)")
		return nil, true
	case pressed(msg, k.Copy), pressed(msg, k.Pager), pressed(msg, k.Editor):
		if m.mode == keymap.ModeList {
			m.setStatus(levelInfo, what+": enter shows its params in the detail")
			return nil, true
		}
		m.setStatus(levelInfo, what+": its params are in this view; y, o and O work on inflight's own requests")
		return nil, true
	}
	return nil, false
}

// incomingFate is where one of the server's requests is, in the list's
// words.
func incomingFate(m *Model, s *session.ServerRequest) string {
	switch s.State {
	case session.ServerWaiting:
		if m.questionOf(s) == nil {
			return "waiting (inflight answers it without a prompt)"
		}
		return "waiting for you"
	case session.ServerWithdrawn:
		return "cancelled by the server"
	case session.ServerLost:
		return "connection lost"
	case session.ServerAbandoned:
		return "abandoned (its request ended first)"
	case session.ServerNotAnswered:
		return "not answered (its ID was in use)"
	}
	return strings.ReplaceAll(s.State.String(), "_", " ")
}

// incomingAsks reports whether the incoming row keys act on waits for
// the user's answer (the key map enables a then).
func (m *Model) incomingAsks() bool {
	return m.questionOf(m.selectedIncoming()) != nil
}

// incomingDetail is the detail of one of the server's own requests: the
// request, and its body in a viewport.
type incomingDetail struct {
	srv *session.ServerRequest
	vp  viewport.Model
	// content is the body the viewport holds, built from what built
	// says; wrapped is the width it was cut to (0: lay it out again).
	content string
	built   incomingSig
	wrapped int
}

// openIncomingDetail shows one of the server's requests in the detail.
func (m *Model) openIncomingDetail(s *session.ServerRequest) {
	m.detail = detail.Model{}
	m.incoming = incomingDetail{srv: s, vp: viewport.New()}
	m.incoming.vp.SetHorizontalStep(horizontalStep)
	m.incoming.vp.SetWidth(m.width)
	m.mode = keymap.ModeDetail
}

// incomingSig is what an incoming detail's body is built from.
type incomingSig struct {
	s      *session.ServerRequest
	state  session.ServerRequestState
	failed string
	dark   bool
}

// layoutIncomingDetail builds the incoming detail's body when what it
// shows changed.
func (m *Model) layoutIncomingDetail(height int) {
	d := &m.incoming
	sig := incomingSig{s: d.srv, state: d.srv.State, failed: d.srv.AnswerFailed, dark: m.dark}
	if sig != d.built || d.wrapped != m.width {
		d.built = sig
		d.content = m.incomingBody(d.srv)
		d.vp.SetContentLines(look.PagerLines(d.content, m.width, m.pager.chop))
		d.wrapped = m.width
	}
	d.vp.SetWidth(m.width)
	d.vp.SetHeight(max(1, height-incomingHeaderLines))
}

// incomingHeaderLines is the height above the incoming detail's body.
const incomingHeaderLines = 3

// viewIncomingDetail is the detail of one of the server's requests: what
// it is and where it stands, then its timeline, what it is tied to, and
// its params.
func (m *Model) viewIncomingDetail(height int) string {
	st := m.styles
	s := m.incoming.srv
	now := m.now()
	sl := look.ServerRequestLook(s.State)
	var b strings.Builder
	title := "↘ " + m.line(s.Method) + " from the server (its ID " + m.line(s.ID.String()) + ")"
	b.WriteString(look.Fit(st.Title.Render(title)+"  "+sl.Style(st).Render(sl.Icon+" "+incomingFate(m, s))+
		st.Dim.Render("  ·  "+look.Dur(look.ServerRequestElapsed(s, now))), m.width))
	b.WriteByte('\n')
	b.WriteString(look.Fit(st.Dim.Render(m.tiedText(s)), m.width))
	b.WriteString("\n\n")
	b.WriteString(m.incoming.vp.View())
	return b.String()
}

// tiedText says which request s belongs to and how the tracker knew.
func (m *Model) tiedText(s *session.ServerRequest) string {
	if s.TiedBy == session.TiedNone {
		return fmt.Sprintf("not tied to a request: %d %s in flight when it came", s.InFlight, look.CountNoun(s.InFlight, "was", "were"))
	}
	label := ""
	if r, ok := m.tracker.Get(s.During); ok {
		label = " " + look.RequestLabel(r, false, m.line)
	}
	how := map[session.TiedBy]string{
		session.TiedStream: "it came on that request's response stream",
		session.TiedTask:   "its _meta names that request's task (related-task)",
		session.TiedOnly:   "it came while that request was the only one in flight",
	}[s.TiedBy]
	return "tied to #" + m.line(s.During.String()) + label + ": " + how
}

// incomingBody is the incoming detail's scrolling part.
func (m *Model) incomingBody(s *session.ServerRequest) string {
	st := m.styles
	var b strings.Builder
	at := func(t time.Time) string { return look.Ago(t.Sub(s.At)) }
	b.WriteString(st.Bold.Render("TIMELINE") + "\n")
	b.WriteString(fmt.Sprintf("  %s  arrived  %s\n", at(s.At), s.At.Format("15:04:05.000")))
	if !s.Open() && !s.Ended.IsZero() {
		line := fmt.Sprintf("  %s  %s  %s", at(s.Ended), incomingFate(m, s), s.Ended.Format("15:04:05.000"))
		switch {
		case s.State == session.ServerWithdrawn && s.Reason != "":
			line += "  reason: " + m.line(s.Reason)
		case s.State == session.ServerWithdrawn:
			line += "  (no reason given)"
		case s.Error != nil:
			line += "  error " + strconv.Itoa(s.Error.Code) + " " + m.line(s.Error.Message)
		case s.State == session.ServerAnswered:
			line += "  " + look.AnsweredAs(s)
		}
		b.WriteString(line + "\n")
	} else if s.Open() {
		if s.AnswerFailed != "" {
			b.WriteString(st.Error.Render("  the answer could not be sent: "+m.line(s.AnswerFailed)) + "\n")
		}
		b.WriteString(st.Warn.Render("  waiting for you: a answers it, c declines it") + "\n")
	}
	b.WriteString("\n" + st.Bold.Render("PARAMS") + "\n")
	if len(s.Params) > 0 {
		b.WriteString(look.PrettyJSON(s.Params, m.block))
	} else {
		b.WriteString(st.Dim.Render("(none kept)"))
	}
	if len(s.Answer) > 0 {
		b.WriteString("\n\n" + st.Bold.Render("ANSWERED WITH") + "\n" + look.PrettyJSON(s.Answer, m.block))
	}
	b.WriteString("\n")
	return b.String()
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
