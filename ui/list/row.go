package list

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/wire"
)

// painter draws the list's rows for one frame: it holds what the cells
// read besides the request (the styles, the sanitiser, the tracker, the
// clock's reading, the screen's width, what only the root knows, and the
// cached result summaries), so that View builds it once.
type painter struct {
	st        look.Styles
	line      func(string) string
	tracker   *session.Tracker
	now       time.Time
	width     int
	facts     Facts
	summaries map[wire.ID]string
}

// row renders one request. The selected row is highlighted whole, not only
// marked with ▌.
func (p painter) row(r *session.Request, c columns, selected bool, now time.Time) string {
	st := p.st
	sl := look.StateLookOf(r.State)
	icon := sl.Icon
	if r.State == session.StateRunning || r.State == session.StatePending {
		icon = look.Spinner(now)
	}
	marker := "  "
	if selected {
		marker = st.Cursor.Render("▌ ")
	}
	stateCell := sl.Style(st).Render(look.Fit(icon+" "+sl.Word, c.state))
	parts := []string{
		marker + idCell(p.line(r.ID.String()), c.id),
		look.Fit(hostMark(r)+look.RequestLabel(r, c.method, p.line), c.request),
		stateCell,
	}
	if c.elapsed > 0 {
		parts = append(parts, look.FitLeft(look.Dur(look.Elapsed(r, now)), c.elapsed))
	}
	if c.timeout > 0 {
		parts = append(parts, look.FitLeft(p.countdown(r, now), c.timeout))
	}
	if c.detail > 0 {
		parts = append(parts, look.Fit(p.authCell(r, c, now), c.detail))
	}
	line := look.Fit(strings.Join(parts, " "), p.width)
	if selected {
		return st.Highlight(line)
	}
	return line
}

// countdown is the timeout column: time left before the nearer limit,
// amber when close, red when expired, "max" when the maximum is nearer,
// "on you" while the timeout is paused for a question of the server's.
func (p painter) countdown(r *session.Request, now time.Time) string {
	st := p.st
	if r.State == session.StateCancelRequested && r.Cancel != nil && r.Cancel.Cause == session.CauseTimeout {
		return st.Error.Render("expired")
	}
	if r.WaitingOnUser() && r.State != session.StateWaitingInput {
		// A server's question tied to it waits for the user: its timeout
		// is paused (the STATE column keeps its state on the wire).
		return st.Warn.Render("on you")
	}
	rem, limit := r.Remaining(now)
	if limit == session.LimitNone {
		return st.Dim.Render("—")
	}
	text := look.Dur(rem)
	switch limit {
	case session.LimitMax:
		text = "max " + text
	case session.LimitTTL:
		if p.width >= 100 {
			// The TIMEOUT column is wide enough to say which limit.
			text = "ttl " + text
		} else {
			// Seven cells: the task's mark (STATE's "⧗ task") says it is
			// the task's TTL, not a timeout; the space goes first.
			if lipgloss.Width(text)+2 <= 7 {
				text = "⧗ " + text
			} else {
				text = "⧗" + text
			}
		}
	}
	total := r.Timeout.Timeout
	switch limit {
	case session.LimitMax:
		total = r.Timeout.Max
	case session.LimitTTL:
		total = r.Task.TTL
	}
	switch {
	case rem <= 0:
		return st.Error.Render("expired")
	case rem < 5*time.Second || (total > 0 && rem < total/5):
		return st.Warn.Render(text)
	}
	return text
}

// authCell is the row's last column, with what the authorization did to
// the request: waiting for it, or sent again with a new token.
func (p painter) authCell(r *session.Request, c columns, now time.Time) string {
	st := p.st
	if since, ok := p.facts.AuthWaiting(r); ok {
		s := "⧗ waiting for authorization"
		if c.detail >= len([]rune(s))+8 {
			s += " · " + look.Dur(now.Sub(since))
		}
		return st.Warn.Render(s)
	}
	cell := p.detailCellWithLogs(r, c, now)
	if p.facts.AuthRetried(r.ID) {
		mark := "↻ retried · "
		if c.detail < 30 {
			mark = "↻ "
		}
		return st.Warn.Render(mark) + cell
	}
	return cell
}

