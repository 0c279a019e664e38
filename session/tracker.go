// Package session is inflight's request tracker: a pure state machine that
// follows every request from the user's intent to its fate. It keeps each
// request's lifecycle state, progress, timeout deadlines and cancellation,
// classifies what the server sends after a cancel as late, records protocol
// violations, and keeps bounded stores of raw messages, the protocol log
// and the server's stderr.
//
// It does no I/O, starts no goroutine, takes no lock and never reads the
// clock: every method that needs the time takes it (Apply uses the event's
// own Time), so the whole state machine runs under table tests with a fixed
// clock. All methods are meant for one goroutine (the UI's or a headless
// run's); the client's goroutines hand over events, never pointers into the
// tracker.
//
// The caller drives it like this:
//
//	req := t.Begin(method, params, opts, now)   // then the client sends req.ID, req.ProgressToken
//	changes := t.Apply(ev)                      // for every event.Event
//	ch, err := t.RequestCancel(id, reason, session.CauseUser, now) // if err == nil, the client cancels id
//	due := t.Due(now)                           // the client sends due.Cancels and due.Requests
//	next, ok := t.NextDeadline()                // after an Apply: schedule one tick to next
//
// Every method that changes something returns the Changes it made
// (transitions, late and crossed arrivals, violations), so a consumer never
// diffs snapshots to find them; a refused action is a *Refused, which
// carries facts and leaves the words to the consumer.
package session

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Counts are the header's numbers, kept up to date on every change so that
// reading them is O(1).
type Counts struct {
	// InFlight counts pending, running and listening requests.
	InFlight int
	// Cancelling counts requests whose cancel is pending.
	Cancelling int
	// Done counts final requests still in history.
	Done int
	// Flagged counts requests in history with late traffic or violations.
	Flagged int
	// Evicted counts final requests dropped from history to bound memory.
	Evicted int
	// Unfollowed counts a host's requests dropped while still open, the
	// oldest first, past Config.MaxFollowed (a proxy's tracker): forwarded
	// as ever, no longer followed.
	Unfollowed int
}

// Expiry is a request whose timeout expired (or a task's listen to close).
// It is now cancel_requested; the caller must send its cancel with the
// transport's signal (Due.Cancels).
type Expiry struct {
	ID     wire.ID
	Reason string
	// Limit says which limit expired.
	Limit Limit
	// Change is the request's move to cancel_requested.
	Change Change
	// task says the request is a task: its cancel is a tasks/cancel, which
	// taskRequests begins, and no transport signal is sent (Due leaves it
	// out of Cancels).
	task bool
}

// Tracker follows every request the user sent. Create one with NewTracker.
type Tracker struct {
	cfg Config

	// erasSeen: the eras and versions the observed hosts spoke (sawEra).
	erasSeen []EraSeen

	lastID int64
	// hist is every request kept, sorted by ID (oldest first). Eviction
	// compacts it in place in batches (see evict).
	hist []*Request
	byID map[wire.ID]*Request
	// active holds the non-final requests, unordered, so that deadlines are
	// found without walking the whole history.
	active []*Request
	counts Counts

	conn        event.ConnInfo
	connected   bool
	connectedAt time.Time
	closed      bool
	closeErr    error

	// rtts are the recent round-trip samples crossings are judged by.
	rtts roundTrips
	// changes collects what the current call changed.
	changes changes

	raw        rawStore
	log        ProtocolLog
	stderr     StderrLog
	violations ViolationLog
	// curLog is the log slot of the event being applied, -1 outside Apply.
	curLog int
	// tasks finds a task's request by its task ID; taskDue is the
	// earliest task work due at once (zero: none), see taskRequests.
	tasks                             map[string]*Request
	taskDue                           time.Time
	taskChildren, taskChildrenEvicted int
	// closeDueAt is when a task's listen is to be closed by expire (zero:
	// none).
	closeDueAt time.Time
	// holdEvict: Due is beginning task requests, and evicts nothing
	// until its changes were read (due.go).
	holdEvict bool

	// observing: the requests are a host's, seen by a proxy (observe.go).
	// tokens finds a host request by a progress token that is not its ID;
	// hostEvicted is the largest integer ID of a host request evicted,
	// by the host session it came in (at most maxHostSessions).
	observing   bool
	tokens      map[wire.ID]*Request
	hostEvicted map[string]int64
	// hostSession is the seq of the host's last initialize, which began
	// its session (legacy: IDs are unique within one); retired counts
	// the finished host requests whose ID a later one took (observe_reuse.go).
	hostSession int64
	retired     map[string]int
	// hostResumes is when each host session last resumed a stream
	// (HostResumedIn), for a closure reported after it; unfollowedTokens
	// the progress tokens of host requests not followed, by session.
	hostResumes      map[string]time.Time
	unfollowedTokens map[wire.ID]string
	// dropped holds the IDs and progress tokens of the host requests no
	// longer followed (observe_bound.go), bounded: what comes for them
	// is old news.
	dropped map[wire.ID]struct{}
	// hostQuestions are the server's requests to the host waiting for
	// its answer, hostAnswered the last it answered, questionsSeen
	// whether the server asked anything (observe_findings.go).
	hostQuestions map[wire.ID]hostQuestion
	hostAnswered  map[wire.ID]struct{}
	questionsSeen bool

	// roundOf finds a conversation by an earlier round's ID (rounds.go);
	// serverOpen and serverReqs are the server's own requests waiting and
	// kept (serverreq.go), serverAbandoned the kept ones abandoned by ID;
	// logsUnattributed counts log lines no request could be named for.
	roundOf          map[wire.ID]*Request
	serverOpen       map[wire.ID]*ServerRequest
	serverAbandoned  map[wire.ID]*ServerRequest
	serverReqs       []*ServerRequest
	logsUnattributed int
}

