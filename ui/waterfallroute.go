package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/ui/screen"
	"inflight/ui/waterfall"
)

// The waterfall (v) is the list drawn as bars on one time axis. It is the
// list's mode still: the selection is the list's, kept in step both ways,
// so that every key that acts on the selected request (C, +, -, r, E, y…)
// acts on the one the waterfall shows selected.

// toggleWaterfall switches between the list and the waterfall, keeping
// the selection.
func (s *screens) toggleWaterfall(f *focus, env screen.Env, width, height int) {
	f.waterfallOn = !f.waterfallOn
	if f.waterfallOn {
		s.wf = s.wf.Select(s.list.Selected())
		s.wf = s.wf.Layout(env, width, height)
		return
	}
	if id := s.wf.Selected(); !id.IsZero() {
		s.list = s.list.Select(id, s.list.Following())
	}
}

// waterfallKey gives a key to the waterfall and carries out what it asks.
func (m *Model) waterfallKey(msg tea.KeyPressMsg) tea.Cmd {
	var act screen.Action
	m.screens.wf, act = m.screens.wf.Update(m.env(), msg)
	if id := m.screens.wf.Selected(); !id.IsZero() {
		m.screens.list = m.screens.list.Select(id, false)
	}
	switch act := act.(type) {
	case waterfall.Open:
		m.screens.list = m.screens.list.Select(act.ID, false)
		m.screens.openRequest(&m.focus, act.ID, m.size.width, m.chrome().bodyHeight(m.size.height))
	case waterfall.Cancel:
		return m.cancel(act.ID, "user requested cancellation", session.CauseUser)
	case screen.Unused:
		if key.Matches(msg, m.keys.Waterfall) {
			m.screens.toggleWaterfall(&m.focus, m.env(), m.size.width, m.chrome().bodyHeight(m.size.height))
			return nil
		}
		return m.handleGlobalKey(msg)
	}
	return nil
}
