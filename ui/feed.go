package ui

import (
	"fmt"

	"inflight/event"
	"inflight/session"
	"inflight/source"
	"inflight/ui/screen"
	"inflight/wire"
)

// This file is how a proxy's stream feeds the view's tracker (`inflight
// attach NAME`). The proxy streams its trace (its events, each with the
// verdict of its tracker, then the state changes and violations that
// event caused); source.Attach rebuilds the events and what the proxy said
// besides, and the feed hands them to the view's own tracker in observe
// mode, the same Tracker.Observe the proxy's recorder calls. So the rows,
// states and flags are session's, decided once by one piece of code on
// the same events at the same times — and the feed checks that the view
// agrees: a message carries the proxy's verdict (late, crossed), a
// violation the proxy's flag, and any difference is counted and said
// (Disagreements). Streaming the proxy's events in a format of their own
// would have needed a second encoding of every event; the trace already is
// that encoding, and `attach --plain` and `replay` read the same lines.

// proxyFeed is what the view keeps of the proxy's stream besides its
// tracker: the flags each side raised, the disagreements, and what the
// proxy said it did to the host's requests (feed_act.go). Its methods take
// the tracker they feed and return what the root must do besides
// (feedNews): the feed holds no part of the root.
type proxyFeed struct {
	// historyCut: the proxy's history does not reach back to its start
	// (source.Proxy.HistoryCut).
	historyCut bool
	// redact replaces the secrets in an event's bytes before the tracker
	// keeps them; line makes text safe for the status line. They are the
	// root's own, so that the feed sanitises as the rest of the view does.
	redact func(*event.Event)
	line   func(string) string

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

// newProxyFeed returns the feed of a view on a proxy whose history may be
// cut, sanitising with the root's redact and line.
func newProxyFeed(historyCut bool, redact func(*event.Event), line func(string) string) proxyFeed {
	return proxyFeed{
		historyCut:      historyCut,
		redact:          redact,
		line:            line,
		localViolations: map[string]int{},
		proxyViolations: map[string]int{},
	}
}

// feedNews is what one of the proxy's items, or the end of its stream,
// means beyond the tracker: what the root carries out (screens.heedFeed).
type feedNews struct {
	// changes are what the tracker changed, in order: a request renamed
	// (what the root holds by its ID follows it), a request settled (a
	// status message about it goes).
	changes []session.Change
	// say is what to show on the status line (no Text: nothing). The line
	// shows one message, so it is the last one the item gave.
	say screen.Status
	// serverGone: the proxy streamed its server's end; ended: the proxy's
	// stream is over.
	serverGone, ended bool
}

// apply applies one of the proxy's items to t: what the proxy said
// besides its events, then the event, then what the event stands for in
// the proxy's tracker.
func (f *proxyFeed) apply(t *session.Tracker, it *source.Item) feedNews {
	var news feedNews
	switch in := it.Info.(type) {
	case source.TrackerState:
		// The proxy's tracker's; the view's made its own, which must be
		// the same where the proxy's says a request ended.
		if r, ok := t.Get(in.ID); ok && isFinalName(in.State) && in.State != r.State.String() {
			f.disagree(&news, fmt.Sprintf("#%s: the proxy says %s, this view %s", f.line(r.ID.String()), in.State, r.State))
		}
		return news
	case source.TrackerViolation:
		f.proxyViolation(&news, in.Code)
		return news
	case source.HostClosedStream:
		// The host closed its request's HTTP stream (proxy/http.go):
		// judged as the proxy judged it (Tracker.HostClosedStream).
		f.observed(&news, t.HostClosedStreamIn(in.ID, in.SessionID, in.At))
		return news
	case source.WindowOver:
		// The view's clock for the host's cancels is the proxy's: a late
		// window ends when the proxy's ended (its Due). The view's
		// tracker observes: its Due sends nothing.
		f.observed(&news, t.Due(in.At).Changes)
		return news
	case source.Reply:
		f.reply(&news, t, in)
		return news
	}
	if it.HasEvent() {
		f.event(&news, t, it)
	}
	switch in := it.Info.(type) {
	case source.HostGone:
		f.observed(&news, t.HostGone(in.At))
	case source.HostResumed:
		f.observed(&news, t.HostResumedIn(in.SessionID, in.At))
	case source.HostReopened:
		f.observed(&news, t.HostReopenedIn(in.SessionID, in.At))
	case source.HostEndedSession:
		f.observed(&news, t.HostEndedSession(in.SessionID, in.At))
	case source.UpstreamEnded:
		f.observed(&news, t.UpstreamStreamEndedIn(in.ID, in.SessionID, in.At))
	case source.Injected:
		f.noteAct(t, in)
	}
	return news
}

// end is the end of the proxy's stream: the flags the view raised are
// compared with the proxy's, now that both are all there.
func (f *proxyFeed) end() feedNews {
	news := feedNews{ended: true}
	for code, n := range f.localViolations {
		if p := f.proxyViolations[code]; n > p {
			f.disagree(&news, fmt.Sprintf("this view flagged %s %d times, the proxy %d", code, n, p))
		}
	}
	return news
}

// proxyViolation compares a flag the proxy raised with the view's.
func (f *proxyFeed) proxyViolation(news *feedNews, code string) {
	if f.historyCut && (code == session.ViolationUnknownResponseID || code == session.ViolationUnknownProgressToken ||
		code == session.ViolationHostCancelledUnknown) {
		// beforeHistory left such messages out: whether they named a
		// request of the cut part cannot be told.
		return
	}
	f.proxyViolations[code]++
	if f.localViolations[code] < f.proxyViolations[code] {
		f.disagree(news, fmt.Sprintf("the proxy flagged %s and this view did not", code))
		f.localViolations[code]++ // said once
	}
}

// event applies one of the proxy's events to t as its recorder did.
func (f *proxyFeed) event(news *feedNews, t *session.Tracker, it *source.Item) {
	ev := it.Event
	if ev.Kind == event.TransportClosed {
		news.serverGone = true
	}
	if f.beforeHistory(t, &ev) {
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
			if ch, err := t.RequestCancel(ev.RequestID, reason, session.CauseUser, ev.Time); err == nil {
				f.observed(news, []session.Change{ch})
			}
		}
	}
	f.redact(&ev)
	changes := t.Observe(ev)
	f.observed(news, changes)
	if ev.Kind == event.Received {
		if mine := session.Verdict(ev.Kind, changes); mine != it.Verdict {
			f.disagree(news, fmt.Sprintf("#%s: the proxy judged %q, this view %q", ev.RequestID, it.Verdict, mine))
		}
	}
}

