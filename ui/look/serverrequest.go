package look

import (
	"time"

	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/wire"
)

// A legacy server's own requests (elicitation/create, sampling/
// createMessage, roots/list) are drawn alike in the list's rows and in
// their detail: their state in the list's words, how long they ran, and
// what inflight answered.

// ServerRequestLook is how the STATE column (and the detail's title)
// draws one of the server's requests, in the list's words.
func ServerRequestLook(s session.ServerRequestState) StateLook {
	switch s {
	case session.ServerWaiting:
		return StateLook{Icon: "?", Word: "waiting", Style: func(s Styles) lipgloss.Style { return s.Warn }}
	case session.ServerAnswered:
		return StateLook{Icon: "✓", Word: "answered", Style: func(s Styles) lipgloss.Style { return s.Completed }}
	case session.ServerDeclined:
		return StateLook{Icon: "✗", Word: "declined", Style: func(s Styles) lipgloss.Style { return s.Cancelled }}
	case session.ServerDismissed:
		return StateLook{Icon: "✗", Word: "dismissed", Style: func(s Styles) lipgloss.Style { return s.Cancelled }}
	case session.ServerRefused:
		return StateLook{Icon: "✗", Word: "refused", Style: func(s Styles) lipgloss.Style { return s.Failed }}
	case session.ServerWithdrawn:
		return StateLook{Icon: "⊗", Word: "withdrawn", Style: func(s Styles) lipgloss.Style { return s.Cancelled }}
	case session.ServerLost:
		return StateLook{Icon: "↯", Word: "lost", Style: func(s Styles) lipgloss.Style { return s.Lost }}
	case session.ServerAbandoned:
		return StateLook{Icon: "·", Word: "abandoned", Style: func(s Styles) lipgloss.Style { return s.Dim }}
	case session.ServerNotAnswered:
		return StateLook{Icon: "⚠", Word: "unanswered", Style: func(s Styles) lipgloss.Style { return s.Flag }}
	}
	return StateLook{Icon: "·", Word: s.String(), Style: func(s Styles) lipgloss.Style { return s.Dim }}
}

// ServerRequestElapsed runs from the request's arrival until it ended.
func ServerRequestElapsed(s *session.ServerRequest, now time.Time) time.Duration {
	end := now
	if !s.Open() && !s.Ended.IsZero() {
		end = s.Ended
	}
	return max(0, end.Sub(s.At))
}

// AnsweredAs says in a word what inflight answered: accepted for an
// elicitation, replied for sampling, the roots for roots/list.
func AnsweredAs(s *session.ServerRequest) string {
	switch s.Method {
	case wire.MethodSamplingCreate:
		return "replied"
	case wire.MethodRootsList:
		return "roots sent"
	}
	if w := AnswerWord(s.Answer); w == "accept" {
		return "accepted"
	}
	return AnswerWord(s.Answer)
}
