package ui

import (
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// wheelRows is how many rows one notch of the mouse wheel scrolls.
const wheelRows = look.WheelRows

// handleWheel scrolls the view under the mouse wheel: the list, the log
// (its selection, as ↑/↓ would), the open entry, the detail, stderr and
// the composer's pickers. The wheel reaches the model because View asks
// for mouse reports (tea.View.MouseMode, in view.go).
func (m *Model) handleWheel(msg tea.MouseWheelMsg) tea.Cmd {
	var d int
	switch msg.Button {
	case tea.MouseWheelUp:
		d = -wheelRows
	case tea.MouseWheelDown:
		d = wheelRows
	}
	var cmd tea.Cmd
	var act screen.Action
	switch m.focus.mode {
	case keymap.ModeList:
		if !m.screens.prompt.Open() && !m.screens.attachv.Prompting() {
			m.screens.list, _ = m.screens.list.Update(m.env(), msg)
		}
	case keymap.ModeComposer:
		// As before the wheel had a case of its own: the composer's.
		return m.updateComposer(msg)
	case keymap.ModeLog:
		m.screens.logv, act = m.screens.logv.Update(m.env(), msg)
		return m.logAction(msg, act)
	case keymap.ModeDetail:
		cmd = m.detailInput(msg)
	case keymap.ModeAuth:
		m.screens.auth = m.screens.auth.Wheel(m.env(), d)
	case keymap.ModeStderr:
		m.screens.stderrv, act = m.screens.stderrv.Update(m.env(), msg)
		return m.logAction(msg, act)
	}
	return cmd
}
