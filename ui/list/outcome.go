package list

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"inflight/event"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// lateParts are the flags of late traffic and violations (first in line for
// the width), and the traffic that crossed the cancel in flight (shown in a
// neutral colour, never flagged).
func (p painter) lateParts(r *session.Request) []look.Part {
	st := p.st
	parts, hostFound := p.hostParts(r)
	if tk := r.Task; tk != nil && tk.EndedAfterCancel != "" {
		ago := look.Ago(tk.AfterCancel)
		parts = append(parts, look.Part{Variants: []string{"⚑ " + p.line(tk.EndedAfterCancel) + " after tasks/cancel (" + ago + ")", "⚑ " + p.line(tk.EndedAfterCancel) + " after cancel"}, Style: st.Flag, Prio: look.PrioFlag})
	} else if r.Late.Response && !r.Late.Crossed {
		ago := look.Ago(r.Late.AfterCancel)
		parts = append(parts, look.Part{Variants: []string{"⚑ late response " + look.LateFateShort(r) + " (" + ago + ")", "⚑ late response"}, Style: st.Flag, Prio: look.PrioFlag})
	}
	if tk := r.Task; tk != nil && tk.AfterTerminal != "" {
		// The terminal status stands; the server contradicted it after.
		parts = append(parts, look.Part{Variants: []string{
			"⚑ said " + p.line(tk.AfterTerminal) + " after " + p.line(tk.Status), "⚑ " + p.line(tk.AfterTerminal) + " after " + p.line(tk.Status), "⚑ flipped",
		}, Style: st.Flag, Prio: look.PrioFlag})
	}
	if n := r.Late.ProgressAfterCancel; n > 0 {
		parts = append(parts, look.Part{Variants: []string{
			fmt.Sprintf("⚑ %d progress after cancel", n), fmt.Sprintf("⚑ %d late progress", n), fmt.Sprintf("⚑ %d late", n),
		}, Style: st.Flag, Prio: look.PrioFlag})
	}
	if n := r.Violations - hostFound; n > 0 {
		// The server's: the host's findings have their flags above.
		parts = append(parts, look.Part{Variants: []string{
			fmt.Sprintf("⚠ %d %s", n, look.CountNoun(n, "violation", "violations")), fmt.Sprintf("⚠ %d", n),
		}, Style: st.Flag, Prio: look.PrioFlag})
	}
	if r.Late.Response && r.Late.Crossed {
		parts = append(parts, look.Part{Variants: []string{"response crossed the cancel in flight, " + look.LateFateShort(r), "response crossed the cancel", "crossed"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if n := r.Late.ProgressCrossed; n > 0 {
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("%d crossed in flight", n), fmt.Sprintf("%d crossed", n)}, Style: st.Dim, Prio: look.PrioWatch})
	}
	return parts
}

// cancellingParts tell a request whose cancel waits for its fate: the
// flags, the signal and how long ago it left, the late window running
// out, and last the words the STATE column already says.
func (p painter) cancellingParts(r *session.Request, c columns, now time.Time) []look.Part {
	st := p.st
	parts := p.lateParts(r)
	cn := r.Cancel
	if cn == nil {
		return append(parts, look.Part{Variants: []string{"cancellation requested"}, Style: st.Cancelling, Prio: look.PrioRepeats})
	}
	switch {
	case cn.Failed != "":
		parts = append(parts, look.Part{Variants: []string{"the cancel could not be sent", "cancel not sent"}, Style: st.Error, Prio: look.PrioSignal})
	case cn.Signal == event.SignalNone:
		parts = append(parts, look.Part{Variants: []string{"sending cancel…"}, Style: st.Cancelling, Prio: look.PrioSignal})
	default:
		since := cn.At
		if !cn.SignalAt.IsZero() {
			since = cn.SignalAt
		}
		ago := look.Dur(now.Sub(since)) + " ago"
		short := "cancel sent " + ago
		if cn.Signal == event.SignalStreamClosed {
			short = "closed " + ago
		}
		// "sent 1.2s ago" last, in a narrow column (29 cells at 80): next
		// to "⊘ cancelling" it can only be the cancel, and it keeps the
		// signal ahead of the watch there.
		variants := []string{look.SignalText(cn.Signal) + " " + ago, short}
		if cn.Signal != event.SignalStreamClosed && c.detail < 35 {
			variants = append(variants, "sent "+ago)
		}
		if cn.Cause == session.CauseHost {
			variants = hostCancelVariants(cn, ago)
		}
		parts = append(parts, look.Part{Variants: variants, Style: st.Cancelling, Prio: look.PrioSignal})
	}
	if left, ok := look.LateWindowLeft(r, now); ok {
		l := look.Dur(left)
		parts = append(parts, look.Part{Variants: []string{look.WatchingText(r, now), "watching " + l + " more", l + " left"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if cn.Cause == session.CauseTimeout {
		// "timed out" repeats the TIMEOUT column's "expired" while that
		// column is shown; without it, it is news.
		prio := look.PrioRepeats
		if c.timeout == 0 {
			prio = look.PrioSignal
		}
		parts = append(parts, look.Part{Variants: []string{"timed out, cancellation requested", "timed out"}, Style: st.Cancelling, Prio: prio})
	} else {
		parts = append(parts, look.Part{Variants: []string{"cancellation requested"}, Style: st.Cancelling, Prio: look.PrioRepeats})
	}
	return parts
}

// outcomeParts describe a settled request, flags first: late traffic and
// violations are what a person most needs to know.
func (p painter) outcomeParts(r *session.Request) []look.Part {
	st := p.st
	parts := p.lateParts(r)
	add := func(style lipgloss.Style, prio int, variants ...string) {
		parts = append(parts, look.Part{Variants: variants, Style: style, Prio: prio})
	}
	addCut := func(style lipgloss.Style, text string, keep int) {
		if text != "" {
			parts = append(parts, look.Part{Variants: []string{text}, Style: style, Prio: look.PrioSignal, Cut: true, Keep: keep})
		}
	}
	switch r.State {
	case session.StateCancelled, session.StateTimedOut:
		if r.Cancel != nil && r.Cancel.Failed != "" {
			addCut(st.Error, "the cancel could not be sent: "+p.line(r.Cancel.Failed), len("the cancel could not be sent"))
			break
		}
		if r.State == session.StateTimedOut && r.Cancel != nil {
			if r.Cancel.Limit == session.LimitMax {
				add(st.Dim, look.PrioWatch, "max timeout "+look.Dur(r.Timeout.Max)+" reached", "max timeout")
			} else {
				// "timed out" is the STATE column's word already; the
				// limit is not (ELAPSED runs on through the late window).
				add(st.Dim, look.PrioSignal, "timeout "+look.Dur(r.Timeout.Timeout)+" reached", "timeout "+look.Dur(r.Timeout.Timeout))
			}
		}
		if r.Conv != nil && r.Conv.Stopped != "" && r.Cancel != nil && r.Cancel.Signal == event.SignalNone {
			// Cancelled while it waited for the user: nothing was sent.
			add(st.Dim, look.PrioSignal, p.line(r.Conv.Stopped), "conversation dropped, nothing sent")
			break
		}
		if !r.Flagged() && r.Cancel != nil && !r.Late.Response && r.Late.ProgressCrossed == 0 {
			if tk := r.Task; tk != nil {
				if tk.Status == wire.TaskCancelled {
					// What the server says of its task, not whether its work stopped.
					add(st.Dim, look.PrioSignal, "the task says cancelled (tasks/cancel answered)", "task says cancelled")
				} else {
					add(st.Dim, look.PrioSignal, "tasks/cancel sent; task last "+p.line(tk.Status)+", no terminal status seen", "no terminal status seen")
				}
				break
			}
			if r.Cancel.Signal == event.SignalStreamClosed {
				// A closed stream can carry nothing more: the cancel is final.
				add(st.Dim, look.PrioSignal, "stream closed; nothing more can come", "closed; nothing more can come", "stream closed")
			} else if watched, _, ok := r.WatchEnded(); ok {
				w := look.Dur(watched)
				add(st.Dim, look.PrioSignal, look.SignalText(r.Cancel.Signal)+"; nothing more came in "+w+" watched", "nothing more in "+w+" watched", "nothing more in "+w)
			} else {
				add(st.Dim, look.PrioSignal, look.SignalText(r.Cancel.Signal)+"; nothing more came", "nothing more came")
			}
		}
		if _, still, ok := r.WatchEnded(); ok && still {
			add(st.Flag, look.PrioFlag, "still sending when the watch ended", "still sending")
		}
	case session.StateFailed:
		// The code, then why: the why keeps 16 cells before the code gets
		// its longer wording, and takes what is left after it.
		label, why := p.failureText(r)
		if why == "" {
			addCut(st.Failed, label[0], 0)
			break
		}
		parts = append(parts, look.Part{Variants: label, Style: st.Failed, Prio: look.PrioSignal},
			look.Part{Variants: []string{why}, Style: st.Failed, Prio: look.PrioSignal, Cut: true, Keep: 16})
	case session.StateConnectionLost:
		addCut(st.Lost, p.line(r.LocalError), 0)
	case session.StateInputRequired:
		parts = append(parts, p.inputRequiredParts(r)...)
	case session.StateEndedByServer:
		n := fmt.Sprintf("%d %s", r.Notifications, look.CountNoun(r.Notifications, "update", "updates"))
		add(st.Dim, look.PrioSignal, "server ended it after "+n, "ended after "+n)
	case session.StateCompleted:
		addCut(st.Dim, p.summaries[r.ID], 0)
	}
	return parts
}

// failureText says why a request failed: a label (the kind of failure
// and its code, longest wording first) and why, in the server's words
// less what repeats the row (see whyFirst); why is "" when there are no
// such words.
func (p painter) failureText(r *session.Request) (label []string, why string) {
	switch {
	case r.ToolError:
		s := p.summaries[r.ID]
		inner, quoted := strings.CutPrefix(s, "“")
		if !quoted {
			return []string{strings.TrimSpace("tool error " + s)}, ""
		}
		code, w := whyFirst(strings.TrimSuffix(inner, "”"), r.Target)
		if code == "" {
			return []string{"tool error"}, "“" + w + "”"
		}
		return []string{"tool error " + code, code}, "“" + w + "”"
	case r.Error != nil:
		msg := p.line(r.Error.Message)
		if code, w := whyFirst(msg, r.Target); code == "" || code == strconv.Itoa(r.Error.Code) {
			msg = w
		}
		code := strconv.Itoa(r.Error.Code)
		if msg == "" {
			return []string{"error " + code}, ""
		}
		return []string{"error " + code, code}, msg
	case r.LocalError != "":
		return []string{p.line(r.LocalError)}, ""
	}
	return []string{"failed"}, ""
}

// mcpErrorPrefix is what the TypeScript SDK puts before an error's
// message ("MCP error -32601: Tool x requires task augmentation").
var mcpErrorPrefix = regexp.MustCompile(`^MCP error (-?[0-9]+): *`)

// whyFirst takes from a failure's message what the row repeats, so that
// the words that say why are what its width is spent on: a leading "MCP
// error -32601: " (its code is returned, for the label) and a "Tool NAME "
// naming the row's own tool (shown as "…"). The detail shows the message
// whole.
func whyFirst(msg, tool string) (code, why string) {
	why = msg
	if sm := mcpErrorPrefix.FindStringSubmatch(why); sm != nil {
		code, why = sm[1], why[len(sm[0]):]
	}
	if tool != "" {
		if rest, ok := strings.CutPrefix(why, "Tool "+tool+" "); ok && rest != "" {
			why = "…" + rest
		}
	}
	return code, why
}

// waitingParts are the row's last column for a request waiting for the
// user: `for you · round 2 · elicitation "Confirm deletion of 3 files?"`;
// a narrow row keeps the question and drops the words first.
func (p painter) waitingParts(r *session.Request) []look.Part {
	st := p.st
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
			parts = append(parts, look.Part{Variants: []string{look.QuestionText(q.Method, q.Params, p.line)}, Style: st.Warn, Prio: look.PrioSignal, Cut: true, Keep: len("elicitation")})
		}
		shown++
	}
	if shown > 1 {
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("+%d more", shown-1)}, Style: st.Warn, Prio: look.PrioFlag})
	}
	return parts
}

