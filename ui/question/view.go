package question

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// View draws what the request is and where it stands, what it is tied to,
// and the body under them (its timeline, its params), in width × height.
func (m Model) View(env screen.Env, width, height int) string {
	st := env.Styles
	s := m.srv
	sl := look.ServerRequestLook(s.State)
	var b strings.Builder
	title := "↘ " + env.Line(s.Method) + " from the server (its ID " + env.Line(s.ID.String()) + ")"
	b.WriteString(look.Fit(st.Title.Render(title)+"  "+sl.Style(st).Render(sl.Icon+" "+Fate(s, m.asks))+
		st.Dim.Render("  ·  "+look.Dur(look.ServerRequestElapsed(s, env.Now))), width))
	b.WriteByte('\n')
	b.WriteString(look.Fit(st.Dim.Render(tiedText(env, s)), width))
	b.WriteString("\n\n")
	b.WriteString(m.vp.View())
	return b.String()
}

// Fate is where one of the server's requests is, in the list's words;
// asks says whether it waits in the root's queue for the user's answer.
func Fate(s *session.ServerRequest, asks bool) string {
	switch s.State {
	case session.ServerWaiting:
		if !asks {
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

// tiedText says which request s belongs to and how the tracker knew.
func tiedText(env screen.Env, s *session.ServerRequest) string {
	if s.TiedBy == session.TiedNone {
		return fmt.Sprintf("not tied to a request: %d %s in flight when it came", s.InFlight, look.CountNoun(s.InFlight, "was", "were"))
	}
	label := ""
	if r, ok := env.Tracker.Get(s.During); ok {
		label = " " + look.RequestLabel(r, false, env.Line)
	}
	how := map[session.TiedBy]string{
		session.TiedStream: "it came on that request's response stream",
		session.TiedTask:   "its _meta names that request's task (related-task)",
		session.TiedOnly:   "it came while that request was the only one in flight",
	}[s.TiedBy]
	return "tied to #" + env.Line(s.During.String()) + label + ": " + how
}

// body is the scrolling part: the timeline, the params and the answer.
func body(env screen.Env, s *session.ServerRequest) string {
	st := env.Styles
	var b strings.Builder
	b.WriteString(st.Bold.Render("TIMELINE") + "\n")
	b.WriteString(fmt.Sprintf("  %s  arrived  %s\n", ago(s, s.At), s.At.Format("15:04:05.000")))
	if !s.Open() && !s.Ended.IsZero() {
		b.WriteString(endLine(env, s) + "\n")
	} else if s.Open() {
		if s.AnswerFailed != "" {
			b.WriteString(st.Error.Render("  the answer could not be sent: "+env.Line(s.AnswerFailed)) + "\n")
		}
		b.WriteString(st.Warn.Render("  waiting for you: a answers it, c declines it") + "\n")
	}
	b.WriteString("\n" + st.Bold.Render("PARAMS") + "\n")
	if len(s.Params) > 0 {
		b.WriteString(look.PrettyJSON(s.Params, env.Block))
	} else {
		b.WriteString(st.Dim.Render("(none kept)"))
	}
	if len(s.Answer) > 0 {
		b.WriteString("\n\n" + st.Bold.Render("ANSWERED WITH") + "\n" + look.PrettyJSON(s.Answer, env.Block))
	}
	b.WriteString("\n")
	return b.String()
}

// endLine is the timeline's line for the request's end: when, its fate,
// and the reason, the error or the answer.
func endLine(env screen.Env, s *session.ServerRequest) string {
	line := fmt.Sprintf("  %s  %s  %s", ago(s, s.Ended), Fate(s, false), s.Ended.Format("15:04:05.000"))
	switch {
	case s.State == session.ServerWithdrawn && s.Reason != "":
		line += "  reason: " + env.Line(s.Reason)
	case s.State == session.ServerWithdrawn:
		line += "  (no reason given)"
	case s.Error != nil:
		line += "  error " + strconv.Itoa(s.Error.Code) + " " + env.Line(s.Error.Message)
	case s.State == session.ServerAnswered:
		line += "  " + look.AnsweredAs(s)
	}
	return line
}

// ago is t after the request arrived.
func ago(s *session.ServerRequest, t time.Time) string { return look.Ago(t.Sub(s.At)) }
