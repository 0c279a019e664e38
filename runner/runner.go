// Package runner is the one headless loop: it dials a target, begins
// requests, cancels them with the signal their transport and era require,
// waits for events and the tracker's deadlines (turning expired timeouts
// into cancels), settles cancels, traces every event, state change and
// violation, and closes. `inflight call` and `inflight check` drive it; a
// proxy would too. It also carries the signal handling every headless run
// shares (Interrupt, WithHurry, HurryOf).
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/otlp"
	"inflight/redact"
	"inflight/session"
	"inflight/target"
	"inflight/trace"
	"inflight/wire"
)

// Options configure a headless connection.
type Options struct {
	// Policy of the tracker. The client reads a legacy HTTP stream for
	// the late window of the request it carries (session.Request's), so
	// LateWindow is set here only.
	Timeout         time.Duration
	MaxTimeout      time.Duration
	ResetOnProgress bool
	LateWindow      time.Duration
	// Grace widens the window in which what follows a cancel counts as
	// having crossed it (session.Config.Grace).
	Grace time.Duration
	// Trace receives every event, state change and violation; nil for none.
	Trace *trace.Writer
	// HTTPBodies records the HTTP responses' bodies in the trace's
	// exchanges too (an HAR is made of it); without it they are left out.
	HTTPBodies bool
	// Spans receives the same, as OpenTelemetry spans (--otlp); nil for
	// none.
	Spans *otlp.Sink
	// Redactor hides the target's secrets in errors.
	Redactor *redact.Redactor

	// Converse keeps a modern request answered input_required waiting for
	// Answer (session.Config.Converse); MaxRounds caps its rounds.
	Converse  bool
	MaxRounds int
	// ServerRequests answers a legacy server's own requests and Answers
	// declares what it answers (client.Config); nil refuses them.
	ServerRequests func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error)
	Answers        client.Answers
}

// Conn is one headless connection: the client, the tracker that follows its
// requests, and the trace. It is driven from one goroutine; the client's
// goroutines only hand it events through the client's channel.
type Conn struct {
	c     *client.Client
	tr    *session.Tracker
	trace *trace.Writer
	spans *otlp.Sink
	red   *redact.Redactor
	info  event.ConnInfo

	// observe, when set, sees every event after the tracker applied it,
	// with what it changed.
	observe func(ev event.Event, changes []session.Change)

	timer  *time.Timer
	closed bool
	// hurry, closed by a second Ctrl+C, ends every wait at once: the run
	// stops watching for late traffic and reports what it has.
	hurry <-chan struct{}
	// connected is set once the tracker applied EventConnected.
	connected bool
}

// Interrupt is the cause main gives the context when a signal stops a run
// (context.WithCancelCause), so the cancel's reason names it.
type Interrupt struct{ Signal string }

func (i Interrupt) Error() string { return "interrupted by " + i.Signal }

// InterruptReason is the cancel reason for a run that ctx's end stopped.
func InterruptReason(ctx context.Context) string {
	var in Interrupt
	if errors.As(context.Cause(ctx), &in) && in.Signal != "" && in.Signal != "SIGINT" {
		return "interrupted (" + in.Signal + ")"
	}
	return "interrupted (Ctrl+C)"
}

type hurryKey struct{}

// WithHurry returns ctx carrying hurry: once it is closed (main closes it
// on a second Ctrl+C), call, check and the TUI stop waiting — for late
// traffic, for a settling cancel — and report what they have.
func WithHurry(ctx context.Context, hurry <-chan struct{}) context.Context {
	return context.WithValue(ctx, hurryKey{}, hurry)
}

// HurryOf is the hurry channel WithHurry put in ctx; nil (which blocks
// forever) when there is none.
func HurryOf(ctx context.Context) <-chan struct{} {
	h, _ := ctx.Value(hurryKey{}).(<-chan struct{})
	return h
}

