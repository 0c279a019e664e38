package ui

import (
	"fmt"
	"time"

	"charm.land/lipgloss/v2"

	"inflight/session"
)

// listFilter chooses which requests the list shows (f cycles through
// them). It only hides rows: the tracker's history, the protocol log, the
// detail and exports keep everything.
type listFilter uint8

const (
	filterAll listFilter = iota
	// filterInFlight: pending, running, listening, or waiting for the fate
	// of a cancel.
	filterInFlight
	// filterFlagged: late traffic or a protocol violation (the header's
	// ⚑ count).
	filterFlagged
	// filterFailed: ended without the answer asked for, other than by a
	// cancel the user asked for: failed (an error or a tool error), timed
	// out, or lost with the connection.
	filterFailed
	filterCount
)

func (f listFilter) String() string {
	switch f {
	case filterInFlight:
		return "in flight"
	case filterFlagged:
		return "flagged"
	case filterFailed:
		return "failed"
	}
	return "all"
}

// next is the filter f cycles to.
func (f listFilter) next() listFilter { return (f + 1) % filterCount }

// keeps reports whether the filter shows r.
func (f listFilter) keeps(r *session.Request) bool {
	switch f {
	case filterInFlight:
		return r.IsActive()
	case filterFlagged:
		return r.Flagged()
	case filterFailed:
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
func (f listFilter) hidesNew() bool { return f == filterFlagged || f == filterFailed }

// cleared reports whether x (clear finished) hid r: it had reached its
// fate when the list was cleared at clearedAt.
func cleared(r *session.Request, clearedAt time.Time) bool {
	return !clearedAt.IsZero() && r.State.IsFinal() && !r.Ended.After(clearedAt)
}

// listShownText is the header's word on the list's filter when it hides
// rows ("list: flagged 1 of 12", "list: all 3 of 12 · 9 cleared"), in at
// most room cells when it can be said in as few ("flagged 1/12"), "" when
// the list shows every request.
func (m *Model) listShownText(room int) string {
	l := &m.list
	if !l.filtered || (l.filter == filterAll && l.clearedAt.IsZero()) {
		// Only a task's own requests are left out: they are no rows.
		return ""
	}
	st := m.styles
	name := st.Bold.Render(l.filter.String())
	total := m.tracker.Len() - m.tracker.TaskRequestsKept()
	shown := m.shownRequests()
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
