package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// connOptions configure a headless connection.
type connOptions struct {
	// Policy of the tracker.
	Timeout         time.Duration
	MaxTimeout      time.Duration
	ResetOnProgress bool
	LateWindow      time.Duration
	// Trace receives every event, state change and violation; nil for none.
	Trace *trace.Writer
	// Redactor hides the target's secrets in errors.
	Redactor *redact.Redactor
	// Pipes replaces the client configuration's stdio pipes (check wraps
	// them to inject raw messages); nil keeps what the target gives.
	Pipes *client.Pipes
}

// conn is one headless connection: the client, the tracker that follows its
// requests, and the trace. It is driven from one goroutine; the client's
// goroutines only hand it events through the client's channel.
type conn struct {
	c     *client.Client
	tr    *session.Tracker
	trace *trace.Writer
	red   *redact.Redactor
	info  event.ConnInfo

	// states is the state last traced for each request begun here, so a
	// state line is written on every change.
	states map[wire.ID]session.State
	// violations is how many tracker violations were traced already.
	violations int64
	// observe, when set, sees every event after the tracker applied it.
	observe func(ev event.Event)

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

// interruptReason is the cancel reason for a run that ctx's end stopped.
func interruptReason(ctx context.Context) string {
	var in Interrupt
	if errors.As(context.Cause(ctx), &in) && in.Signal != "" && in.Signal != "SIGINT" {
		return "interrupted (" + in.Signal + ")"
	}
	return "interrupted (Ctrl+C)"
}

type hurryKey struct{}

// WithHurry returns ctx carrying hurry: once it is closed (main closes it
// on a second Ctrl+C), call and check stop waiting — for late traffic, for
// a settling cancel — and report what they have.
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

// dial connects to the target and returns once the era is known. Events
// that arrive meanwhile (the era probe, the handshake, stderr lines) are
// applied and traced while Connect runs, so a chatty server cannot fill
// the client's event channel and stall its own handshake.
func dial(ctx context.Context, target Target, opts connOptions) (*conn, error) {
	cfg, err := target.clientConfig(ctx, opts.Pipes)
	if err != nil {
		return nil, &errConnect{err}
	}
	cfg.LateWindow = opts.LateWindow
	cfg.ClientVersion = Version
	c, err := client.New(cfg)
	if err != nil {
		return nil, &errConnect{err}
	}
	reset := opts.ResetOnProgress
	cn := &conn{
		c: c,
		tr: session.NewTracker(session.Config{
			DefaultTimeout:  opts.Timeout,
			MaxTimeout:      opts.MaxTimeout,
			ResetOnProgress: &reset,
			LateWindow:      opts.LateWindow,
		}),
		trace:  opts.Trace,
		red:    opts.Redactor,
		states: map[wire.ID]session.State{},
		timer:  time.NewTimer(time.Hour),
		hurry:  HurryOf(ctx),
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
				cn.close()
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

// apply feeds one event to the tracker, the trace and the observer.
func (cn *conn) apply(ev event.Event) {
	if ev.Kind == event.Connected {
		cn.connected = true
	}
	cn.tr.Apply(ev)
	if cn.trace != nil {
		_ = cn.trace.Event(ev)
	}
	cn.traceChanges(ev.Time)
	if cn.observe != nil {
		cn.observe(ev)
	}
}

// traceChanges writes a state line for every request whose state changed
// and a violation line for every new violation.
func (cn *conn) traceChanges(at time.Time) {
	if cn.trace == nil {
		return
	}
	var changed []*session.Request
	for id, prev := range cn.states {
		if r, ok := cn.tr.Get(id); ok && r.State != prev {
			changed = append(changed, r)
		}
	}
	// Oldest request first, so that traces come out the same every time.
	sort.Slice(changed, func(i, j int) bool {
		a, _ := changed[i].ID.Int()
		b, _ := changed[j].ID.Int()
		return a < b
	})
	for _, r := range changed {
		when := at
		if !r.Ended.IsZero() {
			when = r.Ended
		}
		_ = cn.trace.State(when, r, cn.states[r.ID])
		cn.states[r.ID] = r.State
	}
	vl := cn.tr.Violations()
	if fresh := vl.Total() - cn.violations; fresh > 0 {
		first := max(0, vl.Len()-int(min(fresh, int64(vl.Len()))))
		for i := first; i < vl.Len(); i++ {
			_ = cn.trace.Violation(vl.At(i))
		}
		cn.violations = vl.Total()
	}
}

// begin starts a tracked request and sends it. A request the client could
// not send is failed in the tracker at once (connection_lost when the
// connection is gone), so that nothing waits for it.
func (cn *conn) begin(ctx context.Context, method string, params json.RawMessage, opts session.RequestOptions) (*session.Request, error) {
	now := time.Now()
	r := cn.tr.Begin(method, params, opts, now)
	cn.states[r.ID] = r.State
	if cn.trace != nil {
		_ = cn.trace.State(now, r, r.State)
	}
	err := cn.c.Send(ctx, client.Request{ID: r.ID, Method: method, Params: params, ProgressToken: r.ProgressToken})
	if err != nil {
		// The tracker learns about failures from client events only; this
		// one happened before the request reached the client, so it is
		// reported to it the same way.
		cn.apply(event.Event{Kind: event.RequestFailed, Time: time.Now(), RequestID: r.ID, Err: err,
			LostConnection: errors.Is(err, client.ErrClosed)})
		return r, err
	}
	return r, nil
}

// cancel records the intent to cancel a request and has the client send
// the signal its transport and era require. When the client says the
// request is no longer in flight (its answer is already on the way), the
// tracker settles it when that answer is applied.
func (cn *conn) cancel(id wire.ID, reason string, cause session.CancelCause) error {
	now := time.Now()
	ok, why := cn.tr.RequestCancel(id, reason, cause, now)
	if !ok {
		return errors.New(why)
	}
	cn.traceChanges(now)
	if _, err := cn.c.Cancel(id, reason); err != nil && !errors.Is(err, client.ErrNotInFlight) {
		return err
	}
	return nil
}

// expire applies the tracker's deadlines and sends the cancels of the
// requests whose timeouts expired.
func (cn *conn) expire(now time.Time) {
	for _, x := range cn.tr.Expire(now) {
		cn.traceChanges(now)
		_, _ = cn.c.Cancel(x.ID, x.Reason)
	}
	cn.traceChanges(now)
}

// waitResult says why wait returned.
type waitResult uint8

const (
	waitDone        waitResult = iota // the condition holds
	waitDeadline                      // the deadline passed first
	waitInterrupted                   // ctx ended first
	waitClosed                        // the client's event channel closed
)

// wait applies events and deadlines until done reports true, deadline
// passes (zero: no deadline of its own), or ctx ends. It schedules one
// timer to the nearer of deadline and the tracker's next deadline, as the
// design asks: timeouts are the tracker's deadlines, never timers of ours.
func (cn *conn) wait(ctx context.Context, done func() bool, deadline time.Time) waitResult {
	for {
		if done() {
			return waitDone
		}
		now := time.Now()
		if !deadline.IsZero() && !now.Before(deadline) {
			return waitDeadline
		}
		next := deadline
		if d, ok := cn.tr.NextDeadline(); ok && (next.IsZero() || d.Before(next)) {
			next = d
		}
		var tick <-chan time.Time
		if !next.IsZero() {
			cn.timer.Reset(max(0, next.Sub(now)))
			tick = cn.timer.C
		}
		if len(cn.c.Events()) == 0 && cn.trace != nil {
			// About to wait: what is traced so far goes to the file, so a
			// run killed from outside still leaves its trace.
			_ = cn.trace.Flush()
		}
		select {
		case ev, ok := <-cn.c.Events():
			if !ok {
				cn.timer.Stop()
				return waitClosed
			}
			cn.apply(ev)
		case now := <-tick:
			cn.expire(now)
		case <-ctx.Done():
			cn.timer.Stop()
			return waitInterrupted
		case <-cn.hurry:
			cn.timer.Stop()
			return waitInterrupted
		}
		cn.timer.Stop()
	}
}

// settle waits, bounded, until a request is final.
func (cn *conn) settle(id wire.ID, bound time.Duration) waitResult {
	return cn.wait(context.Background(), func() bool {
		r, ok := cn.tr.Get(id)
		return !ok || r.State.IsFinal()
	}, time.Now().Add(bound))
}

// watch applies events for d, whatever happens.
func (cn *conn) watch(d time.Duration) {
	cn.wait(context.Background(), func() bool { return false }, time.Now().Add(d))
}

// close shuts the client down, applying and tracing the events it still
// emits. The client's Close waits for its goroutines, which may be blocked
// delivering events, so the channel is drained while it runs.
func (cn *conn) close() {
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

// Version is inflight's version, reported to servers as clientInfo and by
// --version.
const Version = "0.1.0"
