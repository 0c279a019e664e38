package ui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/wire"
)

// This file is the TUI on a running proxy (`inflight attach NAME`): a
// read-only view of the host's requests. What the proxy streams feeds the
// view's tracker through a proxyFeed (feed.go); the keys that differ on a
// proxy are a screen of their own (ui/attach, attachroute.go). What is
// here is the root's part: the view has no connection of its own, and it
// carries out what the feed says beyond the tracker.

// Attach makes the UI a view on a proxy instead of a client of a server;
// Options.Source is the proxy's stream (a source.Attach).
type Attach struct {
	// Proxy is what the proxy's hello said (its name, command, start).
	Proxy source.Proxy
	// Act, when set, asks the proxy to act on one of the host's requests
	// (the proxy said it takes commands; source.Attach.Act): it is called
	// from a tea.Cmd, and only writes the command: the proxy's reply comes
	// in the stream (source.Reply). nil: the view only watches.
	Act func(act string, id wire.ID, after time.Duration) error
	// InProcess: the view runs in the proxy's own process (inflight proxy
	// --url on a terminal), so quitting it stops the proxy.
	InProcess bool
}

// Disagreements reports how many of the proxy's verdicts and flags the view
// did not reach itself (0 when it agrees with the proxy on everything).
func (m *Model) Disagreements() int { return m.feed.disagreements }

// attaching reports whether the UI is a view on a proxy.
func (o Options) attaching() bool { return o.Attach != nil }

// initAttach starts pumping the proxy's stream.
func (m *Model) initAttach() tea.Cmd {
	m.conn.client = readOnlyConn{}
	m.conn.state = connUp
	m.conn.everConnected = true
	if m.opts.Attach.Proxy.HistoryCut {
		m.setStatus(levelInfo, "the proxy keeps only its latest "+historyWords+": requests begun before them are not shown")
	}
	// The model's own copy of the key map: q and ctrl+c only detach here
	// (or, in the proxy's own process, stop it).
	if m.opts.Attach.InProcess {
		m.keys.Quit.SetHelp("q", "stop proxy")
		m.keys.Interrupt.SetHelp("ctrl+c", "stop proxy")
	} else {
		m.keys.Quit.SetHelp("q", "detach")
		m.keys.Interrupt.SetHelp("ctrl+c", "detach")
	}
	return tea.Batch(tea.RequestBackgroundColor, m.conn.pump())
}

// historyWords names how much a proxy keeps for a viewer that attaches
// late (proxy/socket.go historyBytes).
const historyWords = "4 MiB of trace"

// heedFeed carries out what one of the proxy's items (or the end of its
// stream) means beyond the view's tracker, which the feed changed itself:
// the proxy's end and its server's go to the screen on the proxy; what
// the root holds by a request's ID (the selection, the open detail, the
// status line's request) follows a request the tracker renamed (its ID
// was used again by a later request of the host); a status message about
// a request that settled goes; and what the feed has to say is said.
//
// Done together after the item, these come out as when each was done in
// its turn: a message replaces the status line whole, and no rename or
// settling touches a message about no request, so only the feed's last
// message counts, said last; and the only tracker call before the one
// that can rename (observing the host's next request) is a cancel, which
// settles nothing.
func (s *screens) heedFeed(news feedNews, c *connection, st *statusLine, ended error, redact func(string) string, now time.Time) {
	if news.serverGone {
		s.attachv = s.attachv.ServerGone()
	}
	if news.ended {
		s.attachv = s.attachv.Ended(ended)
		c.state = connLost
	}
	for _, ch := range news.changes {
		if ch.Kind != session.ChangeRenamed {
			continue
		}
		s.list = s.list.Renamed(ch.Was, ch.ID)
		s.detail = s.detail.Renamed(ch.Was, ch.ID)
		if st.about == ch.Was {
			st.about = ch.ID
		}
	}
	st.settled(news.changes)
	if news.say.Text != "" {
		// screen.Level and statusLevel count the same levels alike.
		st.say(notice{level: statusLevel(news.say.Level), text: news.say.Text}, redact, now)
	}
}

// readOnlyConn is the connection of a view on a proxy: it has none. Any
// path that would still reach it gets an error, never a nil pointer.
type readOnlyConn struct{}

var errReadOnly = errors.New("this view only watches a proxy: it sends nothing")

func (readOnlyConn) Connect(context.Context) (event.ConnInfo, error) {
	return event.ConnInfo{}, errReadOnly
}
func (readOnlyConn) Send(context.Context, client.Request) error { return errReadOnly }
func (readOnlyConn) Cancel(wire.ID, string) (event.CancelSignal, error) {
	return event.SignalNone, errReadOnly
}
func (readOnlyConn) CancelAll([]wire.ID, string, time.Duration) {}
func (readOnlyConn) Events() <-chan event.Event                 { return nil }
func (readOnlyConn) Close() error                               { return nil }