// errConnect wraps a failure to establish the connection (exit code 2).
type errConnect struct{ err error }

func (e *errConnect) Error() string { return e.err.Error() }
func (e *errConnect) Unwrap() error { return e.err }

// SettleSlack is how long past the late window a headless run waits for a
// cancelled request to settle before it stops waiting anyway. The tracker
// settles it at the late window; this only bounds a bug.
const SettleSlack = 5 * time.Second

// Dial connects to the target and returns once the era is known. Events
// that arrive meanwhile (the era probe, the handshake, stderr lines) are
// applied and traced while Connect runs, so a chatty server cannot fill
// the client's event channel and stall its own handshake.
func Dial(ctx context.Context, t target.Target, opts Options) (*Conn, error) {
	cfg, err := t.ClientConfig(ctx)
	if err != nil {
		return nil, &errConnect{err}
	}
	return dial(ctx, cfg, opts)
}

// dial is Dial with the client's configuration made.
func dial(ctx context.Context, cfg client.Config, opts Options) (*Conn, error) {
	if opts.ServerRequests != nil {
		cfg.ServerRequests = opts.ServerRequests
	}
	cfg.Answers = opts.Answers
	// A trace (or an HAR, which is made of one) records each HTTP
	// exchange whole.
	cfg.RecordHTTP = opts.Trace != nil
	cfg.RecordHTTPBodies = opts.HTTPBodies
	c, err := client.New(cfg)
	if err != nil {
		return nil, &errConnect{err}
	}
	reset := opts.ResetOnProgress
	cn := &Conn{
		c: c,
		tr: session.NewTracker(session.Config{
			DefaultTimeout:  opts.Timeout,
			MaxTimeout:      opts.MaxTimeout,
			ResetOnProgress: &reset,
			LateWindow:      opts.LateWindow,
			Grace:           opts.Grace,
			Converse:        opts.Converse,
			MaxRounds:       opts.MaxRounds,
		}),
		trace: opts.Trace,
		spans: opts.Spans,
		red:   opts.Redactor,
		timer: time.NewTimer(time.Hour),
		hurry: HurryOf(ctx),
	}
	cn.timer.Stop()
	type connected struct {
		info event.ConnInfo
		err  error
	}
	done := make(chan connected, 1)
	go func() {
		info, err := c.Connect(ctx)
		done <- connected{info, err}
	}()
	for {
		select {
		case ev := <-c.Events():
			cn.apply(ev)
		case r := <-done:
			if r.err != nil {
				cn.Close()
				return nil, &errConnect{fmt.Errorf("connect: %w%s", r.err, stderrTail(cn.tr.Stderr()))}
			}
			cn.info = r.info
			// Connect emitted EventConnected before it returned: apply
			// it, and what came before it, so the trace stays in order and
			// the tracker knows the era before any request.
			for !cn.connected {
				ev, ok := <-c.Events()
				if !ok {
					break
				}
				cn.apply(ev)
			}
			return cn, nil
		}
	}
}

// stderrTail quotes the last lines a stdio server wrote to stderr, for a
// connection that failed: a server that dies at start-up says why there.
func stderrTail(sl *session.StderrLog) string {
	const lines, room = 3, 300
	n := sl.Len()
	if n == 0 {
		return ""
	}
	var tail []string
	for i := max(0, n-lines); i < n; i++ {
		if t := strings.TrimSpace(sl.At(i).Text); t != "" {
			tail = append(tail, t)
		}
	}
	if len(tail) == 0 {
		return ""
	}
	s := strings.Join(tail, " | ")
	if r := []rune(s); len(r) > room {
		s = "…" + string(r[len(r)-room:])
	}
	return "; its stderr ended with: " + strconv.Quote(s)
}

