package session

import (
	"errors"
	"slices"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// kinds summarises changes as "kind:id:detail" strings for comparison.
func kinds(chs []Change) []string {
	var out []string
	for _, c := range chs {
		switch c.Kind {
		case ChangeState:
			out = append(out, "state:"+c.ID.String()+":"+c.From.String()+">"+c.To.String())
		case ChangeLate:
			out = append(out, "late:"+c.ID.String()+":"+c.What.String())
		case ChangeCrossed:
			out = append(out, "crossed:"+c.ID.String()+":"+c.What.String())
		case ChangeViolation:
			out = append(out, "violation:"+c.Violation.Code)
		}
	}
	return out
}

// Every method that changes something says what it changed, so that no
// consumer has to diff snapshots.
func TestChangesSayWhatChanged(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	tr := h.tr
	tr.Apply(event.Event{Kind: event.RoundTrip, Time: ms(1), RTT: 10 * time.Millisecond, Text: "ping"})
	r := h.begin(0, wire.MethodToolsCall, tcall)
	ev := msgEvent(t, event.Received, 20, progress(1, 1))
	if got := kinds(tr.Apply(ev)); !slices.Equal(got, []string{"state:1:pending>running"}) {
		t.Fatalf("first progress: %v", got)
	}
	if got := tr.Apply(msgEvent(t, event.Received, 30, progress(1, 2))); len(got) != 0 {
		t.Fatalf("progress that changes no state reported %v", kinds(got))
	}
	ch, err := tr.RequestCancel(r.ID, "user", CauseUser, ms(100))
	if err != nil || ch.Kind != ChangeState || ch.To != StateCancelRequested || ch.From != StateRunning || !ch.At.Equal(ms(100)) {
		t.Fatalf("RequestCancel = %+v, %v", ch, err)
	}
	tr.Apply(event.Event{Kind: event.CancelSent, Time: ms(100), RequestID: r.ID, Signal: event.SignalNotification})
	if got := kinds(tr.Apply(msgEvent(t, event.Received, 103, progress(1, 3)))); !slices.Equal(got, []string{"crossed:1:progress"}) {
		t.Fatalf("progress within the round trip: %v", got)
	}
	if got := kinds(tr.Apply(msgEvent(t, event.Received, 150, progress(1, 4)))); !slices.Equal(got, []string{"late:1:progress"}) {
		t.Fatalf("progress after the round trip: %v", got)
	}
	got := kinds(tr.Apply(msgEvent(t, event.Received, 160, result(1, complete))))
	if !slices.Equal(got, []string{"late:1:response", "state:1:cancel_requested>cancelled"}) {
		t.Fatalf("late response: %v", got)
	}
	got = kinds(tr.Apply(msgEvent(t, event.Received, 170, result(7, complete))))
	if !slices.Equal(got, []string{"violation:" + ViolationUnknownResponseID}) {
		t.Fatalf("unknown ID: %v", got)
	}

	// expire reports the cancels to send and every transition it made.
	h2 := newHarness(t, Config{DefaultTimeout: time.Second}, event.EraLegacy, event.TransportStdio)
	a := h2.begin(0, wire.MethodToolsCall, tcall)
	cancels, changes := h2.tr.expire(ms(1000))
	if len(cancels) != 1 || cancels[0].ID != a.ID || cancels[0].Change.To != StateCancelRequested {
		t.Fatalf("expire cancels = %+v", cancels)
	}
	if got := kinds(changes); !slices.Equal(got, []string{"state:1:pending>cancel_requested"}) {
		t.Fatalf("expire changes = %v", got)
	}
	_, changes = h2.tr.expire(ms(7000))
	if got := kinds(changes); !slices.Equal(got, []string{"state:1:cancel_requested>timed_out"}) {
		t.Fatalf("expire settling = %v", got)
	}
}

// A refused action is a typed value; the words belong to its consumers.
func TestRefusalsAreTyped(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	r := h.begin(0, wire.MethodToolsCall, tcall)
	h.recv(10, result(1, complete))
	_, err := h.tr.AdjustTimeout(r.ID, time.Second, ms(20))
	var rf *Refused
	if !errors.As(err, &rf) || rf.Why != RefusedFinal || rf.State != StateCompleted || !rf.Since.Equal(ms(10)) {
		t.Fatalf("AdjustTimeout on a completed request: %v", err)
	}
	l := h.begin(20, wire.MethodSubscriptionsListen, `{}`)
	l.Acked, l.State = true, StateListening // as onAck leaves it
	if _, err := h.tr.AdjustTimeout(l.ID, time.Second, ms(30)); !errors.As(err, &rf) || rf.Why != RefusedNoTimeout {
		t.Fatalf("AdjustTimeout on a listening subscription: %v", err)
	}
}

// The round trip is the least of the recent samples, so it follows a
// connection whose delay grows, and the era probe is never one.
func TestRoundTripIsTheLeastRecentSample(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	tr := h.tr
	if tr.RoundTrip().Measured() || tr.CrossingWindow() != 0 {
		t.Fatalf("before any sample: %+v, window %v", tr.RoundTrip(), tr.CrossingWindow())
	}
	// Internal traffic (the probe, initialize) teaches nothing.
	tr.Apply(event.Event{Kind: event.Sent, Time: ms(0), Internal: true, Raw: []byte(`{}`)})
	tr.Apply(event.Event{Kind: event.RoundTrip, Time: ms(1), RTT: time.Millisecond, Text: "ping"})
	tr.Apply(event.Event{Kind: event.RoundTrip, Time: ms(2), RTT: 400 * time.Microsecond, Text: "ping"})
	if got := tr.RoundTrip(); got != (RoundTrip{D: 400 * time.Microsecond, Source: "ping", Samples: 2}) {
		t.Fatalf("two pings: %+v", got)
	}
	for i := range rttSamples {
		tr.Apply(event.Event{Kind: event.RoundTrip, Time: ms(10 + i), RTT: 5 * time.Millisecond, Text: "ping"})
	}
	if got := tr.RoundTrip(); got.D != 5*time.Millisecond || got.Samples != rttSamples {
		t.Fatalf("after %d slower samples the old least should be gone: %+v", rttSamples, got)
	}
	h2 := newHarness(t, Config{Grace: 3 * time.Millisecond}, event.EraLegacy, event.TransportStdio)
	h2.roundTrip(0, time.Millisecond)
	if w := h2.tr.CrossingWindow(); w != 3500*time.Microsecond {
		t.Fatalf("window = %v, want half the round trip + grace", w)
	}
}

// What the server had written when the cancel left crossed it, however
// late it is read: under a flood the stdout pipe holds hundreds of lines
// written before the cancel, read long after it. What it wrote later is
// judged by time.
func TestCrossedByPositionInTheServersOutput(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	h.roundTrip(0, 200*time.Microsecond)
	r := h.begin(0, wire.MethodToolsCall, tcall)
	h.cancel(100, r, CauseUser)
	// At the cancel the server had written 5000 bytes; inflight had read 1000.
	h.apply(event.Event{Kind: event.CancelLeaving, Time: ms(100), RequestID: r.ID, Signal: event.SignalNotification, StreamEnd: 5000})
	h.cancelSent(100, r, event.SignalNotification)
	line := func(at int, end int64, v float64) {
		ev := msgEvent(t, event.Received, at, progress(1, v))
		ev.StreamEnd = end
		h.apply(ev)
	}
	line(150, 2000, 1) // written before the cancel, read 50ms after it
	line(300, 5000, 2) // the last byte written before the cancel
	line(301, 5100, 3) // written after: late
	expect(t, "crossed", r.Late.ProgressCrossed, 2)
	expect(t, "late", r.Late.ProgressAfterCancel, 1)
}

// A legacy HTTP cancel's POST can take long; the client says when it
// leaves (CancelLeaving) before the POST, so that progress read during the
// POST is judged against that moment, not taken as crossed for want of it.
func TestCancelLeavingBeforeASlowSend(t *testing.T) {
	h := newHarness(t, Config{}, event.EraLegacy, event.TransportHTTP)
	h.roundTrip(0, 500*time.Microsecond)
	r := h.begin(0, wire.MethodToolsCall, tcall)
	h.cancel(100, r, CauseUser)
	h.apply(event.Event{Kind: event.CancelLeaving, Time: ms(100), RequestID: r.ID, Signal: event.SignalNotification})
	for i := 1; i <= 5; i++ {
		h.recv(100+100*i, progress(1, float64(i)))
	}
	h.cancelSent(100, r, event.SignalNotification) // the POST ended a second later
	expect(t, "late", r.Late.ProgressAfterCancel, 5)
	expect(t, "crossed", r.Late.ProgressCrossed, 0)
}

// A closed connection's round trip is not the next one's.
func TestRoundTripIsPerConnection(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	h.roundTrip(0, time.Millisecond)
	h.apply(event.Event{Kind: event.TransportClosed, Time: ms(10)})
	if rt := h.tr.RoundTrip(); rt.D != time.Millisecond {
		t.Fatalf("the closed connection's reports lost its round trip: %+v", rt)
	}
	h.roundTrip(20, 3*time.Millisecond) // the next connection's first ping
	if rt := h.tr.RoundTrip(); rt.D != 3*time.Millisecond || rt.Samples != 1 {
		t.Fatalf("the next connection kept the closed one's samples: %+v", rt)
	}
}
