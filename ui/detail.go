package ui

import (
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
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
func (s *screens) openDetail(f *focus, t *session.Tracker, width, height int) {
	if sr := s.list.Incoming(); sr != nil && f.mode == keymap.ModeList {
		s.openQuestion(f, sr, width)
		return
	}
	if r, ok := s.selectedRequest(t, f.mode); ok {
		s.openRequest(f, r.ID, width, height)
	}
}

// openRequest shows request id in the detail, in width cells and height
// rows.
func (s *screens) openRequest(f *focus, id wire.ID, width, height int) {
	s.incoming = question.Model{}
	f.mode = keymap.ModeDetail
	s.detail = detail.New(id, width, height)
}

// layoutDetail lays the open detail out in height rows.
func (s *screens) layoutDetail(env screen.Env, th theme, chop bool, qs *questionQueue, feed *proxyFeed, width, height int) {
	if sr := s.incoming.Request(); sr != nil {
		s.incoming = s.incoming.Layout(env, question.Input{Dark: th.dark, Asks: qs.of(sr) != nil}, width, height)
		return
	}
	in := detail.Input{Dark: th.dark, Chop: chop}
	if r, ok := env.Tracker.Get(s.detail.ID()); ok {
		in.Host = detail.Host{Fact: feed.fact(th.styles, r, env.Now), Acts: feed.steps(r)}
	}
	s.detail = s.detail.Layout(env, in, width, height)
}

// viewDetail draws the open detail in height rows.
func (s *screens) viewDetail(env screen.Env, width, height int) string {
	if s.incoming.Request() != nil {
		return s.incoming.View(env, width, height)
	}
	if _, ok := env.Tracker.Get(s.detail.ID()); !ok {
		return s.list.Empty(env, width, height)
	}
	return s.detail.View(env, width, height)
}

// detailInput gives a key or the mouse wheel to the open detail (a
// request's, or a server request's); a key it leaves goes to the global
// keys.
func (m *Model) detailInput(msg tea.Msg) tea.Cmd {
	if m.screens.incoming.Request() != nil {
		var act screen.Action
		m.screens.incoming, act = m.screens.incoming.Update(m.env(), msg)
		return m.questionAction(msg, act)
	}
	var act screen.Action
	m.screens.detail, act = m.screens.detail.Update(m.env(), msg)
	if _, unused := act.(screen.Unused); unused {
		if k, ok := msg.(tea.KeyPressMsg); ok {
			return m.handleGlobalKey(k)
		}
		return nil
	}
	return m.detailAction(act)
}

// detailAction carries out what the detail asked.
func (m *Model) detailAction(act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case detail.ToggleWrap:
		m.setStatus(levelInfo, m.pager.toggleWrap())
	case screen.Run:
		return a.Cmd
	}
	return nil
}