// apply feeds one event to the tracker, then hands what it changed to the
// trace and the observer. The tracker says what changed (session.Change),
// so nothing here compares snapshots.
func (cn *Conn) apply(ev event.Event) {
	if ev.Kind == event.Connected {
		cn.connected = true
	}
	changes := cn.tr.Apply(ev)
	if cn.trace != nil {
		_ = cn.trace.Judged(ev, session.Verdict(ev.Kind, changes))
	}
	cn.traceChanges(changes)
	cn.spans.Applied(cn.tr, &ev, changes)
	if cn.observe != nil {
		cn.observe(ev, changes)
	}
}

// traceChanges writes a state line for every transition and a violation
// line for every violation the tracker just recorded.
func (cn *Conn) traceChanges(changes []session.Change) {
	if cn.trace != nil {
		_ = cn.trace.Changes(cn.tr, changes)
	}
}

// Info is what the connection learned at connect: transport, era,
// protocol version, server.
func (cn *Conn) Info() event.ConnInfo { return cn.info }

// Tracker is the tracker that follows the connection's requests. Read it
// between calls of the Conn's methods, from the goroutine that drives it.
func (cn *Conn) Tracker() *session.Tracker { return cn.tr }

// Observe has f see every event after the tracker applied it, with what it
// changed (the changes are reused by the next call: copy what must last).
// Changes the Conn made itself (a cancel, an expired timeout) come with an
// empty event.
func (cn *Conn) Observe(f func(ev event.Event, changes []session.Change)) { cn.observe = f }

// changed hands changes the Conn made itself to the trace and the observer.
func (cn *Conn) changed(changes []session.Change) {
	cn.traceChanges(changes)
	if len(changes) > 0 {
		cn.spans.Applied(cn.tr, nil, changes)
	}
	if cn.observe != nil && len(changes) > 0 {
		cn.observe(event.Event{}, changes)
	}
}

// Begin starts a tracked request and sends it. A request the client could
// not send is failed in the tracker at once (connection_lost when the
// connection is gone), so that nothing waits for it.
func (cn *Conn) Begin(ctx context.Context, method string, params json.RawMessage, opts session.RequestOptions) (*session.Request, error) {
	now := time.Now()
	r := cn.tr.Begin(method, params, opts, now)
	if cn.trace != nil {
		_ = cn.trace.State(now, r, r.State, r.State)
	}
	err := cn.sendRequest(ctx, client.Request{ID: r.ID, Method: method, Params: params, ProgressToken: r.ProgressToken, LateWindow: r.LateWindow})
	return r, err
}

// sendRequest has the client send a tracked request, and fails it in the
// tracker at once when the client could not: the tracker learns about
// failures from client events only, and this one happened before the
// request reached the client, so it is reported to it the same way.
func (cn *Conn) sendRequest(ctx context.Context, req client.Request) error {
	err := cn.c.Send(ctx, req)
	if err != nil {
		cn.apply(event.Event{Kind: event.RequestFailed, Time: time.Now(), RequestID: req.ID, Err: err,
			LostConnection: errors.Is(err, client.ErrClosed)})
	}
	return err
}

// Cancel records the intent to cancel a request and has the client send
// the signal its transport and era require. When the client says the
// request is no longer in flight (its answer is already on the way), the
// tracker settles it when that answer is applied.
func (cn *Conn) Cancel(id wire.ID, reason string, cause session.CancelCause) error {
	now := time.Now()
	ch, err := cn.tr.RequestCancel(id, reason, cause, now)
	if err != nil {
		return err
	}
	cn.changed([]session.Change{ch})
	if ch.To.IsFinal() {
		// A conversation waiting for an answer: nothing was in flight, so
		// nothing is sent.
		return nil
	}
	if r, ok := cn.tr.Get(id); ok && r.IsTask() {
		// A task's cancel is tasks/cancel, never the transport's signal:
		// the tracker has it due now.
		cn.due(now)
		return nil
	}
	if r, ok := cn.tr.Get(id); ok {
		id = r.ID // a conversation's current round
	}
	if err := cn.send(id, reason); err != nil && !errors.Is(err, client.ErrNotInFlight) {
		return err
	}
	return nil
}

