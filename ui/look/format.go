package look

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/session"
)

// Dur formats a duration the way a person reads a stopwatch: tenths below
// a minute, then minutes and seconds, then hours and minutes.
func Dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d == 0:
		return "0ms"
	case d < time.Millisecond:
		// Below a millisecond a tenth of one still says something: a
		// late answer 689µs after the cancel is not "+0ms", which reads
		// as "at the same time". Less than a tenth is said as such.
		if d < 100*time.Microsecond {
			return "<0.1ms"
		}
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Millisecond:
		// Quick answers deserve a real figure, not "0.0s", and a tenth:
		// 2.8ms cut to "2ms" disagrees with the trace's text. A whole
		// number of milliseconds drops its ".0".
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)), ".0") + "ms"
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		m := int(d / time.Minute)
		s := int((d % time.Minute) / time.Second)
		return fmt.Sprintf("%dm%02ds", m, s)
	default:
		h := int(d / time.Hour)
		m := int((d % time.Hour) / time.Minute)
		return fmt.Sprintf("%dh%02dm", h, m)
	}
}

// Ago formats a duration since something, as "+2.3s".
func Ago(d time.Duration) string { return "+" + Dur(d) }

// StateName is a state in words, as the detail, the log and the status
// line say it ("cancellation requested", "timed out").
func StateName(st session.State) string {
	if st == session.StateCancelRequested {
		return "cancellation requested"
	}
	return strings.ReplaceAll(st.String(), "_", " ")
}

// StateLook is how a state is drawn: an icon and a word (never colour
// alone), and a style.
type StateLook struct {
	Icon, Word string
	Style      func(Styles) lipgloss.Style
}

var stateLooks = map[session.State]StateLook{
	session.StatePending:         {"○", "pending", func(s Styles) lipgloss.Style { return s.Pending }},
	session.StateRunning:         {"◐", "running", func(s Styles) lipgloss.Style { return s.Running }},
	session.StateListening:       {"◉", "listening", func(s Styles) lipgloss.Style { return s.Listening }},
	session.StateTask:            {"⧗", "task", func(s Styles) lipgloss.Style { return s.Running }},
	session.StateCancelRequested: {"⊘", "cancelling", func(s Styles) lipgloss.Style { return s.Cancelling }},
	session.StateCompleted:       {"✓", "completed", func(s Styles) lipgloss.Style { return s.Completed }},
	session.StateFailed:          {"✗", "failed", func(s Styles) lipgloss.Style { return s.Failed }},
	session.StateInputRequired:   {"?", "input req.", func(s Styles) lipgloss.Style { return s.Warn }},
	session.StateWaitingInput:    {"?", "waiting", func(s Styles) lipgloss.Style { return s.Warn }},
	session.StateCancelled:       {"⊗", "cancelled", func(s Styles) lipgloss.Style { return s.Cancelled }},
	session.StateTimedOut:        {"◷", "timed out", func(s Styles) lipgloss.Style { return s.TimedOut }},
	session.StateEndedByServer:   {"■", "ended", func(s Styles) lipgloss.Style { return s.Completed }},
	session.StateConnectionLost:  {"↯", "lost", func(s Styles) lipgloss.Style { return s.Lost }},
}

// StateLookOf is how a request in state st is drawn.
func StateLookOf(st session.State) StateLook {
	if l, ok := stateLooks[st]; ok {
		return l
	}
	return StateLook{"·", st.String(), func(s Styles) lipgloss.Style { return s.Dim }}
}

// spinnerFrames animate activity; the frame comes from the clock so that
// no separate spinner timer is needed.
// ActMark marks what the user had done to a request (a key in attach, a
// --rule of the proxy's): the user's own doing, never ⚑, which flags a
// party's misconduct.
const ActMark = "◇"

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Spinner is the spinner frame shown at now.
func Spinner(now time.Time) string {
	return spinnerFrames[int(now.UnixMilli()/100)%len(spinnerFrames)]
}

