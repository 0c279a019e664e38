package list

import (
	"fmt"
	"time"

	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// Filter chooses which requests the list shows (f cycles through
// them). It only hides rows: the tracker's history, the protocol log, the
// detail and exports keep everything.
type Filter uint8

// The filters, in the order f cycles through them.
const (
	// FilterAll shows every request.
	FilterAll Filter = iota
	// FilterInFlight: pending, running, listening, or waiting for the fate
	// of a cancel.
	FilterInFlight
	// FilterFlagged: late traffic or a protocol violation (the header's
	// ⚑ count).
	FilterFlagged
	// FilterFailed: ended without the answer asked for, other than by a
	// cancel the user asked for: failed (an error or a tool error), timed
	// out, or lost with the connection.
	FilterFailed
	filterCount
)

// String names the filter as the header and the status line say it.
func (f Filter) String() string {
	switch f {
	case FilterInFlight:
		return "in flight"
	case FilterFlagged:
		return "flagged"
	case FilterFailed:
		return "failed"
	}
	return "all"
}

// next is the filter f cycles to.
func (f Filter) next() Filter { return (f + 1) % filterCount }

// keeps reports whether the filter shows r.
func (f Filter) keeps(r *session.Request) bool {
	switch f {
	case FilterInFlight:
		return r.IsActive()
	case FilterFlagged:
		return r.Flagged()
	case FilterFailed:
		switch r.State {
		case session.StateFailed, session.StateTimedOut, session.StateConnectionLost:
			return true
		}
		return false
	}
	return true
}

// hidesNew reports whether the filter would hide a request just sent: the
// list then goes back to showing all, so that what the user sends is
// never sent out of sight.
func (f Filter) hidesNew() bool { return f == FilterFlagged || f == FilterFailed }

// cleared reports whether x (clear finished) hid r: it had reached its
// fate when the list was cleared at clearedAt.
func cleared(r *session.Request, clearedAt time.Time) bool {
	return !clearedAt.IsZero() && r.State.IsFinal() && !r.Ended.After(clearedAt)
}

// ShownText is the header's word on the list's filter when it hides
// rows ("list: flagged 1 of 12", "list: all 3 of 12 · 9 cleared"), in at
// most room cells when it can be said in as few ("flagged 1/12"), "" when
// the list shows every request.
func (m Model) ShownText(env screen.Env, room int) string {
	l, t := &m, env.Tracker
	if !l.filtered || (l.filter == FilterAll && l.clearedAt.IsZero()) {
		// Only a task's own requests are left out: they are no rows.
		return ""
	}
	st := env.Styles
	name := st.Bold.Render(l.filter.String())
	total := t.Len() - t.TaskRequestsKept()
	shown := m.shownRequests(t)
	of := fmt.Sprintf(" %d of %d", shown, total)
	cleared := ""
	if l.hiddenByClear > 0 {
		cleared = fmt.Sprintf(" · %d cleared", l.hiddenByClear)
	}
	short := name + st.Dim.Render(fmt.Sprintf(" %d/%d", shown, total))
	for _, s := range []string{
		st.Dim.Render("list: ") + name + st.Dim.Render(of+cleared),
		st.Dim.Render("list: ") + name + st.Dim.Render(of),
		short,
	} {
		if lipgloss.Width(s) <= room {
			return s
		}
	}
	return short
}

// keepsIncoming reports whether the filter shows one of the server's
// requests: in flight while it waits for an answer; failed when the
// connection lost it; flagged when it came under a reused ID.
func (f Filter) keepsIncoming(s *session.ServerRequest) bool {
	switch f {
	case FilterInFlight:
		return s.Open()
	case FilterFlagged:
		return s.State == session.ServerNotAnswered
	case FilterFailed:
		return s.State == session.ServerLost
	}
	return true
}

// clearedIncoming reports whether x hid an untied incoming row: it had
// ended when the list was cleared (a tied one goes with its request).
func clearedIncoming(s *session.ServerRequest, clearedAt time.Time) bool {
	return !clearedAt.IsZero() && !s.Open() && !s.Ended.IsZero() && !s.Ended.After(clearedAt)
}

// clearsIncoming reports whether x would hide an incoming row now: an
// untied one that ended, or a tied one whose request is final.
func clearsIncoming(t *session.Tracker, row listRow, now time.Time) bool {
	if row.srv.TiedBy == session.TiedNone {
		return clearedIncoming(row.srv, now)
	}
	return row.idx >= 0 && t.At(row.idx).State.IsFinal()
}

// cycleFilter moves to the next list filter and says what it shows.
func (m *Model) cycleFilter(t *session.Tracker) screen.Action {
	m.filter = m.filter.next()
	m.refreshShown(t)
	n := m.shownRequests(t)
	text := fmt.Sprintf("list: %s — %d %s", m.filter, n, look.CountNoun(n, "request", "requests"))
	if m.filter == FilterAll {
		text = fmt.Sprintf("list: all %d %s", n, look.CountNoun(n, "request", "requests"))
	}
	if m.filter == FilterFailed {
		text += " (failed, timed out or lost)"
	}
	if m.hiddenByClear > 0 {
		text += fmt.Sprintf("; %d cleared with x not shown", m.hiddenByClear)
	}
	return info(text + " · f shows the next filter")
}

// clearFinished hides the finished rows from the list (x). The tracker
// keeps them: the log, the detail and exports still have them. With
// nothing finished left to clear, x shows the cleared rows again.
func (m *Model) clearFinished(t *session.Tracker, now time.Time) screen.Action {
	m.refreshShown(t)
	finished := 0
	for pos := 0; pos < m.shownLen(t); pos++ {
		if row := m.shownRow(pos); row.srv != nil {
			if clearsIncoming(t, row, now) {
				finished++
			}
		} else if m.shownAt(t, pos).State.IsFinal() {
			finished++
		}
	}
	var act screen.Action
	switch {
	case finished > 0:
		m.clearedAt = now
		act = info(fmt.Sprintf("cleared %d finished %s; the log and exports keep them · x shows them again", finished, look.CountNoun(finished, "row", "rows")))
	case !m.clearedAt.IsZero():
		m.clearedAt = time.Time{}
		m.refreshShown(t)
		act = info(fmt.Sprintf("showing the cleared requests again (%d in the list)", m.shownRequests(t)))
	default:
		act = info("nothing finished to clear")
	}
	m.refreshShown(t)
	return act
}

// info is a status message of the list's.
func info(text string) screen.Action { return screen.Status{Level: screen.Info, Text: text} }
