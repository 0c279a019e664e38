package list

import (
	"sort"

	"inflight/session"
)

// listRow is one row of the list: the request at tracker index idx, or,
// with srv, one of the legacy server's own requests (incoming.go) shown
// under the request at idx (its own, or the last one begun before it
// came; -1: before any).
type listRow struct {
	idx int
	srv *session.ServerRequest
}

// rowsKey is what the rows depend on when nothing is hidden: the
// history's length and evictions, and the server's requests.
type rowsKey struct {
	n, evicted, srv int
	unfollowed      int
	last            *session.ServerRequest
}

// refreshShown rebuilds the list of rows shown from the tracker.
func (m *Model) refreshShown(t *session.Tracker) {
	l := m
	srv := t.ServerRequests()
	// A task's own requests are never rows, and the server's own requests
	// are rows of their own, so a session with either always picks its
	// rows.
	l.filtered = l.filter != FilterAll || !l.clearedAt.IsZero() || t.TaskRequestsBegun() > 0 || len(srv) > 0
	onlyTasks := l.filter == FilterAll && l.clearedAt.IsZero() && l.filtered
	key := rowsKey{n: t.Len(), evicted: t.Counts().Evicted, unfollowed: t.Counts().Unfollowed, srv: len(srv)}
	if len(srv) > 0 {
		key.last = srv[len(srv)-1]
	}
	if onlyTasks && l.onlyTasksKey == key {
		return // the same history: the same rows
	}
	l.onlyTasksKey = rowsKey{}
	if onlyTasks {
		l.onlyTasksKey = key
	}
	l.shown, l.hiddenByClear = l.shown[:0], 0
	if !l.filtered {
		l.shown = nil
		return
	}
	m.buildRows(t)
}

// shownLen is how many rows the list shows.
func (m *Model) shownLen(t *session.Tracker) int {
	if m.filtered {
		return len(m.shown)
	}
	return t.Len()
}

// shownRequests is how many of the rows shown are requests (the server's
// own requests are rows too).
func (m *Model) shownRequests(t *session.Tracker) int {
	if !m.filtered {
		return t.Len()
	}
	n := 0
	for _, row := range m.shown {
		if row.srv == nil {
			n++
		}
	}
	return n
}

// shownRow is the row at position pos among the rows shown.
func (m *Model) shownRow(pos int) listRow {
	if m.filtered {
		return m.shown[pos]
	}
	return listRow{idx: pos}
}

// shownAt is the request at position pos among the rows shown: the one
// an incoming row is shown under (nil for an untied one before any).
func (m *Model) shownAt(t *session.Tracker, pos int) *session.Request {
	row := m.shownRow(pos)
	if row.idx < 0 {
		return nil
	}
	return t.At(row.idx)
}

// selectedPos is the selection's position among the rows shown; ok is
// false when it is not shown (hidden, evicted or none).
func (m *Model) selectedPos(t *session.Tracker) (pos int, ok bool) {
	if s := m.srv; s != nil {
		return m.incomingPos(t, s)
	}
	idx, ok := t.Index(m.selected)
	if !ok {
		return 0, false
	}
	if !m.filtered {
		return idx, true
	}
	pos = m.rowsFrom(idx)
	return pos, pos < len(m.shown) && m.shown[pos].idx == idx && m.shown[pos].srv == nil
}

// rowsFrom is the position of the first row shown at or after the request
// at tracker index idx (its own row first).
func (m *Model) rowsFrom(idx int) int {
	return sort.Search(len(m.shown), func(i int) bool { return m.shown[i].idx >= idx })
}

// buildRows fills the list's rows: each request the filter keeps (and x
// did not clear), the server's requests tied to it right under it, and
// the untied ones where they came, in order. A kept incoming row brings
// its request in, so that it is never shown without it; a cleared request
// takes its incoming rows with it.
func (m *Model) buildRows(t *session.Tracker) {
	l := m
	untied := t.ServerRequestsUntied()
	u := 0
	// addUntied adds the untied that came after request idx was begun
	// and before the next (all: the rest).
	addUntied := func(all bool, idx int) {
		for ; u < len(untied) && (all || t.ServerRequestPlace(untied[u]) <= idx); u++ {
			s := untied[u]
			switch {
			case !l.filter.keepsIncoming(s):
			case clearedIncoming(s, l.clearedAt):
				// Hidden, not counted: "N of M · K cleared" counts requests.
			default:
				l.shown = append(l.shown, listRow{idx: idx, srv: s})
			}
		}
	}
	for i := 0; i < t.Len(); i++ {
		r := t.At(i)
		addUntied(false, i-1)
		if r.Role != session.RoleNone {
			// A task's own request (a poll, its tasks/result or
			// tasks/cancel) is no row: the task's detail shows it.
			continue
		}
		var kids []*session.ServerRequest
		if r.Conv != nil {
			for _, s := range r.Conv.ServerRequests {
				if l.filter.keepsIncoming(s) {
					kids = append(kids, s)
				}
			}
		}
		if !l.filter.keeps(r) && len(kids) == 0 {
			continue
		}
		if cleared(r, l.clearedAt) {
			l.hiddenByClear++
			continue
		}
		l.shown = append(l.shown, listRow{idx: i})
		for _, s := range kids {
			l.shown = append(l.shown, listRow{idx: i, srv: s})
		}
	}
	addUntied(true, t.Len()-1)
}

// incomingPos is the position of s's row among the rows shown.
func (m *Model) incomingPos(t *session.Tracker, s *session.ServerRequest) (int, bool) {
	rows := m.shown
	if !m.filtered {
		return 0, false
	}
	idx := -1
	if s.TiedBy != session.TiedNone {
		if r, ok := t.Get(s.During); ok {
			idx, _ = t.Index(r.ID)
		}
	} else {
		// The untied sit under the last request begun before they came.
		idx = t.ServerRequestPlace(s)
	}
	for pos := m.rowsFrom(idx); pos < len(rows) && rows[pos].idx == idx; pos++ {
		if rows[pos].srv == s {
			return pos, true
		}
	}
	return 0, false
}

// rowsAfterUntied is the position of the first row shown after where the
// untied server request s has (or had) its row: past the rows of the
// request it came after (its own, its nested ones) and the untied ones
// that came before s.
func (m *Model) rowsAfterUntied(t *session.Tracker, s *session.ServerRequest) int {
	place := t.ServerRequestPlace(s)
	shown := m.shown
	pos := m.rowsFrom(place)
	for ; pos < len(shown) && shown[pos].idx == place; pos++ {
		if o := shown[pos].srv; o != nil && o != s && o.TiedBy == session.TiedNone && !o.At.Before(s.At) {
			break
		}
	}
	return pos
}

// window is the range of positions (among the rows shown) View draws in
// rows lines: the window Layout chose, kept inside the list in
// case it shrank since.
func (m *Model) window(t *session.Tracker, rows int) (from, to int) {
	n := m.shownLen(t)
	rows = max(1, rows)
	from = min(max(m.offset, 0), max(0, n-rows))
	return from, min(n, from+rows)
}
