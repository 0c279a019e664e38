package list

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/ui/screen"
	"inflight/wire"
)

// key moves the selection, filters, clears, or asks to open the selected
// row; what it returns is screen.Unused when the key was not used.
func (m *Model) key(env screen.Env, msg tea.KeyPressMsg) screen.Action {
	k, t := env.Keys, env.Tracker
	switch {
	case key.Matches(msg, k.FilterList):
		return m.cycleFilter(t)
	case key.Matches(msg, k.ClearFinished):
		return m.clearFinished(t, env.Now)
	}
	m.refreshShown(t)
	n := m.shownLen(t)
	if n == 0 {
		return screen.Unused{}
	}
	idx, ok := m.selectedPos(t)
	if !ok {
		idx = n - 1
	}
	page := max(1, m.rows-1)
	switch {
	case key.Matches(msg, k.Up):
		idx--
	case key.Matches(msg, k.Down):
		idx++
	case key.Matches(msg, k.PageUp):
		idx -= page
	case key.Matches(msg, k.PageDown):
		idx += page
	case key.Matches(msg, k.Top):
		idx = 0
	case key.Matches(msg, k.Bottom):
		idx = n - 1
	case key.Matches(msg, k.Detail):
		return m.open(t)
	default:
		return screen.Unused{}
	}
	m.selectShown(t, idx)
	if key.Matches(msg, k.Bottom) {
		// End follows, whatever the last row is: a question nested under
		// the newest request (selectIncoming stops following) included.
		m.follow = true
	}
	return nil
}

// open asks the root to open the selected row's detail: one of the
// server's requests, or a request the tracker still holds.
func (m *Model) open(t *session.Tracker) screen.Action {
	if s := m.srv; s != nil {
		return OpenIncoming{Request: s}
	}
	if m.selected.IsZero() {
		return nil
	}
	if r, ok := t.Get(m.selected); ok {
		return Open{ID: r.ID}
	}
	return nil
}

// followsServerRow reports whether the selection is one of the server's
// requests past the newest request's own row (nested under it, or untied
// after it): while following, it stays selected until a newer request
// comes, rather than yield to its request at the next event.
func (m *Model) followsServerRow(t *session.Tracker) bool {
	s, n := m.srv, t.Len()
	if s == nil || n == 0 {
		return false
	}
	if s.TiedBy != session.TiedNone {
		return m.selected == t.At(n-1).ID
	}
	return t.ServerRequestPlace(s) >= n-1
}

// selectShown selects the row at position pos among those shown (clamped).
// Moving away from the newest row stops following; coming back to it
// resumes, so new requests are selected again.
func (m *Model) selectShown(t *session.Tracker, pos int) {
	n := m.shownLen(t)
	if n == 0 {
		return
	}
	pos = min(max(pos, 0), n-1)
	row := m.shownRow(pos)
	if row.srv != nil {
		m.selectIncoming(t, row.srv)
		return
	}
	m.srv = nil
	m.selected = m.shownAt(t, pos).ID
	// Following is on the newest request: the rows of the server's own
	// requests under it do not count.
	m.follow = row.idx == t.Len()-1
}

// scroll scrolls the list by delta rows (the mouse wheel), keeping the
// selection on screen: it moves only when it would leave it.
func (m *Model) scroll(t *session.Tracker, delta int) {
	m.refreshShown(t)
	n, rows := m.shownLen(t), max(1, m.rows)
	if n == 0 {
		return
	}
	off := min(max(m.offset+delta, 0), max(0, n-rows))
	m.offset = off
	pos, ok := m.selectedPos(t)
	if !ok {
		pos = n - 1
	}
	m.selectShown(t, min(max(pos, off), off+rows-1))
	if off < n-rows {
		// The user scrolled away from the newest rows: stay there.
		m.follow = false
	}
}

// selectIncoming selects s's row: keys then act on it, not on its request.
func (m *Model) selectIncoming(t *session.Tracker, s *session.ServerRequest) {
	m.srv = s
	m.selected = wire.ID{}
	if r, ok := t.Get(s.During); ok && s.TiedBy != session.TiedNone {
		m.selected = r.ID
	}
	m.follow = false
}

// selectRowAt selects the row at pos, leaving following as it is.
func (m *Model) selectRowAt(t *session.Tracker, pos int) {
	row := m.shownRow(pos)
	if row.srv != nil {
		follow := m.follow
		m.selectIncoming(t, row.srv)
		m.follow = follow
		return
	}
	m.srv = nil
	m.selected = m.shownAt(t, pos).ID
}