// SignalText is how a cancel signal reads on a row.
func SignalText(sig event.CancelSignal) string {
	switch sig {
	case event.SignalNotification:
		return "notifications/cancelled sent"
	case event.SignalStreamClosed:
		return "stream closed"
	case event.SignalTaskCancel:
		return "tasks/cancel sent"
	}
	return "sending cancel…"
}

// Bar draws a progress bar of width w (≥ 3) for fraction f in [0, 1].
func Bar(st Styles, f float64, w int) string {
	if w < 3 {
		return ""
	}
	if math.IsNaN(f) || f < 0 {
		f = 0
	}
	if f > 1 {
		f = 1
	}
	// Eighth blocks give a smooth bar at small widths.
	eighths := int(math.Round(f * float64(w*8)))
	full := eighths / 8
	rem := eighths % 8
	var b strings.Builder
	b.WriteString(strings.Repeat("█", full))
	partial := ""
	if rem > 0 && full < w {
		partial = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}[rem]
	}
	b.WriteString(partial)
	filled := full
	if partial != "" {
		filled++
	}
	return st.BarFull.Render(b.String()) + st.BarEmpty.Render(strings.Repeat("░", w-filled))
}

// Fit truncates or pads s (which may hold ANSI styling) to exactly w cells.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if pad := w - lipgloss.Width(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// FitLeft right-aligns s in w cells.
func FitLeft(s string, w int) string {
	if lipgloss.Width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-lipgloss.Width(s)) + s
}

// Trunc truncates plain or styled text to w cells with an ellipsis.
func Trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// MinHeaderTarget is the narrowest a shortened target (a command line, a
// URL) is still worth showing in the header.
const MinHeaderTarget = 16

// MiddleEllipsis shortens s to w columns by cutting out its middle: the
// start and the end of a command line or a URL are what tell servers
// apart.
func MiddleEllipsis(s string, w int) string {
	r := []rune(s)
	if len(r) <= w || w < 3 {
		return s
	}
	head := (w - 1) / 2
	tail := w - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// CountNoun is the singular or the plural noun for n.
func CountNoun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CancelAllQuestion is X's confirmation.
func CancelAllQuestion(n int) string {
	if n == 1 {
		return "Cancel the 1 request in flight?"
	}
	return fmt.Sprintf("Cancel all %d requests in flight?", n)
}

// RefusalText says in words why the tracker refused an action.
func RefusalText(err error, now time.Time) string {
	var rf *session.Refused
	if !errors.As(err, &rf) {
		return err.Error()
	}
	switch rf.Why {
	case session.RefusedUnknown:
		return fmt.Sprintf("no request %s", rf.ID)
	case session.RefusedEvicted:
		return fmt.Sprintf("request %s is no longer in history", rf.ID)
	case session.RefusedFinal:
		return fmt.Sprintf("%s %s ago", AlreadyText(rf.State), AgoText(now.Sub(rf.Since)))
	case session.RefusedCancelling:
		return fmt.Sprintf("cancellation already requested %s ago", AgoText(now.Sub(rf.Since)))
	case session.RefusedInitialize:
		return "initialize must never be cancelled"
	case session.RefusedNoTimeout:
		if rf.State == session.StateTask {
			return "a task has no response timeout once its handle arrived (only its maximum and its TTL)"
		}
		return "an acknowledged subscription has no timeout"
	case session.RefusedNotCancelling:
		return "not being cancelled: there is no late window to stop watching"
	}
	return err.Error()
}

// AlreadyText explains that a final request cannot be acted on any more.
func AlreadyText(s session.State) string {
	switch s {
	case session.StateInputRequired:
		return "already answered (input required)"
	case session.StateEndedByServer:
		return "already ended by the server"
	case session.StateConnectionLost:
		return "already lost with the connection"
	case session.StateTimedOut:
		return "already timed out"
	}
	return "already " + s.String()
}

// AgoText formats a duration for "… 2.1s ago" messages.
func AgoText(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
