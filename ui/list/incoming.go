package list

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// A legacy server's own requests (elicitation/create, sampling/
// createMessage, roots/list) are rows of their own, marked incoming (↘):
// under the request the tracker tied them to (nested, └), or, untied, at
// the place in the list where they came. The rows are a view over the
// tracker's ServerRequests: session decides what each is and where it
// stands; nothing here judges a message.

// incomingLabel is the REQUEST column of an incoming row: `└ ↘
// elicitation/create` under its request, `↘ …` when untied; short, the
// method's first word.
func incomingLabel(line func(string) string, s *session.ServerRequest, full bool) string {
	method := line(s.Method)
	if !full {
		method, _, _ = strings.Cut(method, "/")
	}
	if s.TiedBy == session.TiedNone {
		return "↘ " + method
	}
	return "└ ↘ " + method
}

// incomingRow renders one of the server's requests in the list's columns.
func (p painter) incomingRow(s *session.ServerRequest, c columns, selected bool, now time.Time) string {
	st := p.st
	sl := look.ServerRequestLook(s.State)
	marker := "  "
	if selected {
		marker = st.Cursor.Render("▌ ")
	}
	label := incomingLabel(p.line, s, true)
	if lipgloss.Width(label) > c.request {
		label = incomingLabel(p.line, s, false)
	}
	parts := []string{
		marker + look.FitLeft("", c.id),
		look.Fit(st.Dim.Render(label), c.request),
		sl.Style(st).Render(look.Fit(sl.Icon+" "+sl.Word, c.state)),
	}
	if c.elapsed > 0 {
		parts = append(parts, look.FitLeft(look.Dur(look.ServerRequestElapsed(s, now)), c.elapsed))
	}
	if c.timeout > 0 {
		// inflight sets no timeout on the server's requests (the server
		// times out its own, and says so by withdrawing it).
		parts = append(parts, look.FitLeft(st.Dim.Render("—"), c.timeout))
	}
	if c.detail > 0 {
		parts = append(parts, look.Fit(look.BuildCell(p.incomingParts(s), c.detail), c.detail))
	}
	line := look.Fit(strings.Join(parts, " "), p.width)
	if selected {
		return st.Highlight(line)
	}
	return line
}

// incomingParts are an incoming row's last column: its fate in the
// list's words, the question in a few words, and where it came from.
func (p painter) incomingParts(s *session.ServerRequest) []look.Part {
	st := p.st
	var parts []look.Part
	add := func(style lipgloss.Style, prio int, variants ...string) {
		parts = append(parts, look.Part{Variants: variants, Style: style, Prio: prio})
	}
	after := ""
	if !s.Ended.IsZero() {
		after = " after " + look.Dur(s.Ended.Sub(s.At))
	}
	switch s.State {
	case session.ServerWaiting:
		add(st.Warn, look.PrioFlag, "waiting for you", "for you")
		if s.AnswerFailed != "" {
			parts = append(parts, look.Part{Variants: []string{"✗ the answer could not be sent: " + p.line(s.AnswerFailed), "✗ answer not sent"},
				Style: st.Error, Prio: look.PrioFlag, Cut: true, Keep: len("✗ answer not sent")})
		}
	case session.ServerAnswered:
		add(st.Dim, look.PrioSignal, "answered"+after+" · "+look.AnsweredAs(s), "answered"+after, "answered")
	case session.ServerDeclined:
		add(st.Dim, look.PrioSignal, "declined"+after, "declined")
	case session.ServerDismissed:
		add(st.Dim, look.PrioSignal, "dismissed (cancel)"+after, "dismissed")
	case session.ServerRefused:
		why := "refused"
		if s.Error != nil {
			why += " · error " + strconv.Itoa(s.Error.Code) + " " + p.line(s.Error.Message)
		}
		parts = append(parts, look.Part{Variants: []string{why}, Style: st.Failed, Prio: look.PrioSignal, Cut: true, Keep: len("refused")})
	case session.ServerWithdrawn:
		text := "cancelled by the server" + after
		if s.Reason != "" {
			text += ": " + p.line(s.Reason)
		}
		parts = append(parts, look.Part{Variants: []string{text, "cancelled by the server"}, Style: st.Cancelled, Prio: look.PrioSignal, Cut: true, Keep: len("cancelled by the server")})
	case session.ServerLost:
		add(st.Lost, look.PrioSignal, "connection lost before an answer", "connection lost")
	case session.ServerAbandoned:
		add(st.Dim, look.PrioSignal, "abandoned: its request ended first", "abandoned: request ended", "abandoned")
	case session.ServerNotAnswered:
		add(st.Flag, look.PrioFlag, "⚑ not answered: its ID "+p.line(s.ID.String())+" was in use", "⚑ ID in use: not answered", "⚑ ID reused")
	}
	if q := questionWords(p.line, s.Method, s.Params); q != "" {
		// Once it ended, its fate comes first and the question gets what
		// is left.
		prio, style := look.PrioWatch, st.Warn
		if !s.Open() {
			prio, style = look.PrioRepeats, st.Dim
		}
		parts = append(parts, look.Part{Variants: []string{q}, Style: style, Prio: prio, Cut: true, Keep: look.MinCut})
	}
	if s.TiedBy == session.TiedNone {
		// After the question: it gets what the question leaves.
		add(st.Dim, look.PrioRepeats, fmt.Sprintf("not tied to a request: %d in flight", s.InFlight), fmt.Sprintf("not tied: %d in flight", s.InFlight), "not tied")
	}
	add(st.Dim, look.PrioRepeats, "from the server")
	return parts
}

// questionWords is what a question asks, quoted (elicitation's message,
// sampling's last message), "" for anything else.
func questionWords(line func(string) string, method string, params json.RawMessage) string {
	switch method {
	case wire.MethodElicitationCreate, wire.MethodSamplingCreate:
		q := look.QuestionText(method, params, line)
		if _, quoted, ok := strings.Cut(q, " "); ok && quoted != `""` {
			return quoted
		}
	}
	return ""
}
