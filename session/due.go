package session

import "time"

// Due is what the tracker has due at one instant, as values for the
// caller to carry out: the TUI, the headless runner and a proxy's
// recorder all drive the tracker through Tracker.Due, and none of them
// decides for itself what a deadline means.
type Due struct {
	// Changes is every transition the deadlines made: timeouts moved to
	// cancel_requested, cancels whose late window passed settled, a host's
	// closed stream judged once its wait for a resumption was over. The
	// slice is the tracker's and is reused by its next call: read it (or
	// copy it) before anything else is applied.
	Changes []Change
	// Cancels are the requests to cancel with their transport's signal,
	// oldest first: timeouts, and a task's listen to close. A task's own
	// timeout is not among them: its cancel is the tasks/cancel in
	// Requests. An initialize that timed out is never cancelled (it is in
	// Changes, as timed_out).
	Cancels []Expiry
	// Requests are the task requests begun (tasks/get polls, tasks/result,
	// tasks/cancel, subscriptions/listen), each an ordinary tracked
	// request to send with its Method and ChildParams and no progress
	// token.
	Requests []*Request
	// Next is the nearest instant at which Due will have something to do
	// (NextDeadline), zero when nothing is scheduled.
	Next time.Time
}

// Due applies every deadline that has passed at now and says what must be
// sent for it: first the deadlines (expire), then the task requests that
// are due (taskRequests), so that a task whose timeout expired has its
// tasks/cancel begun in the same call. Calling it again at the same now
// finds nothing new.
//
// A tracker that observes a proxy's traffic (Observe) sends nothing: the
// requests are the host's, and so are their cancels and their tasks'
// polls. Its Due has no Cancels and no Requests, only the Changes (a
// late window over, a closed stream judged) and Next.
//
// The end of a legacy HTTP request's late window, when the client stops
// reading its response stream, is not here: the client closes that stream
// itself, from the request's own late window (Request.LateWindow, which
// the caller passes on), because the stream is the transport's and must
// close even when nobody drives the tracker (a request the client sent
// for itself, a run that stopped waiting).
func (t *Tracker) Due(now time.Time) Due {
	expired, changes := t.expire(now)
	var d Due
	if !t.observing {
		d.Cancels = expired[:0]
		for _, x := range expired {
			if !x.task {
				d.Cancels = append(d.Cancels, x)
			}
		}
		if len(d.Cancels) == 0 {
			d.Cancels = nil
		}
		// The caller still looks up the requests Changes names (a trace
		// writes their lines): beginning the task requests must not evict
		// one, so history may pass its limit by these few until the next
		// Begin or event evicts.
		t.holdEvict = true
		d.Requests = t.taskRequests(now)
		t.holdEvict = false
	}
	d.Changes = changes
	if next, ok := t.NextDeadline(); ok {
		d.Next = next
	}
	return d
}