// Answer answers a request waiting for input (session.Tracker.Answer)
// and sends its next round, which it returns.
func (cn *Conn) Answer(ctx context.Context, id wire.ID, answers map[string]json.RawMessage) (session.Retry, error) {
	now := time.Now()
	rt, err := cn.tr.Answer(id, answers, now)
	if err != nil {
		return rt, err
	}
	cn.changed([]session.Change{rt.Change})
	err = cn.sendRequest(ctx, client.Request{ID: rt.ID, Method: rt.Method, Params: rt.Params, ProgressToken: rt.ProgressToken, LateWindow: rt.LateWindow})
	return rt, err
}

// EndConversation ends a request waiting for input as input_required
// (session.Tracker.EndConversation): the run has no answer for it.
func (cn *Conn) EndConversation(id wire.ID, why string) error {
	ch, err := cn.tr.EndConversation(id, why, time.Now())
	if err == nil {
		cn.changed([]session.Change{ch})
	}
	return err
}

// send has the client send id's cancel signal, and waits for it unless
// the run is told to hurry: a legacy HTTP cancel is a POST a server may
// hold for its whole 30s bound, and a second Ctrl+C must not wait that
// long (found in review). The cancel then goes on in the client, which
// reports it and which Close waits for.
func (cn *Conn) send(id wire.ID, reason string) error {
	done := make(chan error, 1)
	go func() {
		_, err := cn.c.Cancel(id, reason)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-cn.hurry:
		return nil
	}
}

// due carries out what the tracker has due at now (session.Tracker.Due):
// it traces the changes, sends the cancels of the requests whose timeouts
// expired, and sends the task requests begun (polls, tasks/result,
// tasks/cancel, listens), each an ordinary tracked request.
func (cn *Conn) due(now time.Time) {
	d := cn.tr.Due(now)
	// Copy: the sends below may apply events, which reuse the slice.
	cn.changed(slices.Clone(d.Changes))
	for _, x := range d.Cancels {
		_ = cn.send(x.ID, x.Reason)
	}
	for _, r := range d.Requests {
		if cn.trace != nil {
			_ = cn.trace.State(now, r, r.State, r.State)
		}
		_ = cn.sendRequest(context.Background(), client.Request{ID: r.ID, Method: r.Method, Params: r.ChildParams, LateWindow: r.LateWindow})
	}
}

// WaitResult says why Wait returned.
type WaitResult uint8

const (
	WaitDone        WaitResult = iota // the condition holds
	WaitDeadline                      // the deadline passed first
	WaitInterrupted                   // ctx ended first (or the hurry channel closed)
	WaitClosed                        // the client's event channel closed
)