// serverAskCell is the row's last column for a legacy request the
// server's own question waits on: `↘ elicitation/create from the server ·
// waiting for you` ("" when none does).
func (p painter) serverAskCell(r *session.Request, w int) string {
	if r.Conv == nil {
		return ""
	}
	for _, s := range r.Conv.ServerRequests {
		if s.Open() {
			method := p.line(s.Method)
			short, _, _ := strings.Cut(method, "/")
			return look.BuildCell([]look.Part{{Variants: []string{
				"↘ " + method + " from the server · waiting for you",
				"↘ " + method + " · waiting for you",
				"↘ " + short + " · waiting for you",
				"↘ " + short + " waits",
			}, Style: p.st.Warn, Prio: look.PrioFlag}}, w)
		}
	}
	return ""
}

// inputRequiredParts say why a request ended input_required: the round
// cap (flagged), how the conversation was stopped, or a request begun
// where nobody could answer.
func (p painter) inputRequiredParts(r *session.Request) []look.Part {
	st := p.st
	switch c := r.Conv; {
	case c != nil && c.GaveUp:
		return []look.Part{{Variants: []string{"⚑ " + p.line(c.Stopped)}, Style: st.Flag, Prio: look.PrioFlag}}
	case c != nil && c.Stopped != "":
		return []look.Part{{Variants: []string{p.line(c.Stopped)}, Style: st.Warn, Prio: look.PrioSignal, Cut: true, Keep: look.MinCut}}
	}
	return []look.Part{{Variants: []string{"the server needs input (MRTR): not answered here", "needs input: not answered"}, Style: st.Warn, Prio: look.PrioSignal}}
}