// NewTracker returns an empty tracker. Zero Config fields take defaults.
func NewTracker(cfg Config) *Tracker {
	cfg = cfg.withDefaults()
	return &Tracker{
		cfg:        cfg,
		byID:       map[wire.ID]*Request{},
		raw:        newRawStore(cfg.RawStoreBytes),
		log:        ProtocolLog{ring: ring[logRec]{limit: cfg.LogEntries}, rawLimit: cfg.LogEntryBytes},
		stderr:     StderrLog{ring: ring[StderrLine]{limit: cfg.StderrLines}},
		violations: ViolationLog{ring: ring[Violation]{limit: cfg.Violations}, counts: map[string]int{}},
		curLog:     -1,
		tasks:      map[string]*Request{},
	}
}

// Config returns the configuration in force, defaults filled in. The
// returned ResetOnProgress is a copy, so changing it changes nothing.
func (t *Tracker) Config() Config {
	c := t.cfg
	reset := *c.ResetOnProgress
	c.ResetOnProgress = &reset
	return c
}

// Begin records the intent to send a new request and returns it, pending.
// It allocates the request's ID (integers from 1, never reused) and its
// progress token (the same integer), starts its deadlines at now, and keeps
// a copy of params in the raw store until the exact bytes sent replace them.
// The caller then asks the client to send it with req.ID and
// req.ProgressToken.
func (t *Tracker) Begin(method string, params json.RawMessage, opts RequestOptions, now time.Time) *Request {
	t.lastID++
	id := wire.IntID(t.lastID)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = t.cfg.DefaultTimeout
	}
	maxTimeout := opts.MaxTimeout
	if maxTimeout <= 0 {
		maxTimeout = t.cfg.MaxTimeout
	}
	timeout = min(timeout, maxTimeout)
	lateWindow := opts.LateWindow
	if lateWindow <= 0 {
		lateWindow = t.cfg.LateWindow
	}
	reset := *t.cfg.ResetOnProgress
	if opts.ResetOnProgress != nil {
		reset = *opts.ResetOnProgress
	}
	r := &Request{
		ID:            id,
		Method:        method,
		Target:        wire.Target(method, params),
		ProgressToken: id,
		Created:       now,
		State:         StatePending,
		Timeout: Timeout{
			Timeout:         timeout,
			Asked:           timeout,
			Max:             maxTimeout,
			ResetOnProgress: reset,
			Deadline:        now.Add(timeout),
			MaxDeadline:     now.Add(maxTimeout),
		},
		LateWindow: lateWindow,
		seq:        t.lastID,
		listen:     method == wire.MethodSubscriptionsListen,
	}
	t.byID[id] = r
	t.hist = append(t.hist, r)
	r.activePos = int32(len(t.active))
	t.active = append(t.active, r)
	t.counts.InFlight++
	if len(params) > 0 {
		t.raw.put(rawKey{id, rawRequest}, bytes.Clone(params))
	}
	t.begun(r, params)
	t.evict()
	return r
}

