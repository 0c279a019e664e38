package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/attach"
	"inflight/ui/screen"
	"inflight/wire"
)

// attachKey gives a key to the view on a proxy (ui/attach) before any
// other screen: used reports whether it took it; when it did not, the
// screens and the global keys try it as usual.
func (m *Model) attachKey(msg tea.KeyPressMsg) (cmd tea.Cmd, used bool) {
	var act screen.Action
	m.screens.attachv, act = m.screens.attachv.Update(m.env(), m.screens.attachInput(m.tracker, m.focus.mode, &m.feed), msg)
	if _, unused := act.(screen.Unused); unused {
		return nil, false
	}
	return m.attachAction(act), true
}

// attachInput is what the view on a proxy needs to know of the root for
// a key: the screen it was pressed on, whether it is text for something
// else, and the request keys act on with whether the proxy holds its
// response.
func (s *screens) attachInput(t *session.Tracker, mode keymap.Mode, feed *proxyFeed) attach.Input {
	in := attach.Input{
		Mode:   mode,
		Typing: s.prompt.Open() || (mode == keymap.ModeLog && s.logv.Filtering()),
	}
	if r, ok := s.selectedRequest(t, mode); ok {
		in.Selected, in.Held, in.Armed = r, feed.held(r), feed.armed(r)
	}
	return in
}

// attachAction carries out what the view on a proxy asks.
func (m *Model) attachAction(act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case screen.Batch:
		cmds := make([]tea.Cmd, 0, len(a))
		for _, one := range a {
			cmds = append(cmds, m.attachAction(one))
		}
		return tea.Batch(cmds...)
	case screen.Status:
		// screen.Level and statusLevel count the same levels alike.
		m.setStatus(statusLevel(a.Level), a.Text)
	case screen.Run:
		return a.Cmd
	case attach.Leave:
		return m.clock.end()
	case attach.Act:
		return actCmd(m.opts.Attach.Act, a)
	}
	return nil
}

// actCmd writes a's command to the proxy; its reply comes in the stream.
func actCmd(send func(act string, id wire.ID, after time.Duration) error, a attach.Act) tea.Cmd {
	return func() tea.Msg {
		if err := send(a.Action, a.ID, a.After); err != nil {
			return actFailedMsg{err: err}
		}
		return nil
	}
}

// actFailedMsg: a command could not be written to the proxy.
type actFailedMsg struct{ err error }
