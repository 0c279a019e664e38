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
	// One Env for the whole layout: it holds the styles, which are not
	// small.
	c := m.chrome()
	h, env := c.bodyHeight(m.size.height), c.env
	m.screens.list = m.screens.list.Layout(env, m.screens.listInput(m.conn.state, &m.feed, m.opts.Attach, m.opts.Redact), m.size.width, h)
	if m.focus.waterfallOn && m.focus.mode == keymap.ModeList {
		m.screens.wf = m.screens.wf.Layout(env, m.size.width, h)
	}
	m.screens.logv = m.screens.logv.Layout(env, m.size.width, h)
	m.screens.stderrv = m.screens.stderrv.Layout(env, m.size.width, h)
	m.screens.auth.SetSize(m.size.width, h)
	if m.focus.mode == keymap.ModeDetail {
		m.screens.layoutDetail(env, m.theme, m.pager.chop, &m.questions, &m.feed, m.size.width, h)
	}
	m.screens.prompt = m.screens.prompt.Sized(m.size.width)
	m.screens.composer = m.screens.composer.Layout(m.size.width)
	m.answering.form = m.answering.form.Sized(m.size.width)
	m.screens.attachv = m.screens.attachv.Sized(m.size.width)
}
