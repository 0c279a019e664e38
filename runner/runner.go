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
	"sort"
	"strconv"
	"strings"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/target"
	"inflight/trace"
	"inflight/wire"
)

// Options configure a headless connection.
type Options struct {
	// Policy of the tracker.
	Timeout         time.Duration
	MaxTimeout      time.Duration
	ResetOnProgress bool
	LateWindow      time.Duration
	// Trace receives every event, state change and violation; nil for none.
	Trace *trace.Writer
	// Redactor hides the target's secrets in errors.
	Redactor *redact.Redactor
	// Inject keeps a way to write raw messages to the server beside the
	// client (Conn.Inject): on stdio the runner then starts the server
	// itself, to hold its stdin; on legacy HTTP it POSTs in the client's
	// session. The check battery uses it for what a well-behaved client
	// never sends.
	Inject bool
}

// Conn is one headless connection: the client, the tracker that follows its
// requests, and the trace. It is driven from one goroutine; the client's
// goroutines only hand it events through the client's channel.
type Conn struct {
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

	// inj writes raw messages (Options.Inject); nil when there is no way
	// to (modern HTTP). proc is the stdio server the runner started itself
	// for it, stopped by Close.
	inj  injector
	proc *process
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
	if !opts.Inject || t.IsHTTP() {
		cn, err := dial(ctx, t, opts, nil)
		if err == nil && opts.Inject && cn.info.Era != event.EraModern {
			hc := t.HTTPClient
			if hc == nil {
				hc = &http.Client{}
			}
			cn.inj = &httpInjector{hc: hc, url: t.URL, headers: t.Headers, info: cn.c.Info}
		}
		return cn, err
	}
	// On stdio the runner holds the server's stdin beside the client.
	var pipes *client.Pipes
	var proc *process
	var err error
	switch {
	case t.Pipes != nil && t.Command == "":
		pipes, err = t.Pipes(ctx)
	default:
		pipes, proc, err = startProcess(t)
	}
	if err != nil {
		return nil, err
	}
	stdin := &lockedStdin{w: pipes.Stdin}
	pipes.Stdin = stdin
	cn, err := dial(ctx, t, opts, pipes)
	if err != nil {
		stdin.Close()
		proc.stop(processStopWait)
		return nil, err
	}
	cn.inj, cn.proc = stdin, proc
	return cn, nil
}

// processStopWait bounds each step of stopping a server the runner
// started: its exit after stdin closed, after SIGTERM, after SIGKILL.
const processStopWait = 2 * time.Second

// dial is Dial with the stdio pipes given (nil: what the target gives).
func dial(ctx context.Context, t target.Target, opts Options, pipes *client.Pipes) (*Conn, error) {
	cfg, err := t.ClientConfigPipes(ctx, pipes)
	if err != nil {
		return nil, &errConnect{err}
	}
	cfg.LateWindow = opts.LateWindow
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

// apply feeds one event to the tracker, the trace and the observer.
func (cn *Conn) apply(ev event.Event) {
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
func (cn *Conn) traceChanges(at time.Time) {
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

// Info is what the connection learned at connect: transport, era,
// protocol version, server.
func (cn *Conn) Info() event.ConnInfo { return cn.info }

// Tracker is the tracker that follows the connection's requests. Read it
// between calls of the Conn's methods, from the goroutine that drives it.
func (cn *Conn) Tracker() *session.Tracker { return cn.tr }

// Observe has f see every event after the tracker applied it (an empty
// event after a cancel the Conn recorded itself).
func (cn *Conn) Observe(f func(ev event.Event)) { cn.observe = f }

// Begin starts a tracked request and sends it. A request the client could
// not send is failed in the tracker at once (connection_lost when the
// connection is gone), so that nothing waits for it.
func (cn *Conn) Begin(ctx context.Context, method string, params json.RawMessage, opts session.RequestOptions) (*session.Request, error) {
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

// Cancel records the intent to cancel a request and has the client send
// the signal its transport and era require. When the client says the
// request is no longer in flight (its answer is already on the way), the
// tracker settles it when that answer is applied.
func (cn *Conn) Cancel(id wire.ID, reason string, cause session.CancelCause) error {
	now := time.Now()
	if _, err := cn.tr.RequestCancel(id, reason, cause, now); err != nil {
		return err
	}
	cn.traceChanges(now)
	if _, err := cn.c.Cancel(id, reason); err != nil && !errors.Is(err, client.ErrNotInFlight) {
		return err
	}
	return nil
}

// expire applies the tracker's deadlines and sends the cancels of the
// requests whose timeouts expired.
func (cn *Conn) expire(now time.Time) {
	expired, _ := cn.tr.Expire(now)
	for _, x := range expired {
		cn.traceChanges(now)
		_, _ = cn.c.Cancel(x.ID, x.Reason)
	}
	cn.traceChanges(now)
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
			cn.expire(now)
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
// emits, and stops a server the runner started itself. The client's Close
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
	cn.proc.stop(processStopWait)
}

// CanInject reports whether Inject can write to the server (Options.Inject
// was set and the transport allows it: not on modern HTTP, which defines no
// client-to-server notifications).
func (cn *Conn) CanInject() bool { return cn.inj != nil }

// Inject writes one raw message to the server beside the client, which
// never sees it. On HTTP it returns the POST's status.
func (cn *Conn) Inject(ctx context.Context, raw []byte) (string, error) {
	if cn.inj == nil {
		return "", errors.New("no way to write raw messages on this connection")
	}
	return cn.inj.inject(ctx, raw)
}
