package detail

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"inflight/event"
	"inflight/msgtext"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// HostTimeoutText is the facts' word on a host request's timeout: the
// host keeps it, and nothing on the wire says what it is.
const HostTimeoutText = "timeout: the host's own"

// facts is the line of times and the timeout.
func (m *Model) facts(env screen.Env, r *session.Request, width int) string {
	st := env.Styles
	now := env.Now
	if r.Task != nil {
		sent := "sent " + r.Sent.Format("15:04:05.000") + " · "
		if width < 100 {
			sent = "" // the timeline says when it was sent
		}
		return st.Dim.Render(sent) + taskFacts(env, r, width-len(sent))
	}
	var parts []string
	if !r.Sent.IsZero() {
		parts = append(parts, "sent "+r.Sent.Format("15:04:05.000"))
	} else {
		parts = append(parts, "not sent yet")
	}
	if r.Progress.Count > 0 {
		p := fmt.Sprintf("%d progress (┼)", r.Progress.Count)
		total := &r.Progress.Total
		if !r.Progress.HasTotal {
			total = nil
		}
		p += ", last " + msgtext.Numbers(r.Progress.Value, total)
		parts = append(parts, p)
	}
	if r.IsListen() && r.Acked {
		// What it says of the timeout goes first: "sent" is on the timeline.
		parts = append(m.subscriptionFacts(r), parts...)
		return st.Dim.Render(strings.Join(parts, " · "))
	}
	if r.WaitingOnUser() && r.State != session.StateWaitingInput {
		// A question of the server's tied to it waits for the user.
		parts = append(parts, fmt.Sprintf("timeout paused while the server's question waits for you (timeout %s; max %s)", look.Dur(r.Timeout.Timeout), look.Dur(r.Timeout.Max)))
		return st.Dim.Render(strings.Join(parts, " · "))
	}
	rem, limit := r.Remaining(now)
	switch limit {
	case session.LimitTimeout:
		reset := ""
		if r.Timeout.ResetOnProgress {
			reset = ", reset by progress"
		}
		parts = append(parts, fmt.Sprintf("times out in %s (timeout %s%s; max %s)", look.Dur(rem), look.Dur(r.Timeout.Timeout), reset, look.Dur(r.Timeout.Max)))
	case session.LimitMax:
		parts = append(parts, fmt.Sprintf("maximum reached in %s (max %s, never reset)", look.Dur(rem), look.Dur(r.Timeout.Max)))
	case session.LimitNone:
		if r.ByHost {
			parts = append(parts, HostTimeoutText)
			if f := m.host.Fact; f != "" {
				parts = append(parts, f)
			}
			break
		}
		fallthrough
	default:
		parts = append(parts, fmt.Sprintf("timeout %s · max %s", look.Dur(r.Timeout.Timeout), look.Dur(r.Timeout.Max)))
	}
	return st.Dim.Render(strings.Join(parts, " · "))
}

// subscriptionFacts say when an acknowledged subscription was
// acknowledged and its updates. It lives until it is ended: its timeout
// stopped with the acknowledgment.
func (m *Model) subscriptionFacts(r *session.Request) []string {
	ack := "acknowledged"
	if at := m.trail.ackAt; !at.IsZero() && m.trail.id == r.ID {
		ack += " " + look.Ago(at.Sub(startOf(r)))
	}
	u := fmt.Sprintf("%d %s (•)", r.Notifications, look.CountNoun(r.Notifications, "update", "updates"))
	if !r.LastNotificationAt.IsZero() {
		u += ", last " + look.Ago(r.LastNotificationAt.Sub(startOf(r)))
	}
	return []string{ack + " (no timeout since)", u}
}

