package ui

import (
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/ui/detail"
	"inflight/ui/question"
	"inflight/ui/screen"
	"inflight/wire"
)

// The request detail is a screen of its own (ui/detail); what is here
// routes to it: opening it, laying it out, drawing it and carrying out
// what it asks. A server's own request opens its detail in the same mode
// (incoming.go).

// openDetail opens the detail of the selected row: a request, or one of
// the server's own requests.
func (m *Model) openDetail() {
	if s := m.list.Incoming(); s != nil && m.mode == keymap.ModeList {
		m.openIncomingDetail(s)
		return
	}
	if r, ok := m.selectedRequest(); ok {
		m.openRequestDetail(r.ID)
	}
}

// openRequestDetail shows request id in the detail.
func (m *Model) openRequestDetail(id wire.ID) {
	m.incoming = question.Model{}
	m.mode = keymap.ModeDetail
	m.detail = detail.New(id, m.width, m.bodyHeight())
}

// layoutDetail lays the open detail out in height rows.
func (m *Model) layoutDetail(height int) {
	if s := m.incoming.Request(); s != nil {
		m.incoming = m.incoming.Layout(m.env(), question.Input{Dark: m.dark, Asks: m.questions.of(s) != nil}, m.width, height)
		return
	}
	in := detail.Input{Dark: m.dark, Chop: m.pager.chop}
	if r, ok := m.tracker.Get(m.detail.ID()); ok {
		in.Host = detail.Host{Fact: m.feed.fact(m.styles, r, m.now()), Acts: m.feed.steps(r)}
	}
	m.detail = m.detail.Layout(m.env(), in, m.width, height)
}

// viewDetail draws the open detail in height rows.
func (m *Model) viewDetail(height int) string {
	if m.incoming.Request() != nil {
		return m.incoming.View(m.env(), m.width, height)
	}
	if _, ok := m.tracker.Get(m.detail.ID()); !ok {
		return m.list.Empty(m.env(), m.width, height)
	}
	return m.detail.View(m.env(), m.width, height)
}

// handleDetailKey gives a key to the open detail; what it leaves goes to
// the global keys.
func (m *Model) handleDetailKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.incoming.Request() != nil {
		var act screen.Action
		m.incoming, act = m.incoming.Update(m.env(), msg)
		return m.questionAction(msg, act)
	}
	var act screen.Action
	m.detail, act = m.detail.Update(m.env(), msg)
	if _, unused := act.(screen.Unused); unused {
		return m.handleGlobalKey(msg)
	}
	return m.detailAction(act)
}

// detailWheel scrolls the open detail.
func (m *Model) detailWheel(msg tea.MouseWheelMsg) tea.Cmd {
	if m.incoming.Request() != nil {
		var act screen.Action
		m.incoming, act = m.incoming.Update(m.env(), msg)
		return m.questionAction(msg, act)
	}
	var act screen.Action
	m.detail, act = m.detail.Update(m.env(), msg)
	return m.detailAction(act)
}

// detailAction carries out what the detail asked.
func (m *Model) detailAction(act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case detail.ToggleWrap:
		m.toggleWrap()
	case screen.Run:
		return a.Cmd
	}
	return nil
}
