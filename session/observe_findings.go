package session

import (
	"fmt"
	"strings"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Host findings: what a proxy sees the host do to its own requests that
// many hosts get wrong — giving up on a request while its progress flows
// (a timeout that progress does not reset), walking away without a
// cancel, not resuming a dropped stream, giving up while the server's
// question waits for it, answering a question never asked. Each says what
// was observed and for how long, never more: a host's timeout is named
// only when its own cancel's reason says timeout. They are kept with the
// violations (codes host_…), so they reach the rows, the detail, the
// trace and the attach view as every verdict does.
const (
	// ViolationHostCancelledWhileProgressing: the host cancelled (or,
	// modern HTTP, closed the stream of) a request whose progress was
	// arriving.
	ViolationHostCancelledWhileProgressing = "host_cancelled_while_progressing"
	// ViolationHostResumedWithoutLastEventID: on legacy HTTP the server's
	// stream of an unanswered request ended, and the host opened a GET
	// stream without Last-Event-ID: what the server sent meanwhile is not
	// replayed.
	ViolationHostResumedWithoutLastEventID = "host_resumed_without_last_event_id"
	// ViolationHostNoResume: on legacy HTTP the server's stream of an
	// unanswered request ended, and the host did not resume it in the
	// time watched.
	ViolationHostNoResume = "host_no_resume"
	// ViolationHostTimeoutDuringQuestion: the host gave up on a request
	// (cancelled or abandoned it) while the server's question tied to it
	// (elicitation, sampling, roots) still waited for the host's answer.
	ViolationHostTimeoutDuringQuestion = "host_timeout_during_question"
	// ViolationHostAnsweredUnknownID: the host answered a server request
	// ID the server never sent, or one it had answered already.
	ViolationHostAnsweredUnknownID = "host_answered_unknown_id"
	// ViolationHostCancelledAnswered: the host cancelled a request whose
	// answer had passed to it longer ago than the crossing window (a
	// cancel within it crossed the answer, which the spec expects).
	ViolationHostCancelledAnswered = "host_cancelled_answered"
)

// maxHostQuestions bounds the server's requests to the host followed.
const maxHostQuestions = 1024

// hostQuestion is a request the server sent the host, waiting for its
// answer (a proxy's tracker).
type hostQuestion struct {
	method string
	at     time.Time
	during wire.ID // the host request it is tied to (zero: none)
}

// observeQuestion follows a request the server sent the host: tied to the
// host request whose stream carried it (ev.Owner), or the only one in
// flight.
func (t *Tracker) observeQuestion(ev *event.Event) {
	if ev.Msg.Method == wire.MethodPing {
		return
	}
	if t.hostQuestions == nil || len(t.hostQuestions) >= maxHostQuestions {
		t.hostQuestions = map[wire.ID]hostQuestion{} // bounded: the oldest go
	}
	q := hostQuestion{method: clip(ev.Msg.Method, 64), at: ev.Time}
	switch {
	case !ev.Owner.IsZero():
		q.during = ev.Owner
	default:
		if r := t.onlyHostInFlight(); r != nil {
			q.during = r.ID
		}
	}
	t.hostQuestions[ev.Msg.ID] = q
	delete(t.hostAnswered, ev.Msg.ID)
}

// onlyHostInFlight is the one host request in flight, or nil when there
// are none or several (a question on stdio could then be any one's).
func (t *Tracker) onlyHostInFlight() *Request {
	var only *Request
	for _, r := range t.active {
		if !r.ByHost || r.listen || r.State == StateCancelRequested {
			continue
		}
		if only != nil {
			return nil
		}
		only = r
	}
	return only
}

// observeAnswer judges the host's answer to a server request.
func (t *Tracker) observeAnswer(ev *event.Event) {
	id := ev.Msg.ID
	if _, ok := t.hostQuestions[id]; ok {
		delete(t.hostQuestions, id)
		if t.hostAnswered == nil || len(t.hostAnswered) >= maxHostQuestions {
			t.hostAnswered = map[wire.ID]struct{}{}
		}
		t.hostAnswered[id] = struct{}{}
		return
	}
	if !t.questionsSeen {
		// Nothing the server asked was seen (the proxy's record may have
		// begun late): an answer proves nothing.
		return
	}
	what := "an ID the server sent no request with"
	if _, ok := t.hostAnswered[id]; ok {
		what = "a request it had answered already"
	}
	t.violate(ViolationHostAnsweredUnknownID, "the host answered "+id.String()+", "+what, nil, id, ev)
}

// hostGaveUp adds the findings of the host leaving r at `at` (how says
// how: "cancelled", with its cancel's reason; "closed the stream of";
// "stopped waiting for"): progress that was arriving, and a question of
// the server's still waiting for it. A finding says what the host did and
// its reason, as observed: it speaks of a timeout only when that reason
// does.
func (t *Tracker) hostGaveUp(r *Request, how, reason string, at time.Time, ev *event.Event) {
	timedOut := saysTimeout(reason)
	what := "the host " + how + " " + describeReq(r)
	if timedOut {
		what = "the host gave up on " + describeReq(r)
	}
	if reason != "" {
		what += " (reason " + strqQuote(reason) + ")"
	}
	// Progress arriving: two notifications at least, so that there is a
	// spacing to say (one is a start, not a flow).
	if p := r.Progress; p.Count > 1 && !p.Last.After(at) {
		detail := fmt.Sprintf("%s after %d progress notifications, %s apart", what, p.Count,
			secs(p.Last.Sub(p.First)/time.Duration(p.Count-1)))
		detail += ", the last " + secs(at.Sub(p.Last)) + " before it"
		if timedOut {
			detail += "; the reason says timeout: its timeout was not reset by progress"
		}
		t.violate(ViolationHostCancelledWhileProgressing, detail, r, r.ID, ev)
	}
	for id, q := range t.hostQuestions {
		if q.during != r.ID {
			continue
		}
		t.violate(ViolationHostTimeoutDuringQuestion, fmt.Sprintf("%s while the server's %s (id %s) tied to it had waited %s for the host's answer",
			what, q.method, id.String(), secs(at.Sub(q.at))), r, r.ID, ev)
	}
}

// hostCancelledAnswered judges the host's cancel of r, which the server
// answered already: within the crossing window of the answer's passing
// the cancel crossed it (expected); later the host had its answer.
func (t *Tracker) hostCancelledAnswered(r *Request, ev *event.Event) {
	if !r.responded || r.Ended.IsZero() || r.Cancel != nil {
		return
	}
	after := ev.Time.Sub(r.Ended)
	if after <= t.CrossingWindow() {
		return
	}
	t.violate(ViolationHostCancelledAnswered, "the host cancelled "+describeReq(r)+" "+secs(after)+
		" after the server's answer to it had passed (the crossing window is "+secs(t.CrossingWindow())+")", r, r.ID, ev)
}

// hostAbandoned flags r, which the host stopped waiting for without a
// cancel (how says how), and what it left waiting.
func (t *Tracker) hostAbandoned(r *Request, how string, ev *event.Event) {
	r.side().abandonedAt = ev.Time
	t.violate(ViolationHostAbandoned, "the host "+how+" with "+r.Method+" "+r.ID.String()+
		" in flight and sent no cancel for it", r, r.ID, ev)
	t.hostGaveUp(r, "stopped waiting for", "", ev.Time, ev)
}

// abandonable reports whether r is a host request a host that goes away
// leaves without its cancel.
func abandonable(r *Request) bool {
	return r.ByHost && r.State.IsActive() && r.State != StateCancelRequested && r.Method != wire.MethodInitialize
}

// HostEndedSession records that the host ended its HTTP session
// sessionID at now (DELETE): the requests of it still in flight are
// abandoned.
func (t *Tracker) HostEndedSession(sessionID string, now time.Time) []Change {
	t.changes.reset()
	ev := event.Event{Time: now, SessionID: sessionID}
	for _, r := range t.hist {
		if abandonable(r) && r.hostSession == sessionID {
			t.hostAbandoned(r, "ended its HTTP session (DELETE)", &ev)
		}
	}
	return t.changes.buf
}

// serverWorkedOn says, when the server answers a request the host
// abandoned, how long it worked on after.
func (t *Tracker) serverWorkedOn(r *Request, ev *event.Event) {
	abandoned := r.peek().abandonedAt
	if abandoned.IsZero() || !r.ByHost {
		return
	}
	t.log.append(&event.Event{Kind: event.Note, Time: ev.Time, RequestID: r.ID,
		Text: "the server answered " + r.Method + " " + r.ID.String() + " " + secs(ev.Time.Sub(abandoned)) + " after the host abandoned it"})
	r.side().abandonedAt = time.Time{}
}

// UpstreamStreamEndedIn records that on legacy HTTP the server's response
// stream of the host's request id (in sessionID) ended at now before it
// carried the answer: the host is watched for resuming it (a GET with
// Last-Event-ID) for the request's late window.
func (t *Tracker) UpstreamStreamEndedIn(id wire.ID, sessionID string, now time.Time) []Change {
	t.changes.reset()
	r := t.byID[id]
	if r == nil || !abandonable(r) || t.modernFor(r) || otherSession(sessionID, r.hostSession) {
		return t.changes.buf
	}
	if !r.peek().abandonedAt.IsZero() {
		// The host walked away from it (ended its session): a stream that
		// ends after is the server's closing of it, nothing to resume.
		return t.changes.buf
	}
	a := r.side()
	a.hostClosedAt, a.hostResumeBy, a.streamDropped = now, now.Add(t.resumeWait(r)), true
	return t.changes.buf
}

// HostReopenedIn records that the host opened a GET stream without
// Last-Event-ID in sessionID at now: a dropped stream it reopens so
// resumes nothing.
func (t *Tracker) HostReopenedIn(sessionID string, now time.Time) []Change {
	t.changes.reset()
	ev := event.Event{Time: now, SessionID: sessionID}
	for _, r := range t.active {
		a := r.peek()
		if !a.streamDropped || a.hostResumeBy.IsZero() || otherSession(sessionID, r.hostSession) {
			continue
		}
		dropped := a.hostClosedAt
		a = r.side() // not the shared zero: the guard above passed
		a.hostClosedAt, a.hostResumeBy, a.streamDropped = time.Time{}, time.Time{}, false
		t.violate(ViolationHostResumedWithoutLastEventID, "the server's stream of "+describeReq(r)+" ended before its answer, and "+
			secs(now.Sub(dropped))+" later the host opened a stream without Last-Event-ID: what the server sent meanwhile is not replayed", r, r.ID, &ev)
	}
	return t.changes.buf
}

func describeReq(r *Request) string {
	s := r.Method
	if r.Target != "" {
		s += " " + r.Target
	}
	return s + " (id " + r.ID.String() + ")"
}

func saysTimeout(reason string) bool {
	l := strings.ToLower(reason)
	return strings.Contains(l, "timed out") || strings.Contains(l, "timeout") || strings.Contains(l, "time out")
}

// secs says a duration as a finding does, in the UI's style: "0.4s",
// "14ms".
func secs(d time.Duration) string {
	if d < 100*time.Millisecond {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func strqQuote(s string) string { return "“" + clip(s, 80) + "”" }