// taskFacts is the header's line about the task.
func taskFacts(env screen.Env, r *session.Request, width int) string {
	st := env.Styles
	now := env.Now
	tk := r.Task
	id := env.Line(look.ClipRunes(tk.ID, 40))
	parts := []look.Part{{Variants: []string{"task " + id + " " + env.Line(tk.Status), env.Line(tk.Status)}, Style: st.Running, Prio: look.PrioSignal}}
	if tk.Message != "" {
		// Whole before the poll timing takes its longer wordings: what the
		// server says of the task ("cancelled by tasks/cancel") matters
		// more than when it was polled.
		msg := fmt.Sprintf("%q", env.Line(tk.Message))
		parts = append(parts, look.Part{Variants: []string{msg, look.ClipRunes(msg, 10)}, Style: st.Running, Prio: look.PrioSignal, Cut: true, Keep: 10})
	}
	polls := fmt.Sprintf("%d %s", tk.Polls, look.CountNoun(tk.Polls, "poll", "polls"))
	long := polls
	switch {
	case !r.IsActive() && !tk.LastPollAt.IsZero():
		// Polling is over: when it was, not how long ago, as if it went on.
		long = fmt.Sprintf("polled %d %s, the last at %s", tk.Polls, look.CountNoun(tk.Polls, "time", "times"), look.Ago(tk.LastPollAt.Sub(r.Created)))
		polls = long
	case !tk.LastPollAt.IsZero():
		long += ", last " + look.Dur(now.Sub(tk.LastPollAt)) + " ago"
	}
	if !tk.NextPollAt.IsZero() && r.IsActive() {
		long += ", next in " + look.Dur(max(0, tk.NextPollAt.Sub(now)))
	}
	interval := fmt.Sprintf(" (no interval from the server: every %s)", look.Dur(env.Tracker.Config().PollInterval))
	switch {
	case tk.PollFloored:
		interval = fmt.Sprintf(" (server asked %s; polled every %s)", askedDur(tk.PollInterval), session.MinPollInterval)
	case tk.PollInterval > 0:
		interval = fmt.Sprintf(" (the server's interval %s)", look.Dur(tk.PollInterval))
	}
	parts = append(parts, look.Part{Variants: []string{long + interval, long, polls}, Style: st.Dim, Prio: look.PrioWatch})
	switch left, ok := r.TTLLeft(now); {
	case ok && r.IsActive():
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("ttl %s, %s left", look.Dur(tk.TTL), look.Dur(left)), "ttl " + look.Dur(left) + " left"}, Style: st.Dim, Prio: look.PrioSignal})
	case ok:
		parts = append(parts, look.Part{Variants: []string{"ttl " + look.Dur(tk.TTL)}, Style: st.Dim, Prio: look.PrioWatch})
	case tk.TTLUnlimited:
		parts = append(parts, look.Part{Variants: []string{"ttl unlimited"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if r.IsActive() {
		parts = append(parts, look.Part{Variants: []string{"no response timeout (max " + look.Dur(r.Timeout.Max) + ")", "max " + look.Dur(r.Timeout.Max)}, Style: st.Dim, Prio: look.PrioRepeats})
	}
	return look.BuildCell(parts, width)
}

// cancelFacts says what happened to the cancel, if there was one, and on a
// second line what the server sent after it.
func (m *Model) cancelFacts(env screen.Env, r *session.Request) (string, string) {
	st := env.Styles
	failure := failureCause(env, r)
	if r.Cancel == nil {
		if r.IsActive() {
			return st.Dim.Render("not cancelled · press c to cancel it, C to give a reason"), ""
		}
		if failure != "" {
			return st.Failed.Render("✗ " + failure), urlsRequired(env, r)
		}
		if flip := flipText(env, r); flip != "" {
			return st.Flag.Render(flip), ""
		}
		return "", "" // nothing to say: it ended on its own
	}
	s := cancelText(env, r)
	if after, ok := afterCancel(env, r); ok {
		return st.Cancelling.Render(s), after
	}
	return settledCancel(env, r, s, failure)
}

// cancelText is the cancel's own line: why, when, the signal and the
// reason (said when the signal carries none).
func cancelText(env screen.Env, r *session.Request) string {
	c := r.Cancel
	sig := look.SignalText(c.Signal)
	if c.Failed != "" {
		sig = "could not be sent: " + env.Line(c.Failed)
	}
	s := fmt.Sprintf("cancel (%s) at %s · %s", c.Cause, look.Ago(c.At.Sub(startOf(r))), sig)
	if c.Reason != "" {
		s += fmt.Sprintf(" · reason %q", env.Line(c.Reason))
		switch c.Signal {
		case event.SignalStreamClosed:
			s += " (not sent: a closed stream carries none)"
		case event.SignalTaskCancel:
			s += " (not sent: tasks/cancel carries none)"
		}
	}
	return s
}

// flipText is the flag of a task that said another status after its
// terminal one (the terminal status stands), as the row says it; "" for
// any other request.
func flipText(env screen.Env, r *session.Request) string {
	tk := r.Task
	if tk == nil || tk.AfterTerminal == "" {
		return ""
	}
	return fmt.Sprintf("⚑ said %s (%s) after %s — ignored: a terminal status is final",
		env.Line(tk.AfterTerminal), tk.AfterTerminalVia, env.Line(tk.Status))
}

// afterCancel is the second line when the server sent something after the
// cancel: what is flagged, then what crossed it in flight (false: nothing
// came after it).
func afterCancel(env screen.Env, r *session.Request) (string, bool) {
	st := env.Styles
	var flags, crossed []string
	if tk := r.Task; tk != nil && tk.EndedAfterCancel != "" {
		flags = append(flags, fmt.Sprintf("⚑ %s after tasks/cancel (+%s) — its result ignored", env.Line(tk.EndedAfterCancel), look.Dur(tk.AfterCancel)))
	} else if r.Late.Response && !r.Late.Crossed {
		flags = append(flags, fmt.Sprintf("⚑ late response %s after the cancel — %s", look.Dur(r.Late.AfterCancel), look.LateFate(r)))
	}
	if r.Late.ProgressAfterCancel > 0 {
		flags = append(flags, fmt.Sprintf("⚑ %d progress after the cancel", r.Late.ProgressAfterCancel))
	}
	if flip := flipText(env, r); flip != "" {
		flags = append(flags, flip)
	}
	if r.Late.Response && r.Late.Crossed {
		crossed = append(crossed, fmt.Sprintf("a response crossed the cancel in flight (%s after it) — %s", look.Dur(r.Late.AfterCancel), look.LateFate(r)))
	}
	if n := r.Late.ProgressCrossed; n > 0 {
		crossed = append(crossed, fmt.Sprintf("%d progress crossed in flight", n))
	}
	if watched, still, ok := r.WatchEnded(); ok && still {
		flags = append(flags, fmt.Sprintf("still sending when the %s watch ended", look.Dur(watched)))
	}
	if len(flags)+len(crossed) == 0 {
		return "", false
	}
	var parts []string
	if len(flags) > 0 {
		parts = append(parts, st.Flag.Render(strings.Join(flags, " · ")))
	}
	if len(crossed) > 0 {
		parts = append(parts, st.Dim.Render(strings.Join(crossed, " · ")+" · "+look.CrossingBasis(env.Tracker, env.Line)))
	}
	return strings.Join(parts, st.Dim.Render(" · ")), true
}

// settledCancel is the cancel's two lines when nothing came after it:
// where its fate stands, in the cancel line's style for it.
func settledCancel(env screen.Env, r *session.Request, s, failure string) (string, string) {
	st := env.Styles
	c := r.Cancel
	switch r.State {
	case session.StateCancelRequested:
		if w := look.WatchingText(r, env.Now); w != "" {
			return st.Cancelling.Render(s), st.Dim.Render(w)
		}
		return st.Cancelling.Render(s), st.Dim.Render(fmt.Sprintf("waiting for the server's answer to the cancel, %s so far", look.Dur(env.Now.Sub(c.At))))
	case session.StateCompleted, session.StateFailed, session.StateInputRequired, session.StateEndedByServer:
		line := st.Dim.Render("the answer had arrived before the cancel: nothing was cancelled")
		if failure != "" {
			line = st.Failed.Render("✗ "+failure) + st.Dim.Render(" · the answer had arrived before the cancel")
		}
		return st.Dim.Render(s), line
	case session.StateConnectionLost:
		if failure != "" {
			return st.Cancelled.Render(s), st.Failed.Render("✗ " + failure)
		}
	}
	if r.Task != nil && r.Task.Status == wire.TaskCancelled {
		return st.Cancelled.Render(s), st.Dim.Render("the task says cancelled: what the server says of it, not whether its work stopped")
	}
	if watched, _, ok := r.WatchEnded(); ok && c.Signal != event.SignalStreamClosed {
		return st.Cancelled.Render(s), st.Dim.Render(fmt.Sprintf("the server sent nothing more for this request in the %s watched", look.Dur(watched)))
	}
	return st.Cancelled.Render(s), st.Dim.Render("the server sent nothing more for this request")
}

// codeURLElicitationRequired is URLElicitationRequiredError: the request
// cannot go on until the user has opened the URLs its data lists.
const codeURLElicitationRequired = -32042

// urlsRequired says, for a request refused with URLElicitationRequired,
// which sites the server asks the user to open (never opened here) and
// that E sends it again; "" for any other.
func urlsRequired(env screen.Env, r *session.Request) string {
	if r.Error == nil || r.Error.Code != codeURLElicitationRequired {
		return ""
	}
	var data struct {
		Elicitations []struct {
			URL     string `json:"url"`
			Message string `json:"message"`
		} `json:"elicitations"`
	}
	if json.Unmarshal(r.Error.Data, &data) != nil || len(data.Elicitations) == 0 {
		return ""
	}
	var parts []string
	for _, e := range data.Elicitations {
		site := look.URLHost(e.URL)
		if site == "" {
			site = "no host inflight can read"
		}
		parts = append(parts, "site "+env.Line(site)+": "+env.Line(e.URL))
	}
	return env.Styles.Warn.Render("open first, yourself (inflight never does), then E sends it again: " + strings.Join(parts, " · "))
}

// failureCause is why a failed (or lost) request failed, in the words of
// the error the server sent, of the tool result that reported an error, or
// of what inflight saw itself; "" for any other request.
func failureCause(env screen.Env, r *session.Request) string {
	if r.State != session.StateFailed && r.State != session.StateConnectionLost {
		return ""
	}
	switch {
	case r.Error != nil:
		return env.Line(msgtext.Error(r.Error))
	case r.ToolError:
		if raw, ok := env.Tracker.RawResponse(r.ID); ok {
			if msg, err := wire.Decode(raw); err == nil && msg.Kind == wire.KindResult {
				return "tool error " + strings.TrimPrefix(env.Line(msgtext.Result(r.Method, msg.Result)), "(tool error) ")
			}
		}
		return "the tool reported an error (isError)"
	case r.LocalError != "":
		return env.Line(r.LocalError)
	}
	return ""
}

// askedDur is a poll interval a server asked for, exact below a
// millisecond (a hostile 1µs reads as such, not as "<0.1ms").
func askedDur(d time.Duration) string {
	if d < time.Millisecond {
		return d.String()
	}
	return look.Dur(d)
}
