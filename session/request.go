package session

import (
	"encoding/json"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Request is one request the user sent, from intent to fate. The tracker
// hands out pointers so the UI can read without copying; callers must not
// modify a Request, and must not keep one across Apply calls expecting it
// to stay unchanged.
//
// A finished Request is kept small (well under 2 KB, measured by
// TestFinishedRequestFootprint) because history holds thousands of them;
// the exact bytes on the wire live in the tracker's bounded raw store.
type Request struct {
	// ID is the JSON-RPC ID, an integer the tracker allocated (never reused).
	ID wire.ID
	// Method is the JSON-RPC method.
	Method string
	// Target is what the request acts on (tool or prompt name, resource
	// URI), "" when the method has none. It came from the user's params.
	Target string
	// ProgressToken is the _meta.progressToken sent with the request. It is
	// the same integer as ID, which makes it unique among active requests
	// by construction — except for a host's request (ByHost), whose token
	// is whatever the host chose (zero when it asked for no progress).
	ProgressToken wire.ID

	// State is where the request is in its life.
	State State
	// ByHost marks a request a host sent through `inflight proxy`
	// (Tracker.Observe): its ID and token are the host's, it has no
	// deadline (its timeout is the host's business), and its cancel is the
	// host's (CauseHost).
	ByHost bool
	// ToolError is set when a tools/call result carried "isError": true;
	// the request is then failed although the server answered normally.
	ToolError bool
	// Acked is set when the server acknowledged a subscriptions/listen.
	Acked bool
	// Role says which of a task's own requests this is (see Parent).
	Role TaskRole
	// The one-byte fields are side by side, the private ones among them,
	// so that they share one word: a history holds thousands of records.
	responded bool // a response (timely or late) arrived
	flagged   bool // counted in Counts.Flagged
	listen    bool // Method is subscriptions/listen

	// Created is when Begin was called; timeouts count from here so that
	// time spent getting the request onto the wire counts against it.
	Created time.Time
	// Sent is when the client wrote the request (zero until EventSent).
	Sent time.Time
	// Ended is when the state became final (zero while active).
	Ended time.Time

	// Progress is what the server reported, ignoring progress after a cancel.
	Progress Progress
	// Timeline holds at most TimelineSamples progress samples, evenly
	// decimated by arrival order, for the detail view's timeline bar.
	Timeline []ProgressSample

	// Timeout is the request's timeout policy and current deadlines.
	Timeout Timeout
	// Cancel is set once a cancellation was requested (nil otherwise).
	Cancel *Cancel
	// Late records traffic that arrived after the request was given up.
	Late Late

	// Error is the JSON-RPC error of the response (timely or late; Late
	// says which), with long message and data clipped.
	Error *wire.Error
	// LocalError explains a failure the client saw rather than the server
	// reported (HTTP error, lost connection, invalid result).
	LocalError string

	// Notifications counts notifications delivered on this subscription
	// (excluding the acknowledgment and late ones).
	Notifications int
	// LastNotificationAt is when the last of them arrived.
	LastNotificationAt time.Time

	// Violations counts protocol violations attributed to this request; the
	// details are in the tracker's violation log.
	Violations int

	// Task is set once the server answered with a task handle (also when
	// the handle came after a cancel): the task's status, polls and cancel.
	Task *Task
	// Parent is the task request a tasks/get, tasks/result or tasks/cancel
	// belongs to (zero for every other request); Role says which it is.
	// Such requests are the task's, not the user's: views show them in
	// the task's timeline, not as rows of their own.
	Parent wire.ID
	// ChildParams are the params a task's own request is sent with (nil
	// for every other request, whose params are the caller's).
	ChildParams json.RawMessage

	// Conv is what passed between the server and the user around the
	// request (rounds, the server's own requests, log lines); nil when
	// nothing did (rounds.go).
	Conv *Conversation

	// LateWindow is how long after its cancel this request waits for news
	// before it settles (Config.LateWindow unless the request set its own).
	LateWindow time.Duration

	// PausedFor is how long its timeout was paused, all told, while the
	// server's questions tied to it waited for the user (pause.go); a
	// pause still running is not in it yet.
	PausedFor time.Duration

	seq int64 // ID as an integer: history is sorted by it
	// activePos is the index in the tracker's active set, -1 when final;
	// a timeline sample is kept every stride progress notifications.
	activePos, stride int32
	// logProgress counts the progress entries logged one by one (then
	// they are merged into one, aside.coalesceAt).
	logProgress int32
	// hostModern: a host's request that carried a modern protocol
	// version in its _meta (a proxy may see hosts of either era).
	hostModern bool
	// taskDeclared: the request, as sent, told the server the client
	// takes a task for it (legacy: a task member; modern: the extension in
	// its clientCapabilities).
	taskDeclared bool
	// closeDue: a task's listen to close at the next Due (its task
	// ended, or the server offers no notifications for it).
	closeDue bool
	// tokenTaken: a later host request took this one's progress token,
	// which is also this one's ID (byToken then names the later one).
	tokenTaken bool
	// hostSession is the host's HTTP session the request came in ("":
	// none known).
	hostSession string
	// aside holds what few requests ever need (nil until one does): a
	// finished request in history costs its record and little else.
	aside *requestAside
}

// requestAside is the part of a request that only some requests need, and
// mostly only while in flight: a host's closed stream, a pause for the
// user, a flood of progress, a late response's log entry.
type requestAside struct {
	// resumed: its HTTP response stream was resumed with Last-Event-ID
	// (streams.go).
	resumed bool
	// hostClosedAt: on legacy HTTP the host closed this request's stream
	// without a cancel; it is flagged unless the host resumes a stream
	// by hostResumeBy (observe_http.go).
	hostClosedAt, hostResumeBy time.Time
	// abandonedAt is when the host went without cancelling it.
	abandonedAt time.Time
	// asking counts the server's questions tied to the request that still
	// wait for the user; while there are any its timeout is paused, since
	// pausedAt.
	pausedAt time.Time
	asking   int32
	// streamDropped: the wait above is for the host to resume a stream
	// the server ended before its answer (observe_findings.go).
	streamDropped bool
	// coalesceAt is the log position (ProtocolLog.Total after its append)
	// of the entry a request's later progress is merged into, 0 before
	// there is one; lateLogAt that of the late (or crossed) response's
	// entry, so that a later judgement of it relabels the entry too.
	coalesceAt, lateLogAt int64
}

// noAside is what a request without its aside reads.
var noAside requestAside

// side returns the request's aside, made on first use: for writing.
func (r *Request) side() *requestAside {
	if r.aside == nil {
		r.aside = new(requestAside)
	}
	return r.aside
}

// peek returns the request's aside for reading, never nil; it must not be
// written through (side is for that).
func (r *Request) peek() *requestAside {
	if r.aside == nil {
		return &noAside
	}
	return r.aside
}

// TimelineSamples bounds Request.Timeline.
const TimelineSamples = 32

// Progress is the latest progress the server reported for a request.
type Progress struct {
	// Count is the number of progress notifications applied.
	Count int
	// Value and Total are the last reported values; HasTotal says whether the
	// last notification carried a total.
	Value    float64
	Total    float64
	HasTotal bool
	// Message is the last message (clipped; raw, sanitise before display).
	Message string
	// First and Last are the arrival times of the first and last progress.
	First, Last time.Time
}

// ProgressSample is one point of the progress timeline.
type ProgressSample struct {
	// At is the time since the request was created.
	At time.Duration
	// Value and Total are as reported; Total is 0 when unknown.
	Value float64
	Total float64
}

// Timeout is a request's timeout policy and its deadlines. Deadlines are
// points in time, not timers: the caller schedules one tick to the nearest
// (Tracker.NextDeadline) and calls Tracker.Due.
type Timeout struct {
	// Timeout is the per-request timeout.
	Timeout time.Duration
	// Asked is the timeout the request began with, before any
	// AdjustTimeout: what a re-issue of it asks for again.
	Asked time.Duration
	// Max is the limit nothing pushes back.
	Max time.Duration
	// ResetOnProgress says whether progress pushes Deadline back.
	ResetOnProgress bool
	// Deadline is when the timeout expires (last progress or creation plus
	// Timeout).
	Deadline time.Time
	// MaxDeadline is creation plus Max.
	MaxDeadline time.Time
}

// Cancel describes a requested cancellation.
type Cancel struct {
	// At is when the cancellation was requested.
	At time.Time
	// SettleBy is when the tracker takes the cancel as settled if nothing
	// tells it sooner (At plus the late window).
	SettleBy time.Time
	// Signal is what the client sent (SignalNone until EventCancelSent).
	Signal event.CancelSignal
	// SignalAt is when the client sent it (when its write or POST began).
	SignalAt time.Time
	// SignalStreamEnd is how many bytes the server had written to its
	// stdout when the signal left (0: unknown): whatever ends within them
	// was sent before the cancel, and crossed it, whenever it is read.
	SignalStreamEnd int64
	// Reason is the reason given to the server.
	Reason string
	// Cause says who or what cancelled.
	Cause CancelCause
	// Limit says which limit expired when Cause is CauseTimeout.
	Limit Limit
	// Failed says why the cancel signal could not be sent ("" when it was,
	// or is still on its way); the server may never have learnt of it.
	Failed string
}

// Late is traffic that arrived after the request was given up (a cancel was
// requested, or the connection was lost). It is data, not an error: it is
// recorded and shown, and never changes the request's state.
type Late struct {
	// Response is set when a response arrived after the cancel (or after the
	// request was lost or failed locally).
	Response bool
	// Crossed says the response may have been sent before the server saw
	// the cancel: it arrived before the cancel's signal left, or within the
	// crossing window after it did (Tracker.CrossingWindow: half the
	// measured round trip plus the grace). A response that did not cross came after
	// the server could have seen the cancel: it is late, and flagged.
	Crossed bool
	// ResponseAt is when it arrived; ResponseStreamEnd where it ended in
	// the server's stdout (0: unknown).
	ResponseAt        time.Time
	ResponseStreamEnd int64
	// AfterCancel is how long after the cancel request (or after the loss)
	// it arrived.
	AfterCancel time.Duration
	// Window is the crossing window the response was judged by.
	Window time.Duration
	// ProgressAfterCancel counts progress notifications that arrived after
	// the crossing window (late, flagged); they do not move the progress
	// bar.
	ProgressAfterCancel int
	// ProgressCrossed counts progress notifications that arrived after the
	// cancel but within the crossing window: they may have been sent before
	// the server saw it, so they are shown but not flagged.
	ProgressCrossed int
	// FirstAt and LastAt are when the first and the last thing after the
	// request was given up arrived, crossed or late: with the counts, how
	// far apart they came (a server that sends every second and one that
	// went quiet look alike at the end of a short watch otherwise).
	FirstAt, LastAt time.Time
	// LastProgressAt is when the last of them arrived.
	LastProgressAt time.Time
	// NotificationsAfterCancel counts subscription notifications that
	// arrived after a listen request was cancelled or ended.
	NotificationsAfterCancel int
	// NotificationsCrossed counts those that arrived within the crossing
	// window of the cancel.
	NotificationsCrossed int
}

// IsActive reports whether the request is still in flight (including while
// its cancellation is pending).
func (r *Request) IsActive() bool { return r.State.IsActive() }

// IsListen reports whether the request is a subscriptions/listen stream.
func (r *Request) IsListen() bool { return r.listen }

// Flagged reports whether the request has anything a person should look at:
// a late response, late progress or notifications, or a protocol violation.
func (r *Request) Flagged() bool { return r.flagged }

// Elapsed is how long the request has lived: from creation to its end, or
// to now while it is active.
func (r *Request) Elapsed(now time.Time) time.Duration {
	if !r.Ended.IsZero() {
		return r.Ended.Sub(r.Created)
	}
	return now.Sub(r.Created)
}

// Remaining is the time left before the request is cancelled for a timeout,
// never negative, and which limit is the nearer one. It is LimitNone for
// final requests, for requests whose cancel is already pending, for
// acknowledged subscriptions, which are meant to live indefinitely, and
// while the request waits on the user (WaitingOnUser).
func (r *Request) Remaining(now time.Time) (time.Duration, Limit) {
	d, limit := r.deadline()
	if limit == LimitNone {
		return 0, LimitNone
	}
	left := d.Sub(now)
	if left < 0 {
		left = 0
	}
	return left, limit
}

// deadline is the time at which the request times out and which limit that
// is. The maximum wins ties because nothing can push it back.
func (r *Request) deadline() (time.Time, Limit) {
	if r.ByHost {
		return time.Time{}, LimitNone
	}
	if r.State == StateTask {
		return r.taskDeadline()
	}
	if r.State != StatePending && r.State != StateRunning || r.peek().asking > 0 {
		// Waiting on the user (pause.go): no deadline runs.
		return time.Time{}, LimitNone
	}
	if !r.Timeout.MaxDeadline.After(r.Timeout.Deadline) {
		return r.Timeout.MaxDeadline, LimitMax
	}
	return r.Timeout.Deadline, LimitTimeout
}

// timeoutBase is the instant the per-request timeout counts from: the last
// progress when progress resets it, else creation.
func (r *Request) timeoutBase() time.Time {
	base := r.Created
	if c := r.Conv; c != nil && len(c.Rounds) > 0 {
		// A later round's timeout counts from when it began (Answer),
		// not from the conversation's first round. Found in review.
		base = c.Rounds[len(c.Rounds)-1].Began
	}
	if r.Timeout.ResetOnProgress && r.Progress.Count > 0 && r.Progress.Last.After(base) {
		return r.Progress.Last
	}
	return base
}

// addSample appends a progress sample to the timeline, keeping at most
// TimelineSamples: when full, every other sample is dropped and the stride
// doubles, so the samples stay evenly spread over the notifications.
func (r *Request) addSample(count int, s ProgressSample) {
	if r.stride == 0 {
		r.stride = 1
	}
	if (count-1)%int(r.stride) != 0 {
		return
	}
	if len(r.Timeline) == TimelineSamples {
		for i := 0; i < TimelineSamples/2; i++ {
			r.Timeline[i] = r.Timeline[2*i]
		}
		r.Timeline = r.Timeline[:TimelineSamples/2]
		r.stride *= 2
		if (count-1)%int(r.stride) != 0 {
			return
		}
	}
	r.Timeline = append(r.Timeline, s)
}

// HostSession is the host's HTTP session the request came in, as the
// proxy names it ("": none known).
func (r *Request) HostSession() string { return r.hostSession }