// RequestCancel records the intent to cancel a request. It refuses (a
// *Refused) a request that is unknown, already final, already being
// cancelled (so pressing the key twice is harmless), or an initialize,
// which the protocol forbids cancelling. On success the request is
// cancel_requested from now, and the returned Change says so; the caller
// then asks the client to cancel it, and the event.CancelSent that follows
// records the signal actually sent.
func (t *Tracker) RequestCancel(id wire.ID, reason string, cause CancelCause, now time.Time) (Change, error) {
	t.changes.reset()
	r := t.lookup(id)
	if err := t.refuse(id, r); err != nil {
		return Change{}, err
	}
	if r.State == StateWaitingInput {
		// Nothing in flight on the wire: cancelled at once, no signal.
		return t.dropConversation(r, reason, cause, now), nil
	}
	if r.Method == wire.MethodInitialize {
		// "The initialize request MUST NOT be cancelled by clients"
		// (2025-11-25); the client refuses it too (client.ErrNotCancellable).
		return Change{}, &Refused{Why: RefusedInitialize, ID: id, State: r.State}
	}
	t.beginCancel(r, reason, cause, now)
	return t.changes.buf[len(t.changes.buf)-1], nil
}

// refuse is the refusal common to every action on a request in flight.
func (t *Tracker) refuse(id wire.ID, r *Request) error {
	switch {
	case r == nil && t.wasEvicted(id):
		return &Refused{Why: RefusedEvicted, ID: id}
	case r == nil:
		return &Refused{Why: RefusedUnknown, ID: id}
	case r.State.IsFinal():
		return &Refused{Why: RefusedFinal, ID: id, State: r.State, Since: r.Ended}
	case r.State == StateCancelRequested:
		return &Refused{Why: RefusedCancelling, ID: id, State: r.State, Since: r.Cancel.At}
	}
	return nil
}

// beginCancel moves an active request to cancel_requested.
func (t *Tracker) beginCancel(r *Request, reason string, cause CancelCause, now time.Time) {
	r.Cancel = &Cancel{At: now, SettleBy: now.Add(r.LateWindow), Reason: reason, Cause: cause}
	if r.Task != nil && !r.Task.Terminal() {
		// A task is cancelled with tasks/cancel (taskRequests begins it),
		// never with the transport's signal. One already ended has
		// nothing to cancel: its outcome is on its way (tasks/result).
		r.Task.cancelDue = true
		t.due(now)
	}
	t.setState(r, StateCancelRequested, now)
}

// StopWatching settles a request whose cancel is waiting out its late
// window now, instead of at Cancel.SettleBy: the user has seen enough. It
// ends as cancelled or timed_out as it would have at the window's end, and
// whatever arrives for it later is still recorded as late. It refuses (a
// *Refused) a request that is not cancel_requested.
func (t *Tracker) StopWatching(id wire.ID, now time.Time) (Change, error) {
	t.changes.reset()
	r := t.byID[id]
	switch {
	case r == nil && t.wasEvicted(id):
		return Change{}, &Refused{Why: RefusedEvicted, ID: id}
	case r == nil:
		return Change{}, &Refused{Why: RefusedUnknown, ID: id}
	case r.State.IsFinal():
		return Change{}, &Refused{Why: RefusedFinal, ID: id, State: r.State, Since: r.Ended}
	case r.State != StateCancelRequested:
		return Change{}, &Refused{Why: RefusedNotCancelling, ID: id, State: r.State}
	}
	t.settle(r, now)
	return t.changes.buf[len(t.changes.buf)-1], nil
}

