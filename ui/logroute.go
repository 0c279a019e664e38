package ui

import (
	tea "charm.land/bubbletea/v2"

	"inflight/ui/logview"
	"inflight/ui/screen"
)

// logAction carries out what the protocol log, its entry view or stderr
// asked for after msg: copying or opening an entry (the I/O is the
// root's), switching how long lines are laid out, a status message, a
// command to run; a key they did not use goes to the global keys.
func (m *Model) logAction(msg tea.Msg, act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case screen.Unused:
		if k, ok := msg.(tea.KeyPressMsg); ok {
			return m.handleGlobalKey(k)
		}
	case screen.Run:
		return a.Cmd
	case screen.Status:
		// screen.Level and statusLevel count the same levels alike.
		m.setStatus(statusLevel(a.Level), a.Text)
		m.status.about = a.About
	case logview.Copy:
		p, ok := entryPayload(m.tracker.Log(), a.Entry, m.opts.redaction())
		cmd, n := usePayload(m.pager.exec, useCopy, p, ok)
		m.status.say(n, m.opts.Redact, m.opts.moment())
		return cmd
	case logview.Open:
		p, ok := entryPayload(m.tracker.Log(), a.Entry, m.opts.redaction())
		cmd, n := usePayload(m.pager.exec, openWith(a.Editor), p, ok)
		m.status.say(n, m.opts.Redact, m.opts.moment())
		return cmd
	case logview.ToggleWrap:
		m.setStatus(levelInfo, m.pager.toggleWrap())
	}
	return nil
}
