package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/wire"
)

// This file is the TUI on a running proxy (`inflight attach NAME`): a
// read-only view of the host's requests. The proxy streams its trace (its
// events, each with the verdict of its tracker, then the state changes and
// violations that event caused); source.Attach rebuilds the events and
// what the proxy said besides, and the view feeds them to its own tracker
// in observe mode, the same Tracker.Observe the proxy's recorder calls. So
// the rows, states and flags are session's, decided once by one piece of
// code on the same events at the same times — and the view checks that it
// agrees: a message carries the proxy's verdict (late, crossed), a
// violation the proxy's flag, and any difference is counted and said
// (Disagreements). Streaming the proxy's events in a format of their own
// would have needed a second encoding of every event; the trace already is
// that encoding, and `attach --plain` and `replay` read the same lines.

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

// attachState is what the view keeps of the proxy's stream.
type attachState struct {
	// localViolations and proxyViolations count the flags each side
	// raised, by code, to compare them.
	localViolations, proxyViolations map[string]int
	// disagreements counts the lines where the view judged otherwise than
	// the proxy; lastDisagreement says the latest.
	disagreements    int
	lastDisagreement string
	// acts are what the proxy said it did to the host's requests (its
	// injected lines); mine the requests this view's commands acted on.
	// Both are kept by the request the ID named when the line came, not
	// by the ID: a host that connects again uses its IDs again, and the
	// tracker renames the finished request (session/observe_reuse.go).
	acts map[*session.Request]*actMark
	mine map[*session.Request]bool
	// actsSwept is how many marks there were after the last sweep of
	// those of requests gone from the tracker's history (sweepActs).
	actsSwept int
}

// Disagreements reports how many of the proxy's verdicts and flags the view
// did not reach itself (0 when it agrees with the proxy on everything).
func (m *Model) Disagreements() int { return m.attach.disagreements }

// attaching reports whether the UI is a view on a proxy.
func (m *Model) attaching() bool { return m.opts.Attach != nil }