// taskInputPart says what a task waiting for input waits for: the
// user's answer (modern: a answers its inputRequests with tasks/update),
// the server's answer to the answers sent, or (legacy) the server's
// question, which comes on tasks/result as a request of its own.
func (p painter) taskInputPart(r *session.Request) look.Part {
	st := p.st
	tk := r.Task
	switch {
	case len(r.TaskAsks()) > 0:
		return look.Part{Variants: []string{"waits for you: a answers it (tasks/update)", "waits for you"}, Style: st.Warn, Prio: look.PrioFlag}
	case tk.UpdateWords() != "":
		return look.Part{Variants: []string{tk.UpdateWords(), "answered"}, Style: st.Dim, Prio: look.PrioSignal}
	}
	return look.Part{Variants: []string{"asks for input: its question comes on tasks/result", "asks for input"}, Style: st.Warn, Prio: look.PrioFlag}
}

// taskParts tell a task at work: its status and message, when it was
// polled and when it is polled next. The message takes the width before
// the poll timing (look.PrioTiming): it is what the server says it is doing.
func (p painter) taskParts(r *session.Request, now time.Time) []look.Part {
	st := p.st
	tk := r.Task
	parts := p.lateParts(r)
	// STATE says "⧗ task"; this says what the task says of itself.
	parts = append(parts, look.Part{Variants: []string{p.line(tk.Status)}, Style: st.Running, Prio: look.PrioSignal})
	if tk.Status == wire.TaskInputRequired {
		parts = append(parts, p.taskInputPart(r))
	}
	if tk.Message != "" {
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("%q", p.line(tk.Message))}, Style: st.Running, Prio: look.PrioSignal, Cut: true, Keep: 8})
	}
	if !tk.LastPollAt.IsZero() {
		parts = append(parts, look.Part{Variants: []string{"polled " + look.Dur(now.Sub(tk.LastPollAt)) + " ago"}, Style: st.Dim, Prio: look.PrioTiming})
	}
	if !tk.NextPollAt.IsZero() {
		parts = append(parts, look.Part{Variants: []string{"next in " + look.Dur(max(0, tk.NextPollAt.Sub(now)))}, Style: st.Dim, Prio: look.PrioTiming})
	} else if tk.Polls > 0 || !tk.LastPollAt.IsZero() {
		parts = append(parts, look.Part{Variants: []string{"polling…"}, Style: st.Dim, Prio: look.PrioTiming})
	}
	return parts
}

