package ui

import (
	"inflight/keymap"
)

// layout sets everything the views only read: the sizes of the viewports
// and inputs, the windows of the list and the logs, the detail's body and
// the summaries of the visible rows. Update calls it after every message,
// because nearly every message can change the window, the mode, the
// selection or the data; it is cheap when nothing changed (the detail body,
// the one costly part, is rebuilt only when what it shows changed).
//
// View then only renders: it reads these fields and the clock, and changes
// nothing (TestViewChangesNothing holds it to that).
func (m *Model) layout() {
	h := m.bodyHeight()
	m.list = m.list.Layout(m.env(), m.listInput(), m.width, h)
	if m.waterfallOn && m.mode == keymap.ModeList {
		m.wf = m.wf.Layout(m.env(), m.width, h)
	}
	m.logv = m.logv.Layout(m.env(), m.width, h)
	m.stderrv = m.stderrv.Layout(m.env(), m.width, h)
	m.auth.SetSize(m.width, h)
	if m.mode == keymap.ModeDetail {
		m.layoutDetail(h)
	}
	m.prompt = m.prompt.Sized(m.width)
	m.composer = m.composer.Layout(m.width)
	m.answering.form = m.answering.form.Sized(m.width)
	m.attachv = m.attachv.Sized(m.width)
}