// initAttach starts pumping the proxy's stream.
func (m *Model) initAttach() tea.Cmd {
	m.conn.client = readOnlyConn{}
	m.conn.state = connUp
	m.conn.everConnected = true
	m.attach.localViolations = map[string]int{}
	m.attach.proxyViolations = map[string]int{}
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

// attachEnded is the end of the proxy's stream.
func (m *Model) attachEnded() {
	m.attachv = m.attachv.Ended(m.opts.Source.Err())
	m.conn.state = connLost
	m.checkViolationsAgree()
}

// applyItem applies one of the proxy's items to the view's tracker: what
// the proxy said besides its events, then the event, then what the event
// stands for in the proxy's tracker.
func (m *Model) applyItem(it *source.Item) {
	switch in := it.Info.(type) {
	case source.TrackerState:
		// The proxy's tracker's; the view's made its own, which must be
		// the same where the proxy's says a request ended.
		if r, ok := m.tracker.Get(in.ID); ok && isFinalName(in.State) && in.State != r.State.String() {
			m.disagree(fmt.Sprintf("#%s: the proxy says %s, this view %s", m.line(r.ID.String()), in.State, r.State))
		}
		return
	case source.TrackerViolation:
		m.proxyViolation(in.Code)
		return
	case source.HostClosedStream:
		// The host closed its request's HTTP stream (proxy/http.go):
		// judged as the proxy judged it (Tracker.HostClosedStream).
		m.observed(m.tracker.HostClosedStreamIn(in.ID, in.SessionID, in.At))
		return
	case source.WindowOver:
		// The view's clock for the host's cancels is the proxy's: a late
		// window ends when the proxy's ended (its Due). The view's
		// tracker observes: its Due sends nothing.
		m.observed(m.tracker.Due(in.At).Changes)
		return
	case source.Reply:
		m.attachReply(in)
		return
	}
	if it.HasEvent() {
		m.attachEvent(it)
	}
	switch in := it.Info.(type) {
	case source.HostGone:
		m.observed(m.tracker.HostGone(in.At))
	case source.HostResumed:
		m.observed(m.tracker.HostResumedIn(in.SessionID, in.At))
	case source.Injected:
		m.noteAct(in)
	}
}

// proxyViolation compares a flag the proxy raised with the view's.
func (m *Model) proxyViolation(code string) {
	if m.opts.Attach.Proxy.HistoryCut && (code == session.ViolationUnknownResponseID || code == session.ViolationUnknownProgressToken ||
		code == session.ViolationHostCancelledUnknown) {
		// beforeHistory left such messages out: whether they named a
		// request of the cut part cannot be told.
		return
	}
	m.attach.proxyViolations[code]++
	if m.attach.localViolations[code] < m.attach.proxyViolations[code] {
		m.disagree(fmt.Sprintf("the proxy flagged %s and this view did not", code))
		m.attach.localViolations[code]++ // said once
	}
}

// attachEvent applies one of the proxy's events as its recorder did.
func (m *Model) attachEvent(it *source.Item) {
	ev := it.Event
	if ev.Kind == event.TransportClosed {
		m.attachv = m.attachv.ServerGone()
	}
	if m.beforeHistory(&ev) {
		return
	}
	if it.ByProxy {
		// inflight's cancel upstream (a rule's, a key's): the recorder
		// follows it as the user's cancel, so the server's answer after it
		// is judged as after any. On stdio and legacy HTTP it is the
		// notifications/cancelled it sent; on modern HTTP, where it sends
		// none, the cancel_sent of the stream it closed.
		reason, inflightCancel := "", false
		switch {
		case ev.Kind == event.Sent && ev.Msg.Method == wire.NotifyCancelled:
			inflightCancel = true
			if c, err := wire.DecodeCancelled(ev.Msg.Params); err == nil {
				reason = c.Reason
			}
		case ev.Kind == event.CancelSent && ev.Signal == event.SignalStreamClosed:
			inflightCancel, reason = true, ev.Reason
		}
		if inflightCancel {
			if ch, err := m.tracker.RequestCancel(ev.RequestID, reason, session.CauseUser, ev.Time); err == nil {
				m.observed([]session.Change{ch})
			}
		}
	}
	changes := m.observe(ev)
	if ev.Kind == event.Received {
		if mine := session.Verdict(ev.Kind, changes); mine != it.Verdict {
			m.disagree(fmt.Sprintf("#%s: the proxy judged %q, this view %q", ev.RequestID, it.Verdict, mine))
		}
	}
}

// historyWords names how much a proxy keeps for a viewer that attaches
// late (proxy/socket.go historyBytes).
const historyWords = "4 MiB of trace"

// beforeHistory reports a server message about a request the view never
// saw begin, when the proxy's history was cut: the request most likely
// began in the part cut away, so the message is left out rather than
// flagged as naming no request.
func (m *Model) beforeHistory(ev *event.Event) bool {
	if !m.opts.Attach.Proxy.HistoryCut {
		return false
	}
	if ev.Kind == event.Sent && ev.Msg.Method == wire.NotifyCancelled {
		// The host's cancel of a request of the cut part.
		c, err := wire.DecodeCancelled(ev.Msg.Params)
		if err != nil {
			return false
		}
		_, known := m.tracker.Get(c.RequestID)
		return !known
	}
	if ev.Kind != event.Received {
		return false
	}
	switch {
	case ev.Progress != nil:
		_, known := m.tracker.ByProgressToken(ev.Progress.Token)
		return !known
	case ev.Msg.IsResponse():
		_, known := m.tracker.Get(ev.RequestID)
		return !known
	}
	return false
}

// observe applies ev as the proxy's recorder did, and returns its changes.
func (m *Model) observe(ev event.Event) []session.Change {
	redactEvent(m.opts.RedactBytes, &ev)
	changes := m.tracker.Observe(ev)
	m.observed(changes)
	return changes
}

// followRename keeps what the view holds by a request's ID with the
// request when the tracker renames it (its ID was used again by a later
// request of the host): the selection, the open detail, the status line's
// request and the cached result summary stay the earlier request's.
func (m *Model) followRename(was, now wire.ID) {
	m.list = m.list.Renamed(was, now)
	m.detail = m.detail.Renamed(was, now)
	if m.status.about == was {
		m.status.about = now
	}
}

// observed counts the view's flags, says the host's faults that have no
// row of their own on the status line, and clears a settled status.
func (m *Model) observed(changes []session.Change) {
	for _, ch := range changes {
		if ch.Kind == session.ChangeRenamed {
			m.followRename(ch.Was, ch.ID)
			continue
		}
		if ch.Kind != session.ChangeViolation {
			continue
		}
		v := ch.Violation
		m.attach.localViolations[v.Code]++
		switch v.Code {
		case session.ViolationHostCancelledUnknown:
			m.setStatus(levelWarn, "⚑ host cancelled an unknown ID ("+m.line(v.RequestID.String())+")")
		case session.ViolationHostCancelledInitialize:
			m.setStatus(levelWarn, "⚑ host cancelled initialize (#"+m.line(v.RequestID.String())+")")
		case session.ViolationHostDuplicateID:
			m.setStatus(levelWarn, "⚑ host reused request ID "+m.line(v.RequestID.String()))
		}
	}
	m.status.settled(changes)
}

// disagree records that the view judged a line otherwise than the proxy.
func (m *Model) disagree(text string) {
	m.attach.disagreements++
	m.attach.lastDisagreement = text
	m.setStatus(levelError, "this view disagrees with the proxy: "+m.line(text))
}

// checkViolationsAgree compares, once the stream is over, the flags the
// view raised with the proxy's.
func (m *Model) checkViolationsAgree() {
	for code, n := range m.attach.localViolations {
		if p := m.attach.proxyViolations[code]; n > p {
			m.disagree(fmt.Sprintf("this view flagged %s %d times, the proxy %d", code, n, p))
		}
	}
}

// isFinalName reports whether a trace's state name is a final state's.
func isFinalName(name string) bool {
	for s := session.StatePending; s.String() != "unknown"; s++ {
		if s.String() == name {
			return s.IsFinal()
		}
	}
	return false
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
