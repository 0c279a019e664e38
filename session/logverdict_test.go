package session

import (
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// logVerdicts is the verdict and time after the cancel of every received
// message's log entry, in order.
func logVerdicts(tr *Tracker) (verdicts []string, after []time.Duration) {
	lg := tr.Log()
	for i := 0; i < lg.Len(); i++ {
		if e := lg.At(i); e.Kind == event.Received {
			verdicts = append(verdicts, e.Verdict)
			after = append(after, e.AfterCancel)
		}
	}
	return verdicts, after
}

// The protocol log carries the tracker's own verdict on each message, the
// one a trace writes (Verdict of the changes Apply returned), so that the
// log needs no judgement of its own.
func TestLogEntryCarriesTheVerdict(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	r := h.begin(0, wire.MethodToolsCall, `{"name":"stubborn"}`)
	h.roundTrip(10, 20*time.Millisecond)
	var traced []string
	recv := func(at int, raw string) {
		ev := msgEvent(t, event.Received, at, raw)
		traced = append(traced, Verdict(ev.Kind, h.tr.Apply(ev)))
	}
	recv(50, progress(1, 10))
	h.cancel(100, r, CauseUser)
	h.cancelSent(100, r, event.SignalNotification)
	recv(105, progress(1, 20)) // within half the round trip: crossed
	recv(400, progress(1, 30)) // late
	recv(2100, result(1, complete))
	got, after := logVerdicts(h.tr)
	want := []string{"", VerdictCrossed, VerdictLate, VerdictLate}
	wantAfter := []time.Duration{0, 5 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second}
	for i := range want {
		expect(t, "verdict", got[i], want[i])
		expect(t, "verdict the trace carries", got[i], traced[i])
		expect(t, "after the cancel", after[i], wantAfter[i])
	}
}

// A response judged crossed because the cancel's send time was not known
// yet is relabelled late in the log when the time, known now, says so.
func TestLogVerdictRelabelled(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	r := h.begin(0, wire.MethodToolsCall, `{"name":"stubborn"}`)
	h.roundTrip(10, 2*time.Millisecond)
	h.cancel(100, r, CauseUser)
	h.recv(300, result(1, complete)) // the signal has not left: crossed for now
	if got, _ := logVerdicts(h.tr); got[0] != VerdictCrossed {
		t.Fatalf("before the send time is known: %q, want crossed", got[0])
	}
	h.cancelSent(100, r, event.SignalNotification)
	got, _ := logVerdicts(h.tr)
	expect(t, "verdict once the cancel's time is known", got[0], VerdictLate)
	expect(t, "request crossed", r.Late.Crossed, false)
}

// A connection lost with a request in flight: what comes after is late
// from when the request was given up.
func TestLogVerdictAfterALoss(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
	h.apply(event.Event{Kind: event.TransportClosed, Time: ms(100)})
	h.recv(400, progress(1, 10))
	got, after := logVerdicts(h.tr)
	expect(t, "verdict", got[0], VerdictLate)
	expect(t, "after", after[0], 300*time.Millisecond)
}

func TestNumberWordsIntegersAsIntegers(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{1e6, "1000000"}, {521367, "521367"}, {0.5, "0.5"}, {-3, "-3"}, {1e308, "1e+308"}, {1e-300, "1e-300"}, {0, "0"}} {
		expect(t, "number", number(c.v), c.want)
	}
}
