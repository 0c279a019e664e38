package session

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

const (
	complete = `{"resultType":"complete","content":[]}`
	tcall    = `{"name":"slow","arguments":{}}`
)

// outcome is what a lifecycle case expects of request 1 at the end.
type outcome struct {
	state        State
	ended        int // ms; -1: not ended
	late         bool
	crossed      bool
	afterCancel  time.Duration
	lateProgress int
	crossedProg  int // Late.ProgressCrossed
	progress     int // Progress.Count
	toolError    bool
	errCode      int
	localError   string // substring
	flagged      bool
	cause        CancelCause
	signal       event.CancelSignal
	violations   []string // codes recorded by the tracker, in order
}

func TestLifecycle(t *testing.T) {
	modern, legacy := event.EraModern, event.EraLegacy
	stdio, http := event.TransportStdio, event.TransportHTTP
	cases := []struct {
		name      string
		era       event.Era
		transport event.TransportKind
		cfg       Config
		method    string
		params    string
		script    func(h *harness, r *Request)
		want      outcome
	}{
		{
			name: "completed", era: modern,
			script: func(h *harness, r *Request) { h.recv(50, result(1, complete)) },
			want:   outcome{state: StateCompleted, ended: 50},
		},
		{
			name: "progress then completed", era: modern,
			script: func(h *harness, r *Request) {
				h.recv(10, progress(1, 10))
				h.recv(20, progress(1, 20))
				h.recv(30, result(1, complete))
			},
			want: outcome{state: StateCompleted, ended: 30, progress: 2},
		},
		{
			name: "json-rpc error is failed", era: modern,
			script: func(h *harness, r *Request) { h.recv(40, rpcError(1, wire.CodeInvalidParams, "bad")) },
			want:   outcome{state: StateFailed, ended: 40, errCode: wire.CodeInvalidParams},
		},
		{
			name: "tool error is failed", era: modern, method: wire.MethodToolsCall, params: tcall,
			script: func(h *harness, r *Request) {
				h.recv(40, result(1, `{"resultType":"complete","content":[],"isError":true}`))
			},
			want: outcome{state: StateFailed, ended: 40, toolError: true},
		},
		{
			name: "isError false is completed", era: legacy, method: wire.MethodToolsCall, params: tcall,
			script: func(h *harness, r *Request) { h.recv(40, result(1, `{"content":[],"isError":false}`)) },
			want:   outcome{state: StateCompleted, ended: 40},
		},
		{
			name: "input required", era: modern,
			script: func(h *harness, r *Request) {
				h.recv(40, result(1, `{"resultType":"input_required","inputRequests":{}}`))
			},
			want: outcome{state: StateInputRequired, ended: 40},
		},
		{
			name: "modern result without resultType is complete and noted", era: modern,
			script: func(h *harness, r *Request) { h.recv(40, result(1, `{}`)) },
			want:   outcome{state: StateCompleted, ended: 40, flagged: true, violations: []string{ViolationMissingResultType}},
		},
		{
			name: "legacy result without resultType is complete", era: legacy,
			script: func(h *harness, r *Request) { h.recv(40, result(1, `{}`)) },
			want:   outcome{state: StateCompleted, ended: 40},
		},
		{
			name: "unknown resultType is invalid", era: modern,
			script: func(h *harness, r *Request) { h.recv(40, result(1, `{"resultType":"maybe"}`)) },
			want: outcome{state: StateFailed, ended: 40, flagged: true, localError: "resultType",
				violations: []string{ViolationUnknownResultType}},
		},
		{
			name: "cancel then response crossing it", era: legacy, transport: stdio,
			script: func(h *harness, r *Request) {
				h.roundTrip(10, 3*time.Millisecond)
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(101, result(1, complete))
			},
			want: outcome{state: StateCancelled, ended: 101, late: true, crossed: true, afterCancel: time.Millisecond,
				cause: CauseUser, signal: event.SignalNotification},
		},
		{
			// go-sdk and mcp-go servers answer a cancelled request with
			// "context canceled" about 1ms after the cancel, on a
			// connection whose ping takes a fraction of that: the answer is
			// a reaction to the cancel, not a crossing.
			name: "an answer 1ms after the cancel, on a 0.3ms round trip, is late", era: modern, transport: stdio,
			script: func(h *harness, r *Request) {
				h.roundTrip(10, 300*time.Microsecond)
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(101, rpcError(1, 0, "context canceled"))
			},
			// Its code, 0, is no JSON-RPC code: flagged as what it is
			// too (misaddressed.go).
			want: outcome{state: StateCancelled, ended: 101, late: true, afterCancel: time.Millisecond, errCode: 0,
				flagged: true, cause: CauseUser, signal: event.SignalNotification, violations: []string{ViolationCancelledErrorCode}},
		},
		{
			name: "with no round trip measured only what beats the signal crossed", era: legacy, transport: stdio,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(101, result(1, complete))
			},
			want: outcome{state: StateCancelled, ended: 101, late: true, afterCancel: time.Millisecond,
				flagged: true, cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "grace widens the crossing window", era: legacy, transport: stdio,
			cfg: Config{Grace: 5 * time.Millisecond},
			script: func(h *harness, r *Request) {
				h.roundTrip(10, 300*time.Microsecond)
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(105, result(1, complete))
			},
			want: outcome{state: StateCancelled, ended: 105, late: true, crossed: true, afterCancel: 5 * time.Millisecond,
				cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "cancel then response the server sent after seeing it", era: legacy, transport: stdio,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(500, result(1, complete))
			},
			want: outcome{state: StateCancelled, ended: 500, late: true, afterCancel: 400 * time.Millisecond,
				flagged: true, cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "response before the cancel signal left crossed it", era: legacy, transport: stdio,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.recv(150, result(1, complete))
				h.cancelSent(151, r, event.SignalNotification)
			},
			want: outcome{state: StateCancelled, ended: 150, late: true, crossed: true, afterCancel: 50 * time.Millisecond,
				cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "crossing uses the observed round trip", era: legacy, transport: stdio,
			script: func(h *harness, r *Request) {
				// Request 2 teaches a 30ms round trip.
				r2 := h.begin(0, "tools/list", "")
				h.recv(30, result(2, `{}`))
				expect(h.t, "rtt", h.tr.RoundTrip(), RoundTrip{D: 30 * time.Millisecond, Source: "tools/list", Samples: 1})
				_ = r2
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(112, result(1, complete))
			},
			want: outcome{state: StateCancelled, ended: 112, late: true, crossed: true, afterCancel: 12 * time.Millisecond,
				cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "stdio cancel settles after the late window", era: modern, transport: stdio,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				if got, _ := h.tr.expire(ms(5099)); len(got) != 0 || r.State != StateCancelRequested {
					h.t.Fatalf("settled early: %v %v", got, r.State)
				}
				h.tr.expire(ms(5100))
			},
			want: outcome{state: StateCancelled, ended: 5100, cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "response after settling is late and changes nothing", era: modern, transport: stdio,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.tr.expire(ms(5100))
				h.recv(6000, result(1, complete))
			},
			want: outcome{state: StateCancelled, ended: 5100, late: true, afterCancel: 5900 * time.Millisecond,
				flagged: true, cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "modern http: closing the stream settles at once", era: modern, transport: http,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.cancelSent(102, r, event.SignalStreamClosed)
				h.streamClosed(102, r, true)
			},
			want: outcome{state: StateCancelled, ended: 102, cause: CauseUser, signal: event.SignalStreamClosed},
		},
		{
			name: "legacy http: the server closing the stream settles", era: legacy, transport: http,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.cancelSent(101, r, event.SignalNotification)
				h.streamClosed(300, r, false)
			},
			want: outcome{state: StateCancelled, ended: 300, cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "legacy http: the client closing at the end of its window settles", era: legacy, transport: http,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseInterrupted)
				h.cancelSent(101, r, event.SignalNotification)
				h.streamClosed(5101, r, true)
			},
			want: outcome{state: StateCancelled, ended: 5101, cause: CauseInterrupted, signal: event.SignalNotification},
		},
		{
			name: "late error response is kept", era: legacy,
			script: func(h *harness, r *Request) {
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(400, rpcError(1, -32800, "request cancelled"))
			},
			want: outcome{state: StateCancelled, ended: 400, late: true, afterCancel: 300 * time.Millisecond,
				errCode: -32800, flagged: true, cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "progress after cancel is counted, not applied", era: modern,
			script: func(h *harness, r *Request) {
				h.recv(50, progress(1, 10))
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(150, progress(1, 20))
				h.recv(160, progress(1, 30))
				expect(h.t, "progress value", r.Progress.Value, 10.0)
				h.tr.expire(ms(5100))
				h.recv(5200, progress(1, 40))
			},
			want: outcome{state: StateCancelled, ended: 5100, progress: 1, lateProgress: 3, flagged: true,
				cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "progress within the round trip crossed the cancel, after it is late", era: legacy,
			script: func(h *harness, r *Request) {
				h.roundTrip(10, 20*time.Millisecond)
				h.recv(50, progress(1, 10))
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(105, progress(1, 20))
				h.recv(109, progress(1, 30))
				h.recv(110, progress(1, 40))
				h.tr.expire(ms(5100))
			},
			want: outcome{state: StateCancelled, ended: 5100, progress: 1, lateProgress: 1, crossedProg: 2, flagged: true,
				cause: CauseUser, signal: event.SignalNotification},
		},
		{
			name: "timeout then late response stays timed out", era: legacy,
			cfg: Config{DefaultTimeout: time.Second},
			script: func(h *harness, r *Request) {
				got, _ := h.tr.expire(ms(1000))
				if len(got) != 1 || got[0].ID != r.ID || got[0].Reason != "timeout" || got[0].Limit != LimitTimeout {
					h.t.Fatalf("expire = %+v", got)
				}
				h.cancelSent(1000, r, event.SignalNotification)
				h.tr.expire(ms(6000))
				h.recv(7000, result(1, complete))
			},
			want: outcome{state: StateTimedOut, ended: 6000, late: true, afterCancel: 6 * time.Second, flagged: true,
				cause: CauseTimeout, signal: event.SignalNotification},
		},
		{
			name: "request failed", era: modern,
			script: func(h *harness, r *Request) {
				h.apply(event.Event{Kind: event.RequestFailed, Time: ms(70), RequestID: r.ID, Err: errors.New("HTTP 500")})
			},
			want: outcome{state: StateFailed, ended: 70, localError: "HTTP 500"},
		},
		{
			name: "request lost", era: modern,
			script: func(h *harness, r *Request) {
				h.apply(event.Event{Kind: event.RequestFailed, Time: ms(70), RequestID: r.ID, Err: errors.New("stream broke"), LostConnection: true})
			},
			want: outcome{state: StateConnectionLost, ended: 70, localError: "stream broke"},
		},
		{
			name: "request failed while cancelling settles", era: modern,
			script: func(h *harness, r *Request) {
				h.cancel(10, r, CauseShutdown)
				h.apply(event.Event{Kind: event.RequestFailed, Time: ms(70), RequestID: r.ID, Err: errors.New("x"), LostConnection: true})
			},
			want: outcome{state: StateCancelled, ended: 70, cause: CauseShutdown},
		},
		{
			name: "transport closed", era: modern,
			script: func(h *harness, r *Request) {
				h.apply(event.Event{Kind: event.TransportClosed, Time: ms(80), Err: errors.New("exit status 1")})
			},
			want: outcome{state: StateConnectionLost, ended: 80, localError: "exit status 1"},
		},
		{
			name: "transport closed while cancelling settles", era: modern,
			script: func(h *harness, r *Request) {
				h.cancel(10, r, CauseTimeout)
				h.cancelSent(10, r, event.SignalNotification)
				h.apply(event.Event{Kind: event.TransportClosed, Time: ms(80)})
			},
			want: outcome{state: StateTimedOut, ended: 80, cause: CauseTimeout, signal: event.SignalNotification},
		},
		{
			name: "transport closed before the cancel left loses the request", era: modern,
			script: func(h *harness, r *Request) {
				h.cancel(10, r, CauseUser)
				h.apply(event.Event{Kind: event.TransportClosed, Time: ms(80)})
			},
			want: outcome{state: StateConnectionLost, ended: 80, cause: CauseUser, localError: "the cancel could not be sent"},
		},
		{
			name: "response after connection lost is late", era: legacy,
			script: func(h *harness, r *Request) {
				h.apply(event.Event{Kind: event.RequestFailed, Time: ms(70), RequestID: r.ID, Err: errors.New("gone"), LostConnection: true})
				h.recv(90, result(1, complete))
			},
			want: outcome{state: StateConnectionLost, ended: 70, late: true, afterCancel: 20 * time.Millisecond,
				localError: "gone", flagged: true},
		},
		{
			name: "client cancelling on its own is followed", era: modern, transport: stdio,
			script: func(h *harness, r *Request) {
				h.cancelSent(100, r, event.SignalNotification)
				h.tr.expire(ms(5100))
			},
			want: outcome{state: StateCancelled, ended: 5100, cause: CauseShutdown, signal: event.SignalNotification},
		},
		{
			name: "duplicate response", era: modern,
			script: func(h *harness, r *Request) {
				h.recv(40, result(1, complete))
				h.recv(50, result(1, complete))
			},
			want: outcome{state: StateCompleted, ended: 40, flagged: true, violations: []string{ViolationDuplicateResponse}},
		},
		{
			name: "second late response is a duplicate", era: modern,
			script: func(h *harness, r *Request) {
				h.cancel(10, r, CauseUser)
				h.recv(40, result(1, complete))
				h.recv(50, result(1, complete))
			},
			want: outcome{state: StateCancelled, ended: 40, late: true, crossed: true, afterCancel: 30 * time.Millisecond,
				flagged: true, cause: CauseUser, violations: []string{ViolationDuplicateResponse}},
		},
		{
			// IDs are compared as written (issue 14, item 11): inflight
			// sent 1, so 1.0 answers nothing.
			name: "response id 1.0 is not request 1", era: modern,
			script: func(h *harness, r *Request) {
				h.recv(40, `{"jsonrpc":"2.0","id":1.0,"result":{"resultType":"complete"}}`)
			},
			want: outcome{state: StatePending, ended: -1, violations: []string{ViolationUnknownResponseID}},
		},
		{
			name: `response id "1" is not request 1`, era: modern,
			script: func(h *harness, r *Request) {
				h.recv(40, `{"jsonrpc":"2.0","id":"1","result":{"resultType":"complete"}}`)
			},
			want: outcome{state: StatePending, ended: -1, violations: []string{ViolationUnknownResponseID}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			transport := c.transport
			if transport == 0 {
				transport = event.TransportStdio
			}
			h := newHarness(t, c.cfg, c.era, transport)
			method := c.method
			if method == "" {
				method = "prompts/get"
			}
			r := h.begin(0, method, c.params)
			c.script(h, r)
			w := c.want
			expect(t, "state", r.State, w.state)
			if w.ended < 0 {
				expect(t, "ended", r.Ended, time.Time{})
			} else {
				expect(t, "ended", r.Ended, ms(w.ended))
			}
			expect(t, "late response", r.Late.Response, w.late)
			expect(t, "crossed", r.Late.Crossed, w.crossed)
			expect(t, "after cancel", r.Late.AfterCancel, w.afterCancel)
			expect(t, "late progress", r.Late.ProgressAfterCancel, w.lateProgress)
			expect(t, "crossed progress", r.Late.ProgressCrossed, w.crossedProg)
			expect(t, "progress count", r.Progress.Count, w.progress)
			expect(t, "tool error", r.ToolError, w.toolError)
			code := 0
			if r.Error != nil {
				code = r.Error.Code
			}
			expect(t, "error code", code, w.errCode)
			if !strings.Contains(r.LocalError, w.localError) || (w.localError == "") != (r.LocalError == "") {
				t.Errorf("local error = %q, want it to contain %q", r.LocalError, w.localError)
			}
			expect(t, "flagged", r.Flagged(), w.flagged)
			var cause CancelCause
			var signal event.CancelSignal
			if r.Cancel != nil {
				cause, signal = r.Cancel.Cause, r.Cancel.Signal
			}
			expect(t, "cause", cause, w.cause)
			expect(t, "signal", signal, w.signal)
			if got := codes(h.tr); !slices.Equal(got, w.violations) {
				t.Errorf("violations = %v, want %v", got, w.violations)
			}
			checkInvariants(t, h.tr)
		})
	}
}

func codes(tr *Tracker) []string {
	var out []string
	for i := 0; i < tr.Violations().Len(); i++ {
		out = append(out, tr.Violations().At(i).Code)
	}
	return out
}

// checkInvariants recomputes what the tracker keeps incrementally.
func checkInvariants(t *testing.T, tr *Tracker) {
	t.Helper()
	var want Counts
	want.Evicted = tr.counts.Evicted
	active := 0
	for i := 0; i < tr.Len(); i++ {
		r := tr.At(i)
		if i > 0 && tr.At(i-1).seq >= r.seq {
			t.Fatalf("history out of order at %d", i)
		}
		if got, ok := tr.Index(r.ID); !ok || got != i {
			t.Fatalf("Index(%s) = %d, %v; want %d", r.ID, got, ok, i)
		}
		if g, ok := tr.Get(r.ID); !ok || g != r {
			t.Fatalf("Get(%s) is not At(%d)", r.ID, i)
		}
		switch {
		case r.State == StateCancelRequested:
			want.Cancelling++
		case r.State.IsFinal():
			want.Done++
		default:
			want.InFlight++
		}
		if r.Flagged() {
			want.Flagged++
		}
		if r.flagged != ((r.Late.Response && !r.Late.Crossed) || r.Late.ProgressAfterCancel > 0 || r.Late.NotificationsAfterCancel > 0 || r.Violations > 0) {
			t.Errorf("request %s: flagged=%v does not match its late traffic and violations", r.ID, r.flagged)
		}
		if r.IsActive() {
			active++
			if r.activePos < 0 || tr.active[r.activePos] != r {
				t.Fatalf("active request %s not at its slot", r.ID)
			}
			if !r.Ended.IsZero() {
				t.Errorf("active request %s has an end time", r.ID)
			}
		} else if r.activePos != -1 {
			t.Fatalf("final request %s still in the active set", r.ID)
		}
		if r.State.IsFinal() && r.Ended.IsZero() {
			t.Errorf("final request %s has no end time", r.ID)
		}
	}
	if active != len(tr.active) {
		t.Fatalf("active set has %d, history %d active", len(tr.active), active)
	}
	if len(tr.byID) != tr.Len() {
		t.Fatalf("byID has %d, history %d", len(tr.byID), tr.Len())
	}
	if tr.Counts() != want {
		t.Fatalf("Counts = %+v, recomputed %+v", tr.Counts(), want)
	}
}

func TestCancelRefusals(t *testing.T) {
	h := newStdio(t, event.EraModern)
	done := h.begin(0, "tools/list", "")
	h.recv(100, result(1, complete))
	rf := refusal(h.tr.RequestCancel(done.ID, "user", CauseUser, ms(2200)))
	expect(t, "refused", *rf, Refused{Why: RefusedFinal, ID: done.ID, State: StateCompleted, Since: ms(100)})
	expect(t, "state", done.State, StateCompleted)
	expect(t, "cancel", done.Cancel == nil, true)

	live := h.begin(0, "tools/list", "")
	h.cancel(300, live, CauseUser)
	rf = refusal(h.tr.RequestCancel(live.ID, "again", CauseUser, ms(350)))
	expect(t, "refused twice", *rf, Refused{Why: RefusedCancelling, ID: live.ID, State: StateCancelRequested, Since: ms(300)})
	expect(t, "reason kept", live.Cancel.Reason, "user")
	expect(t, "cancel at kept", live.Cancel.At, ms(300))

	rf = refusal(h.tr.RequestCancel(id(99), "", CauseUser, ms(400)))
	expect(t, "unknown", *rf, Refused{Why: RefusedUnknown, ID: id(99)})

	h.tr.expire(ms(5300))
	rf = refusal(h.tr.RequestCancel(live.ID, "", CauseUser, ms(5400)))
	expect(t, "after settle", *rf, Refused{Why: RefusedFinal, ID: live.ID, State: StateCancelled, Since: ms(5300)})
	checkInvariants(t, h.tr)
}

// TestInitializeNeverCancelled: "The initialize request MUST NOT be
// cancelled by clients" (2025-11-25). A user may still send one by hand;
// the tracker refuses to cancel it, and when it times out gives up on it
// without asking for a cancel.
func TestInitializeNeverCancelled(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	r := h.begin(0, wire.MethodInitialize, `{}`)
	rf := refusal(h.tr.RequestCancel(r.ID, "user", CauseUser, ms(10)))
	expect(t, "refused", *rf, Refused{Why: RefusedInitialize, ID: r.ID, State: StatePending})
	expect(t, "state", r.State, StatePending)
	other := h.begin(0, wire.MethodToolsList, "")
	out, _ := h.tr.expire(r.Timeout.Deadline)
	if len(out) != 1 || out[0].ID != other.ID {
		t.Fatalf("expire = %+v, want only the tools/list to cancel", out)
	}
	expect(t, "initialize state", r.State, StateTimedOut)
	expect(t, "initialize cancel", r.Cancel == nil, true)
	checkInvariants(t, h.tr)
}

func TestListenLifecycle(t *testing.T) {
	listen := wire.MethodSubscriptionsListen
	updated := wire.NotifyResourceUpdated
	cases := []struct {
		name      string
		transport event.TransportKind
		script    func(h *harness, r *Request)
		state     State
		acked     bool
		notes     int
		lateNotes int
		late      bool
		codes     []string
	}{
		{
			name: "acknowledged and listening",
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(wire.NotifySubscriptionAck, 1))
				h.recv(20, subNotification(updated, 1))
				h.recv(30, subNotification(updated, 1))
				if d, l := r.Remaining(ms(40)); l != LimitNone || d != 0 {
					h.t.Errorf("listening Remaining = %v %v", d, l)
				}
				if _, ok := h.tr.NextDeadline(); ok {
					h.t.Error("a listening subscription has a deadline")
				}
				if got, _ := h.tr.expire(ms(3600_000)); len(got) != 0 {
					h.t.Errorf("listening subscription expired: %v", got)
				}
			},
			state: StateListening, acked: true, notes: 2,
		},
		{
			name: "ended by a result",
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(wire.NotifySubscriptionAck, 1))
				h.recv(50, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
			},
			state: StateEndedByServer, acked: true,
		},
		{
			name: "a result before any acknowledgment",
			script: func(h *harness, r *Request) {
				h.recv(50, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`)
			},
			state: StateEndedByServer, codes: []string{ViolationResultBeforeAck},
		},
		{
			name: "ended by the server's notifications/cancelled, then a result",
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(wire.NotifySubscriptionAck, 1))
				h.recv(50, serverCancel(1))
				h.recv(60, result(1, complete))
			},
			state: StateEndedByServer, acked: true,
		},
		{
			name: "cancelled by the client on stdio",
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(wire.NotifySubscriptionAck, 1))
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalNotification)
				h.recv(120, subNotification(updated, 1))
				h.tr.expire(ms(5100))
			},
			state: StateCancelled, acked: true, lateNotes: 1,
		},
		{
			name: "cancelled by closing its stream", transport: event.TransportHTTP,
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(wire.NotifySubscriptionAck, 1))
				h.cancel(100, r, CauseUser)
				h.cancelSent(100, r, event.SignalStreamClosed)
				h.streamClosed(100, r, true)
			},
			state: StateCancelled, acked: true,
		},
		{
			name: "client cancel confirmed by the server",
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(wire.NotifySubscriptionAck, 1))
				h.cancel(100, r, CauseUser)
				h.recv(110, serverCancel(1))
			},
			state: StateCancelled, acked: true,
		},
		{
			name: "unacknowledged listen times out",
			script: func(h *harness, r *Request) {
				if got, _ := h.tr.expire(ms(60_000)); len(got) != 1 {
					h.t.Fatalf("expire = %v", got)
				}
				h.tr.expire(ms(65_000))
			},
			state: StateTimedOut,
		},
		{
			name: "notification before the acknowledgment",
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(updated, 1))
				h.recv(20, subNotification(wire.NotifySubscriptionAck, 1))
			},
			state: StateListening, acked: true, notes: 1, codes: []string{ViolationNotificationBeforeAck},
		},
		{
			name: "transport lost",
			script: func(h *harness, r *Request) {
				h.recv(10, subNotification(wire.NotifySubscriptionAck, 1))
				h.apply(event.Event{Kind: event.TransportClosed, Time: ms(500)})
			},
			state: StateConnectionLost, acked: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			transport := c.transport
			if transport == 0 {
				transport = event.TransportStdio
			}
			h := newHarness(t, Config{}, event.EraModern, transport)
			r := h.begin(0, listen, `{"notifications":{"resourceSubscriptions":["file:///x"]}}`)
			expect(t, "is listen", r.IsListen(), true)
			c.script(h, r)
			expect(t, "state", r.State, c.state)
			expect(t, "acked", r.Acked, c.acked)
			expect(t, "notifications", r.Notifications, c.notes)
			expect(t, "late notifications", r.Late.NotificationsAfterCancel, c.lateNotes)
			expect(t, "late response", r.Late.Response, c.late)
			if got := codes(h.tr); !slices.Equal(got, c.codes) {
				t.Errorf("violations = %v, want %v", got, c.codes)
			}
			checkInvariants(t, h.tr)
		})
	}
}

func TestTransportClosedEndsEverything(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	pending := h.begin(0, "tools/list", "")
	cancelling := h.begin(0, "tools/list", "")
	done := h.begin(0, "tools/list", "")
	h.recv(10, result(3, `{}`))
	h.cancel(20, cancelling, CauseUser)
	h.cancelSent(20, cancelling, event.SignalNotification)
	h.apply(event.Event{Kind: event.TransportClosed, Time: ms(30)})
	expect(t, "pending", pending.State, StateConnectionLost)
	expect(t, "cancelling", cancelling.State, StateCancelled)
	expect(t, "done", done.State, StateCompleted)
	closed, err := h.tr.TransportClosed()
	expect(t, "closed", closed, true)
	expect(t, "err", err, nil)
	expect(t, "counts", h.tr.Counts(), Counts{Done: 3})
	if _, ok := h.tr.NextDeadline(); ok {
		t.Error("deadline after the transport closed")
	}
	checkInvariants(t, h.tr)
}

func TestInternalEventsOnlyLogged(t *testing.T) {
	h := newStdio(t, event.EraUnknown)
	ev := msgEvent(t, event.Received, 5, `{"jsonrpc":"2.0","id":"inflight-1","result":{}}`)
	ev.Internal = true
	h.apply(ev)
	conn := event.Event{Kind: event.Connected, Time: ms(6), Internal: true, Info: &event.ConnInfo{Era: event.EraLegacy, ServerName: "demo"}}
	h.apply(conn)
	expect(t, "violations", h.tr.Violations().Total(), int64(0))
	expect(t, "log", h.tr.Log().Len(), 2)
	expect(t, "internal mark", h.tr.Log().At(0).Internal, true)
	info, ok := h.tr.Conn()
	expect(t, "connected", ok, true)
	expect(t, "server", info.ServerName, "demo")
	expect(t, "era", h.tr.Era(), event.EraLegacy)
}
