package ui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/composer"
	"inflight/ui/screen"
)

// updateComposer hands a message to the composer and carries out what it
// asks.
func (m *Model) updateComposer(msg tea.Msg) tea.Cmd {
	var act screen.Action
	m.screens.composer, act = m.screens.composer.Update(m.env(), msg)
	return m.composerDid(act)
}

// composerDid carries out what the composer asked: send the composed
// request, fetch a page of a list it picks from, close, run a command.
func (m *Model) composerDid(act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case nil:
		return nil
	case screen.Run:
		return a.Cmd
	case screen.Batch:
		cmds := make([]tea.Cmd, 0, len(a))
		for _, one := range a {
			cmds = append(cmds, m.composerDid(one))
		}
		return tea.Batch(cmds...)
	case screen.Close:
		m.focus.mode = keymap.ModeList
	case composer.Send:
		// Sent, the request is followed in the list; the status line says
		// what went, and the schema's objection to it if any.
		m.focus.mode = keymap.ModeList
		m.screens.list = m.screens.list.Follow()
		cmd := m.sendLogged(a.Method, a.Params, a.Options, a.LogLevel)
		if a.Objection != "" {
			m.setStatus(levelWarn, fmt.Sprintf("sent #%s %s although %s — press c to cancel it", m.screens.list.Selected(), a.Method, a.Objection))
		} else {
			m.setStatus(levelInfo, fmt.Sprintf("sent #%s %s — press c to cancel it", m.screens.list.Selected(), a.Method))
		}
		m.status.about = m.screens.list.Selected()
		return cmd
	case composer.Fetch:
		cmd := m.send(a.Method, a.Params, session.RequestOptions{})
		m.screens.composer = m.screens.composer.Asked(a, m.tracker.At(m.tracker.Len()-1).ID)
		return cmd
	}
	return nil
}