// AdjustTimeout lengthens (delta > 0) or shortens a running request's
// timeout. The timeout never drops below MinTimeout, nor so far that less
// than MinTimeout would remain (a shortened request still shows its
// countdown before it is cancelled), and never above the request's maximum,
// which stays enforced. A refusal is a *Refused; on success, clamped says
// whether a bound stopped the change.
func (t *Tracker) AdjustTimeout(id wire.ID, delta time.Duration, now time.Time) (clamped Clamped, err error) {
	r := t.byID[id]
	if err := t.refuse(id, r); err != nil {
		return NotClamped, err
	}
	if r.State == StateListening || r.State == StateTask {
		return NotClamped, &Refused{Why: RefusedNoTimeout, ID: id, State: r.State}
	}
	tt := &r.Timeout
	base := r.timeoutBase()
	want := tt.Timeout + delta
	floor := max(MinTimeout, now.Sub(base)+MinTimeout)
	switch {
	case want > tt.Max:
		want = tt.Max
		clamped = ClampedMax
	case want < floor:
		want = floor
		clamped = ClampedFloor
	}
	tt.Timeout = want
	tt.Deadline = base.Add(want)
	return clamped, nil
}

// expire applies every deadline that has passed at now (Due's first part). Pending and running
// requests whose timeout (or maximum) expired become cancel_requested with
// CauseTimeout and are returned, oldest first, for the caller to send their
// cancels; an initialize, which must never be cancelled, times out at once
// and is not returned. Requests whose cancel has waited the whole late window without
// news settle as cancelled or timed_out. changes is every transition made.
func (t *Tracker) expire(now time.Time) (out []Expiry, changes []Change) {
	t.changes.reset()
	if !t.closeDueAt.IsZero() && !now.Before(t.closeDueAt) {
		t.closeDueAt = time.Time{} // the walk below closes them
	}
	// Walk backwards: finishing a request swap-removes it from the active
	// set, which only moves an already visited request into slot i.
	for i := len(t.active) - 1; i >= 0; i-- {
		r := t.active[i]
		if r.closeDue {
			// A task's listen whose task ended (or that the server
			// offers nothing on): cancelled with the transport's signal.
			r.closeDue = false
			if r.State.IsActive() && r.State != StateCancelRequested {
				t.beginCancel(r, "the task's notifications are no longer needed", CauseUser, now)
				out = append(out, Expiry{ID: r.ID, Reason: r.Cancel.Reason, Change: t.changes.buf[len(t.changes.buf)-1]})
			}
			continue
		}
		switch r.State {
		case StatePending, StateRunning:
			d, limit := r.deadline()
			if limit == LimitNone {
				// A host's request: its timeout is the host's; what is
				// due is a closed stream's wait for a resumption.
				t.hostResumeDue(r, now)
				continue
			}
			if !now.Before(d) && r.Method == wire.MethodInitialize {
				// initialize must never be cancelled: give up on it here,
				// and send nothing.
				r.LocalError = "timed out; initialize is never cancelled, so no cancel was sent"
				t.finish(r, StateTimedOut, now)
				continue
			}
			if !now.Before(d) {
				t.beginCancel(r, "timeout", CauseTimeout, now)
				r.Cancel.Limit = limit
				out = append(out, Expiry{ID: r.ID, Reason: "timeout", Limit: limit, Change: t.changes.buf[len(t.changes.buf)-1]})
			}
		case StateTask:
			if r.ByHost {
				// The host's task: its limits are the host's, never
				// inflight's to cancel (found in review).
				t.hostResumeDue(r, now)
				continue
			}
			d, limit := r.deadline()
			switch {
			case now.Before(d):
			case limit == LimitTTL:
				// The server may delete the task now: stop following it.
				r.LocalError = "the task's time to live (" + r.Task.TTL.String() + ") passed before a terminal status; the server may have deleted it"
				t.finish(r, StateTimedOut, now)
			default:
				t.beginCancel(r, "timeout", CauseTimeout, now)
				r.Cancel.Limit = limit
				out = append(out, Expiry{ID: r.ID, Reason: "timeout", Limit: limit, task: true, Change: t.changes.buf[len(t.changes.buf)-1]})
			}
		case StateCancelRequested:
			if !now.Before(r.Cancel.SettleBy) {
				t.settle(r, now)
			}
		}
	}
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool { return t.byID[out[i].ID].seq < t.byID[out[j].ID].seq })
	}
	return out, t.changes.buf
}