// beforeHistory reports a server message about a request the view never
// saw begin, when the proxy's history was cut: the request most likely
// began in the part cut away, so the message is left out rather than
// flagged as naming no request.
func (f *proxyFeed) beforeHistory(t *session.Tracker, ev *event.Event) bool {
	if !f.historyCut {
		return false
	}
	if ev.Kind == event.Sent && ev.Msg.Method == wire.NotifyCancelled {
		// The host's cancel of a request of the cut part.
		c, err := wire.DecodeCancelled(ev.Msg.Params)
		if err != nil {
			return false
		}
		_, known := t.Get(c.RequestID)
		return !known
	}
	if ev.Kind != event.Received {
		return false
	}
	switch {
	case ev.Progress != nil:
		_, known := t.ByProgressToken(ev.Progress.Token)
		return !known
	case ev.Msg.IsResponse():
		_, known := t.Get(ev.RequestID)
		return !known
	}
	return false
}

// observed counts the view's flags among changes, says the host's faults
// that have no row of their own, and hands the changes to the root.
func (f *proxyFeed) observed(news *feedNews, changes []session.Change) {
	news.changes = append(news.changes, changes...)
	for _, ch := range changes {
		if ch.Kind != session.ChangeViolation {
			continue
		}
		v := ch.Violation
		f.localViolations[v.Code]++
		switch v.Code {
		case session.ViolationHostCancelledUnknown:
			news.say = warn("⚑ host cancelled an unknown ID (" + f.line(v.RequestID.String()) + ")")
		case session.ViolationHostCancelledInitialize:
			news.say = warn("⚑ host cancelled initialize (#" + f.line(v.RequestID.String()) + ")")
		case session.ViolationHostDuplicateID:
			news.say = warn("⚑ host reused request ID " + f.line(v.RequestID.String()))
		}
	}
}

// disagree records that the view judged a line otherwise than the proxy.
func (f *proxyFeed) disagree(news *feedNews, text string) {
	f.disagreements++
	f.lastDisagreement = text
	news.say = screen.Status{Level: screen.Error, Text: "this view disagrees with the proxy: " + f.line(text)}
}

// warn is a status message at the warning level.
func warn(text string) screen.Status { return screen.Status{Level: screen.Warn, Text: text} }

// isFinalName reports whether a trace's state name is a final state's.
func isFinalName(name string) bool {
	for s := session.StatePending; s.String() != "unknown"; s++ {
		if s.String() == name {
			return s.IsFinal()
		}
	}
	return false
}
