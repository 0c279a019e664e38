package session

import (
	"time"

	"inflight/event"
	"inflight/wire"
)

// ViolationHostClosedStreamLegacy: on legacy Streamable HTTP the host closed
// a request's response stream without sending notifications/cancelled.
// There, "disconnection SHOULD NOT be interpreted as the client cancelling
// its request": the server was never told, and may answer on a resumed
// stream.
const ViolationHostClosedStreamLegacy = "host_closed_stream_legacy"

// HostClosedStream records that the host closed the HTTP response stream
// of its request id at now, before that stream ended. In the modern era
// closing a request's stream is its cancel, so the request is cancelled by
// the host with that signal (and, the stream being gone, nothing more can
// arrive for it on the wire: it settles at once, as inflight's own modern
// cancel does); a notifications/cancelled the host sent with it changes
// nothing of that but the cancel's time, the earlier of the two. In the
// legacy era it is not a cancel: the request stays in flight and the host
// is flagged, unless it sent notifications/cancelled (the proxy reports a
// closure CancelGrace late so that a cancel posted with it is seen first).
// A request already over changes nothing; nor does an unknown era (nothing
// said yet which rule applies).
func (t *Tracker) HostClosedStream(id wire.ID, now time.Time) []Change {
	return t.HostClosedStreamIn(id, "", now)
}

// HostClosedStreamIn is HostClosedStream for a stream of the host's HTTP
// session sessionID: a request of another session with that ID is not the
// one closed ("": a session not known).
func (t *Tracker) HostClosedStreamIn(id wire.ID, sessionID string, now time.Time) []Change {
	t.changes.reset()
	r := t.byID[id]
	if r == nil || !r.ByHost || !r.State.IsActive() {
		return t.changes.buf
	}
	if sessionID != "" && r.hostSession != "" && sessionID != r.hostSession {
		return t.changes.buf
	}
	era := event.EraLegacy // its own era (a proxy may see hosts of either)
	if t.modernFor(r) {
		era = event.EraModern
	}
	switch era {
	case event.EraModern:
		if r.State == StateCancelRequested {
			if r.Cancel == nil || r.Cancel.Cause != CauseHost {
				return t.changes.buf
			}
			// The host also sent notifications/cancelled (go-sdk's client
			// does), "not required or expected" here: the closure is the
			// signal, and the earlier of the two the cancel's time.
			if now.Before(r.Cancel.At) {
				r.Cancel.At = now
			}
			now = r.Cancel.At
		} else {
			t.beginCancel(r, "the host closed the stream", CauseHost, now)
			t.hostGaveUp(r, "closed the stream of", "", now, &event.Event{Kind: event.StreamClosed, Time: now, RequestID: r.ID, ByClient: true})
		}
		r.Cancel.Signal = event.SignalStreamClosed
		r.Cancel.SignalAt = now
		r.Cancel.SignalStreamEnd = 0
		t.settle(r, now)
	case event.EraLegacy:
		if r.State == StateCancelRequested || r.Method == wire.MethodInitialize {
			return t.changes.buf
		}
		// A host whose network broke resumes the stream (GET with
		// Last-Event-ID), and the answer comes on the resumed one: only a
		// host that resumes nothing in the wait gave up on it. Due
		// judges it then.
		if at, ok := t.hostResumes[r.hostSession]; ok && !at.Before(now) {
			// The host resumed a stream at or after this closure, seen
			// first: the proxy reports a closure CancelGrace late.
			return t.changes.buf
		}
		a := r.side()
		a.hostClosedAt, a.hostResumeBy = now, now.Add(t.resumeWait(r))
	}
	return t.changes.buf
}

// resumeWait is how long after a legacy host closed a request's stream
// the tracker waits for it to resume one before flagging the closure: the
// request's late window, the watch after a cancel.
func (t *Tracker) resumeWait(r *Request) time.Duration {
	if r.LateWindow > 0 {
		return r.LateWindow
	}
	if t.cfg.LateWindow > 0 {
		return t.cfg.LateWindow
	}
	return DefaultLateWindow
}

// HostResumed records that the host resumed a stream at now (on legacy
// HTTP, a GET with Last-Event-ID): the closures it left waiting are a
// broken connection it recovered from, not a request given up. (Which
// stream a resumption continues is the server's secret, in its event IDs:
// any resumption clears every closure waiting.)
func (t *Tracker) HostResumed(now time.Time) []Change { return t.HostResumedIn("", now) }

// HostResumedIn is HostResumed for the host session sessionID: it clears
// that session's closures (and those of no known session); "" clears
// every one.
func (t *Tracker) HostResumedIn(sessionID string, now time.Time) []Change {
	t.changes.reset()
	if t.hostResumes == nil || len(t.hostResumes) >= maxHostSessions {
		t.hostResumes = map[string]time.Time{}
	}
	t.hostResumes[sessionID] = now
	for _, r := range t.active {
		a := r.peek()
		if a.hostResumeBy.IsZero() || !now.Before(a.hostResumeBy) || otherSession(sessionID, r.hostSession) {
			continue
		}
		a = r.side() // not the shared zero: the guard above passed
		a.hostClosedAt, a.hostResumeBy, a.streamDropped = time.Time{}, time.Time{}, false
	}
	return t.changes.buf
}

// hostResumeDue flags r, at now, when the wait for the host to resume the
// stream it closed is over (Due).
func (t *Tracker) hostResumeDue(r *Request, now time.Time) {
	a := r.peek()
	if a.hostResumeBy.IsZero() || now.Before(a.hostResumeBy) {
		return
	}
	closed := a.hostClosedAt
	a = r.side() // not the shared zero: the guard above passed
	a.hostClosedAt, a.hostResumeBy = time.Time{}, time.Time{}
	if a.streamDropped {
		a.streamDropped = false
		ev := event.Event{Time: now, RequestID: r.ID}
		t.violate(ViolationHostNoResume, "the server's stream of "+describeReq(r)+" ended before its answer, and the host did not resume it (a GET with Last-Event-ID) in the "+
			secs(now.Sub(closed))+" watched: the answer can no longer reach it", r, r.ID, &ev)
		return
	}
	ev := event.Event{Kind: event.StreamClosed, Time: closed, RequestID: r.ID, ByClient: true}
	t.violate(ViolationHostClosedStreamLegacy, "the host closed the stream of "+r.Method+" "+r.ID.String()+
		" on legacy HTTP without notifications/cancelled, which is not a cancel there, and resumed no stream in the "+
		t.resumeWait(r).String()+" watched: the server was not told", r, r.ID, &ev)
}
