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
	r, params, ok := m.selectedToSendAgain()
	if !ok {
		return nil
	}
	m.focus.mode = keymap.ModeComposer
	// The composer says what is edited, in the form it fills: a status
	// line would outlive it.
	m.status = statusLine{}
	var act screen.Action
	m.screens.composer, act = m.screens.composer.Edit(m.env(), r, params)
	return m.composerDid(act)
}

// selectedToSendAgain is the selected request with the params it would be
// sent again with (r, E); its bytes gone from the store, that is said.
func (m *Model) selectedToSendAgain() (*session.Request, json.RawMessage, bool) {
	r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
	if !ok {
		return nil, nil, false
	}
	raw, ok := m.tracker.RawRequest(r.ID)
	if !ok {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: its bytes are no longer in the store; compose it again with n", r.ID))
		return nil, nil, false
	}
	return r, paramsForReissue(raw), true
}
