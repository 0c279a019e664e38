package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/ui/authview"
	"inflight/ui/list"
	"inflight/ui/screen"
	"inflight/wire"
)

// listFacts is what the list draws that only the root knows: the
// authorization's wait and its retries (the auth view's record), and what
// a proxy did to the host's requests (the feed's marks, feed_act.go).
type listFacts struct {
	auth authview.Model
	feed *proxyFeed
}

// AuthWaiting reports whether r waits for the authorization in progress.
func (f listFacts) AuthWaiting(r *session.Request) (time.Time, bool) {
	if !f.auth.Waiting(r) {
		return time.Time{}, false
	}
	since, _ := f.auth.Pending()
	return since, true
}

// AuthRetried reports whether request id was sent again with a new token.
func (f listFacts) AuthRetried(id wire.ID) bool { return f.auth.Retried(id) }

// HostAct is what the proxy said it did to r.
func (f listFacts) HostAct(r *session.Request) (list.HostAct, bool) { return f.feed.hostAct(r) }

// listInput is what the list needs besides the Env: the facts above, and
// the connection's state and tools for its empty screen.
func (s *screens) listInput(state connState, feed *proxyFeed, attach *Attach, redact func(string) string) list.Input {
	in := list.Input{Facts: listFacts{auth: s.auth, feed: feed}, Conn: list.Connected, Tools: len(s.composer.Tools()), Redact: redact}
	if attach != nil {
		in.Proxy = true
		if attach.InProcess {
			in.HostURL = attach.Proxy.Command
		}
	}
	switch state {
	case connConnecting:
		in.Conn = list.Connecting
	case connLost:
		in.Conn = list.Lost
	}
	for _, t := range s.composer.Tools() {
		in.SlowTool = in.SlowTool || t.Name == "slow"
	}
	return in
}

// listAction carries out what the list asked; a key it did not use goes
// to the global keys.
func (m *Model) listAction(msg tea.KeyPressMsg, act screen.Action) tea.Cmd {
	switch a := act.(type) {
	case screen.Unused:
		return m.handleGlobalKey(msg)
	case screen.Status:
		// screen.Level and statusLevel count the same levels alike.
		m.setStatus(statusLevel(a.Level), a.Text)
	case list.Open:
		m.screens.openRequest(&m.focus, a.ID, m.size.width, m.chrome().bodyHeight(m.size.height))
	case list.OpenIncoming:
		m.screens.openQuestion(&m.focus, a.Request, m.size.width)
	}
	return nil
}
