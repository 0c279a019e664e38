package ui

import (
	"encoding/json"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/screen"
)

// edit opens the selected request in the composer, its method, arguments
// and settings filled in, to change and send as a new request (r sends it
// again as it is).
func (m *Model) edit() tea.Cmd {
	r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
	if !ok {
		return nil
	}
	params, n, ok := sendAgain(m.tracker, r)
	if !ok {
		m.status.say(n, m.opts.Redact, m.opts.moment())
		return nil
	}
	m.focus.mode = keymap.ModeComposer
	// The composer says what is edited, in the form it fills: a status
	// line would outlive it.
	m.status.clear()
	var act screen.Action
	m.screens.composer, act = m.screens.composer.Edit(m.env(), r, params)
	return m.composerDid(act)
}

// sendAgain is the params request r would be sent again with (r, E);
// its bytes gone from the store, the notice says so and ok is false.
func sendAgain(t *session.Tracker, r *session.Request) (params json.RawMessage, n notice, ok bool) {
	raw, ok := t.RawRequest(r.ID)
	if !ok {
		return nil, notice{level: levelWarn, text: fmt.Sprintf("#%s: its bytes are no longer in the store; compose it again with n", r.ID)}, false
	}
	return paramsForReissue(raw), notice{}, true
}