// logsReserve is the width the last column must keep for everything else
// before the log count is given room of its own.
const logsReserve = 40

// detailCellWithLogs is the row's last column with its log count: on a
// wide column the count has its own room at the end (a result cut short
// to make it); on a narrow one it is added only when what the column says
// leaves room for it.
func (p painter) detailCellWithLogs(r *session.Request, c columns, now time.Time) string {
	if r.Conv == nil || r.Conv.LogCount == 0 {
		return p.detailCell(r, c, now)
	}
	n := r.Conv.LogCount
	count := fmt.Sprintf("%d %s", n, look.CountNoun(n, "log", "logs"))
	if w := c.detail - ansi.StringWidth(look.CellSep+count); w >= logsReserve {
		c.detail = w
		cell := p.detailCell(r, c, now)
		if ansi.StringWidth(cell) == 0 {
			return p.st.Dim.Render(count)
		}
		return cell + p.st.Dim.Render(look.CellSep+count)
	}
	return p.withLogs(r, p.detailCell(r, c, now), c.detail)
}

// withLogs adds the count of the request's log lines to its row's last
// column, when there is room left for it: it matters less than anything
// else the column says.
func (p painter) withLogs(r *session.Request, cell string, w int) string {
	if r.Conv == nil || r.Conv.LogCount == 0 {
		return cell
	}
	n := r.Conv.LogCount
	for _, s := range []string{fmt.Sprintf("%d %s", n, look.CountNoun(n, "log", "logs")), fmt.Sprintf("%d≡", n)} {
		used := ansi.StringWidth(cell)
		if used > 0 {
			s = look.CellSep + s
		}
		if used+ansi.StringWidth(s) <= w {
			return cell + p.st.Dim.Render(s)
		}
	}
	return cell
}

// detailCell is the flexible last column: progress while running, the
// cancel while it is pending, and the outcome (with flags) once settled.
// What it says is built from parts in priority order (buildCell), so that
// a narrow terminal loses the words that repeat other columns, never the
// flags.
func (p painter) detailCell(r *session.Request, c columns, now time.Time) string {
	st := p.st
	w := c.detail
	if cell, ok := p.hostActiveCell(r, w, now); ok {
		return cell
	}
	switch r.State {
	case session.StateWaitingInput:
		return look.BuildCell(p.waitingParts(r), w)
	case session.StatePending:
		if s := p.serverAskCell(r, w); s != "" {
			return s
		}
		if r.Sent.IsZero() {
			return st.Dim.Render("sending…")
		}
		return st.Dim.Render("waiting for the server…")
	case session.StateRunning:
		if s := p.serverAskCell(r, w); s != "" {
			return s
		}
		return p.progressCell(r, w, now)
	case session.StateListening:
		s := fmt.Sprintf("%d %s", r.Notifications, look.CountNoun(r.Notifications, "update", "updates"))
		if !r.LastNotificationAt.IsZero() {
			s += ", last " + look.Dur(now.Sub(r.LastNotificationAt)) + " ago"
		}
		return st.Listening.Render(s)
	case session.StateTask:
		return look.BuildCell(p.taskParts(r, now), w)
	case session.StateCancelRequested:
		if r.IsTask() {
			return look.BuildCell(p.taskCancelParts(r, now), w)
		}
		return look.BuildCell(p.cancellingParts(r, c, now), w)
	}
	return look.BuildCell(p.outcomeParts(r), w)
}

// progressCell draws a bar with percent and message when the total is
// known, an activity indicator and the count when it is not.
func (p painter) progressCell(r *session.Request, w int, now time.Time) string {
	st := p.st
	pr := r.Progress
	msg := p.line(pr.Message)
	if pct, f, ok := termsafe.Percent(pr.Value, pr.Total); pr.HasTotal && ok {
		// The percentage is clamped to 0–100%: a server's total of 1e-300
		// or value of 1e308 reads 100%, never +Inf% or 309 digits.
		barW := min(20, max(6, w/3))
		pct = fmt.Sprintf(" %4s ", pct)
		return look.Bar(st, f, barW) + pct + look.Trunc(msg, w-barW-len(pct))
	}
	s := look.Spinner(now) + " " + termsafe.Number(pr.Value)
	if msg != "" {
		s += " · " + msg
	}
	return st.Running.Render(s)
}