// Wait applies events and deadlines until done reports true, deadline
// passes (zero: no deadline of its own), or ctx ends. It schedules one
// timer to the nearer of deadline and the tracker's next deadline, as the
// design asks: timeouts are the tracker's deadlines, never timers of ours.
//
// The profile of `inflight call` on a flood had this loop resetting and
// stopping its timer on every event (6.4 % of the CPU, more than the
// tracker's Apply) and reading the clock for each. The timer is now moved
// only when the next deadline comes earlier than the one it is set to; a
// deadline that moved later (progress pushing a timeout back) is left to a
// wake-up that finds nothing due and re-arms it, at most once per timeout.
// The clock is read only when the timer fired (and once at the start): the
// timer is never set later than deadline, so deadline cannot pass unseen.
func (cn *Conn) Wait(ctx context.Context, done func() bool, deadline time.Time) WaitResult {
	var armed time.Time // what the timer is set to; zero while it is stopped
	defer func() {
		if !armed.IsZero() {
			cn.timer.Stop()
		}
	}()
	fired := true // read the clock: at the start, and after the timer fired
	burst := 0    // events taken in a row without the full select
	for {
		if done() {
			return WaitDone
		}
		if fired {
			fired = false
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return WaitDeadline
			}
		}
		next := deadline
		if d, ok := cn.tr.NextDeadline(); ok && (next.IsZero() || d.Before(next)) {
			next = d
		}
		if !next.IsZero() && (armed.IsZero() || next.Before(armed)) {
			cn.timer.Reset(max(0, time.Until(next)))
			armed = next
		}
		if len(cn.c.Events()) == 0 && cn.trace != nil {
			// About to wait: what is traced so far goes to the file, so a
			// run killed from outside still leaves its trace.
			_ = cn.trace.Flush()
		}
		if burst < maxBurst {
			// An event that is ready is taken without the full select,
			// which locks all four channels and, once the loop kept up with
			// the reader, contended with every send for the events
			// channel's lock (11 % of the flood's CPU). Every maxBurst
			// events the full select runs, so a flood that never lets the
			// channel empty cannot starve the timer, ctx or hurry.
			select {
			case ev, ok := <-cn.c.Events():
				if !ok {
					return WaitClosed
				}
				cn.apply(ev)
				burst++
				continue
			default:
			}
		}
		burst = 0
		select {
		case ev, ok := <-cn.c.Events():
			if !ok {
				return WaitClosed
			}
			cn.apply(ev)
		case now := <-cn.timer.C:
			// Go 1.23 timers: a stopped or reset timer delivers no stale
			// value, so this is the one armed above.
			armed, fired = time.Time{}, true
			cn.due(now)
		case <-ctx.Done():
			return WaitInterrupted
		case <-cn.hurry:
			return WaitInterrupted
		}
	}
}

// maxBurst bounds how many ready events Wait takes in a row before it
// looks at its timer, ctx and hurry again: a few microseconds of a flood.
const maxBurst = 64

// Settle waits, bounded, until a request is final.
func (cn *Conn) Settle(id wire.ID, bound time.Duration) WaitResult {
	return cn.Wait(context.Background(), func() bool {
		r, ok := cn.tr.Get(id)
		return !ok || r.State.IsFinal()
	}, time.Now().Add(bound))
}

// Watch applies events for d, whatever happens.
func (cn *Conn) Watch(d time.Duration) {
	cn.Wait(context.Background(), func() bool { return false }, time.Now().Add(d))
}

// Close shuts the client down, applying and tracing the events it still
// emits. The client's Close
// waits for its goroutines, which may be blocked delivering events, so the
// channel is drained while it runs.
func (cn *Conn) Close() {
	if cn.closed {
		return
	}
	cn.closed = true
	cn.timer.Stop()
	done := make(chan struct{})
	go func() {
		_ = cn.c.Close()
		close(done)
	}()
	for ev := range cn.c.Events() {
		cn.apply(ev)
	}
	<-done
	if cn.trace != nil {
		_ = cn.trace.Flush()
	}
}

// CanInject reports whether Inject can write to the server: not on modern
// HTTP, which defines no client-to-server notifications.
func (cn *Conn) CanInject() bool { return cn.c.CanSendRaw() }

// Inject writes one raw message to the server as it is, through the client
// (client.SendRaw), for what a well-behaved client never sends: the
// protocol log and the trace see it as they see every message. On HTTP it
// returns the POST's status ("202 Accepted").
func (cn *Conn) Inject(ctx context.Context, raw []byte) (string, error) {
	status, err := cn.c.SendRaw(ctx, raw)
	if status == 0 {
		return "", err
	}
	return fmt.Sprintf("%d %s", status, http.StatusText(status)), err
}

// DropStream closes the connection of legacy HTTP request id's SSE stream
// without cancelling the request, as a network failure would; the client
// resumes it with Last-Event-ID (client.Client.DropStream). It returns the
// last event ID read.
func (cn *Conn) DropStream(id wire.ID) (string, error) { return cn.c.DropStream(id) }