// NextDeadline is the nearest instant at which Due has something to do,
// for the caller to schedule a single tick (Due.Next is the same, read
// after Due's work; this is for after an Apply, which moves deadlines). It looks only at active
// requests, so it stays cheap however long the history is.
func (t *Tracker) NextDeadline() (time.Time, bool) {
	next, found := t.taskDue, !t.taskDue.IsZero()
	if c := t.closeDueAt; !c.IsZero() && (!found || c.Before(next)) {
		next, found = c, true
	}
	for _, r := range t.active {
		var d time.Time
		switch r.State {
		case StatePending, StateRunning, StateTask:
			var limit Limit
			if d, limit = r.deadline(); limit == LimitNone {
				if d = r.peek().hostResumeBy; d.IsZero() {
					continue
				}
			}
		case StateCancelRequested:
			d = r.Cancel.SettleBy
		default:
			continue
		}
		if p, ok := r.nextTaskWork(); ok && p.Before(d) {
			d = p
		}
		if !found || d.Before(next) {
			next, found = d, true
		}
	}
	return next, found
}

// Len is the number of requests in history.
func (t *Tracker) Len() int { return len(t.hist) }

// At returns the i-th request in history, oldest first (0 ≤ i < Len).
func (t *Tracker) At(i int) *Request { return t.hist[i] }

// Get returns the request with the ID, if it is in history.
func (t *Tracker) Get(id wire.ID) (*Request, bool) {
	r := t.lookup(id)
	return r, r != nil
}

// Index returns the position of a request in history (for At).
func (t *Tracker) Index(id wire.ID) (int, bool) {
	r := t.lookup(id)
	if r == nil {
		return 0, false
	}
	i := sort.Search(len(t.hist), func(i int) bool { return t.hist[i].seq >= r.seq })
	return i, true
}

// Counts returns the header counts.
func (t *Tracker) Counts() Counts { return t.counts }

// Conn returns the connection details from the last EventConnected, and
// whether there was one.
func (t *Tracker) Conn() (event.ConnInfo, bool) { return t.conn, t.connected }

// ConnectedAt is when the last EventConnected happened.
func (t *Tracker) ConnectedAt() time.Time { return t.connectedAt }

// Era is the protocol era of the connection (EraUnknown before it is known).
func (t *Tracker) Era() event.Era { return t.conn.Era }

// TransportClosed reports whether the transport went away, and why (nil
// after a clean close).
func (t *Tracker) TransportClosed() (bool, error) { return t.closed, t.closeErr }

// RawRequest returns the exact bytes sent for a request (its params until
// the client reports sending it), if the raw store still holds them.
func (t *Tracker) RawRequest(id wire.ID) ([]byte, bool) { return t.raw.get(rawKey{id, rawRequest}) }

// RawResponse returns the exact bytes of the first response to a request
// (timely or late), if the raw store still holds them.
func (t *Tracker) RawResponse(id wire.ID) ([]byte, bool) { return t.raw.get(rawKey{id, rawResponse}) }

// Log returns the protocol log (read-only).
func (t *Tracker) Log() *ProtocolLog { return &t.log }

// Stderr returns the server's stderr lines (read-only).
func (t *Tracker) Stderr() *StderrLog { return &t.stderr }

// Violations returns the protocol violations (read-only).
func (t *Tracker) Violations() *ViolationLog { return &t.violations }

// wasEvicted reports whether id is one the tracker issued and no longer
// keeps: traffic for it is old news, not a violation.
func (t *Tracker) wasEvicted(id wire.ID) bool {
	if t.observing {
		return t.wasEvictedHost(id)
	}
	n, ok := id.Int()
	if !ok || n < 1 || n > t.lastID {
		return false
	}
	_, kept := t.byID[id]
	return !kept && t.roundOf[id] == nil
}

// setState moves r to state s, keeping the counts and the active set right.
func (t *Tracker) setState(r *Request, s State, now time.Time) {
	if r.Role == RoleNone {
		t.count(r.State, -1)
		t.count(s, +1)
	}
	// The log records every transition, so the log pane and a TUI export
	// tell a request's story as a `call` trace does.
	t.log.ring.push(pack(LogEntry{Time: now, Dir: DirLocal, ID: r.ID, Method: r.Method, From: r.State, State: s, IsState: true, Parent: r.Parent}))
	t.changes.add(Change{Kind: ChangeState, ID: r.ID, At: now, From: r.State, To: s})
	r.State = s
	if s.IsFinal() && r.activePos >= 0 {
		last := t.active[len(t.active)-1]
		t.active[r.activePos] = last
		last.activePos = r.activePos
		t.active[len(t.active)-1] = nil
		t.active = t.active[:len(t.active)-1]
		r.activePos = -1
	}
}