// taskCancelParts tell a task whose tasks/cancel waits for its fate.
func (p painter) taskCancelParts(r *session.Request, now time.Time) []look.Part {
	st := p.st
	tk := r.Task
	parts := p.lateParts(r)
	switch {
	case tk.CancelError != nil:
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("tasks/cancel refused: error %d %s", tk.CancelError.Code, p.line(tk.CancelError.Message)), "tasks/cancel refused"},
			Style: st.Error, Prio: look.PrioSignal, Cut: true, Keep: len("tasks/cancel refused")})
	case !tk.CancelAckAt.IsZero():
		ago := look.Dur(now.Sub(tk.CancelAckAt)) + " ago"
		parts = append(parts, look.Part{Variants: []string{"tasks/cancel acknowledged " + ago, "acknowledged " + ago, "acked " + ago}, Style: st.Cancelling, Prio: look.PrioSignal})
	case !tk.CancelSentAt.IsZero():
		ago := look.Dur(now.Sub(tk.CancelSentAt)) + " ago"
		parts = append(parts, look.Part{Variants: []string{"tasks/cancel sent " + ago + ", not acknowledged", "tasks/cancel sent " + ago}, Style: st.Cancelling, Prio: look.PrioSignal})
	default:
		parts = append(parts, look.Part{Variants: []string{"sending tasks/cancel…"}, Style: st.Cancelling, Prio: look.PrioSignal})
	}
	if !tk.Terminal() {
		parts = append(parts, look.Part{Variants: []string{"task still " + p.line(tk.Status), p.line(tk.Status)}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if left, ok := look.LateWindowLeft(r, now); ok {
		l := look.Dur(left)
		parts = append(parts, look.Part{Variants: []string{"watching for its fate · " + l + " left", l + " left"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	return append(parts, look.Part{Variants: []string{"cancellation requested"}, Style: st.Cancelling, Prio: look.PrioRepeats})
}