func (t *Tracker) count(s State, d int) {
	switch {
	case s == StateCancelRequested:
		t.counts.Cancelling += d
	case s.IsFinal():
		t.counts.Done += d
	default:
		t.counts.InFlight += d
	}
}

// finish makes r final at now.
func (t *Tracker) finish(r *Request, s State, now time.Time) {
	r.Ended = now
	t.setState(r, s, now)
	t.roundEnded(r, now)
	if r.Role != RoleNone {
		t.childEnded(r, now)
	}
	if r.Task != nil && !r.Task.listen.IsZero() {
		// The task is over: so is the listen for its notifications.
		if c := t.byID[r.Task.listen]; c != nil {
			t.closeTaskListen(c, now)
		}
	}
}

// settle ends a cancel_requested request once its fate is known: timed_out
// when a timeout caused the cancel, cancelled otherwise.
func (t *Tracker) settle(r *Request, now time.Time) {
	s := StateCancelled
	if r.Cancel != nil && r.Cancel.Cause == CauseTimeout {
		s = StateTimedOut
	}
	t.finish(r, s, now)
}

// flag marks r as worth a look.
func (t *Tracker) flag(r *Request) {
	if r.Role != RoleNone {
		// A task's own request is no row: what matters of it is flagged
		// on the task's request, where it is judged (task.go).
		return
	}
	if !r.flagged {
		r.flagged = true
		t.counts.Flagged++
	}
}

// arrived records that what arrived at `at` for r, a request given up
// (cancelled, timed out, lost), either crossed its cancel in flight or is
// late; it reports which. Only late arrivals flag the request.
func (t *Tracker) arrived(r *Request, what Arrival, at time.Time, streamEnd int64) (crossed bool) {
	crossed = t.crossedCancel(r, at, streamEnd)
	r.Late.Window = t.CrossingWindow()
	if at.After(r.Late.LastAt) {
		r.Late.LastAt = at
	}
	if r.Late.FirstAt.IsZero() || at.Before(r.Late.FirstAt) {
		r.Late.FirstAt = at
	}
	kind := ChangeLate
	if crossed {
		kind = ChangeCrossed
	} else {
		t.flag(r)
	}
	t.changes.add(Change{Kind: kind, ID: r.ID, At: at, What: what})
	t.markLogVerdict(r, what, crossed, at)
	return crossed
}

// evict bounds history. Only final requests go, oldest first. Removing them
// one at a time from the middle of a 10 000-element slice would cost O(n)
// per request, so eviction runs in batches of a sixteenth of the limit:
// history then holds between 15/16 of HistoryLimit and HistoryLimit
// requests, plus any active requests beyond the limit (they are never
// evicted), and each request costs O(1) amortised. (If nearly the whole
// history is active, batches shrink to what is final; that needs thousands
// of requests in flight at once.)
func (t *Tracker) evict() {
	if t.holdEvict {
		return
	}
	over := len(t.hist) - t.cfg.HistoryLimit
	final := len(t.hist) - len(t.active)
	if over <= 0 || final == 0 {
		return
	}
	drop := min(final, over+max(1, t.cfg.HistoryLimit/16)-1)
	n := 0
	for _, r := range t.hist {
		if drop > 0 && r.State.IsFinal() && (r.Task == nil || !r.Task.Pending()) {
			drop--
			t.forget(r)
			continue
		}
		t.hist[n] = r
		n++
	}
	clear(t.hist[n:])
	t.hist = t.hist[:n]
}

// forget drops an evicted request and everything kept for it.
func (t *Tracker) forget(r *Request) {
	delete(t.byID, r.ID)
	t.forgetRounds(r)
	if r.Task != nil && t.tasks[r.Task.ID] == r {
		delete(t.tasks, r.Task.ID)
	}
	t.raw.remove(rawKey{r.ID, rawRequest})
	t.raw.remove(rawKey{r.ID, rawResponse})
	t.raw.remove(rawKey{r.ID, rawTaskOutcome})
	if r.ByHost {
		t.forgetHost(r)
	}
	if r.Role == RoleNone {
		t.counts.Done--
	} else {
		t.taskChildrenEvicted++
	}
	if r.flagged {
		t.counts.Flagged--
	}
	t.counts.Evicted++
}
