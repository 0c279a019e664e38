package session

import (
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// TestHostClosedStream judges a host closing its request's HTTP stream by
// the era: the cancel on modern HTTP (with or without a
// notifications/cancelled posted alongside), a flagged non-cancel on
// legacy HTTP unless the host sent the cancel, nothing for a request over.
func TestHostClosedStream(t *testing.T) {
	const modernCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	for _, tc := range []struct {
		name  string
		steps []struct {
			at   int
			kind event.Kind
			raw  string
		}
		closeAt  int
		state    State
		signal   event.CancelSignal
		cancelAt int
		flagged  bool
	}{
		{name: "modern: the closure is the cancel",
			steps: []struct {
				at   int
				kind event.Kind
				raw  string
			}{{0, event.Sent, modernCall}},
			closeAt: 50, state: StateCancelled, signal: event.SignalStreamClosed, cancelAt: 50},
		{name: "modern: a cancel read after the closure moves only its time",
			steps: []struct {
				at   int
				kind event.Kind
				raw  string
			}{{0, event.Sent, modernCall}, {60, event.Sent, hostCancel1}},
			closeAt: 50, state: StateCancelled, signal: event.SignalStreamClosed, cancelAt: 50},
		{name: "legacy: a closure without a cancel is flagged, the request left in flight",
			steps: []struct {
				at   int
				kind event.Kind
				raw  string
			}{{0, event.Sent, hostInit}, {1, event.Received, serverInit}, {10, event.Sent, hostCall1}},
			closeAt: 50, state: StatePending, flagged: true},
		{name: "legacy: the host's cancel with it is the cancel",
			steps: []struct {
				at   int
				kind event.Kind
				raw  string
			}{{0, event.Sent, hostInit}, {1, event.Received, serverInit}, {10, event.Sent, hostCall1}, {55, event.Sent, hostCancel1}},
			closeAt: 50, state: StateCancelRequested, signal: event.SignalNotification, cancelAt: 55},
		{name: "legacy: a request answered is not flagged",
			steps: []struct {
				at   int
				kind event.Kind
				raw  string
			}{{0, event.Sent, hostInit}, {1, event.Received, serverInit}, {10, event.Sent, hostCall1}, {20, event.Received, answer1}},
			closeAt: 50, state: StateCompleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(Config{})
			for _, s := range tc.steps {
				ev := msgEvent(t, s.kind, s.at, s.raw)
				if ev.Msg.Kind != wire.KindNotification {
					ev.RequestID = ev.Msg.ID
				}
				tr.Observe(ev)
			}
			tr.HostClosedStream(wire.IntID(1), ms(tc.closeAt))
			r, ok := tr.Get(wire.IntID(1))
			if !ok {
				t.Fatal("request 1 not tracked")
			}
			if r.State != tc.state {
				t.Errorf("state %s, want %s", r.State, tc.state)
			}
			if tc.signal != event.SignalNone {
				if r.Cancel == nil || r.Cancel.Cause != CauseHost || r.Cancel.Signal != tc.signal || !r.Cancel.SignalAt.Equal(ms(tc.cancelAt)) {
					t.Errorf("cancel %+v, want the host's by %s at %dms", r.Cancel, tc.signal, tc.cancelAt)
				}
			} else if r.Cancel != nil {
				t.Errorf("cancel %+v, want none", r.Cancel)
			}
			if hostClosedFlagged(tr) {
				t.Errorf("flagged at the closure: a legacy host may still resume the stream")
			}
			// The wait for a resumption (the late window, 5s) is over.
			tr.expire(ms(tc.closeAt + 5000))
			if got := hostClosedFlagged(tr); got != tc.flagged {
				t.Errorf("flagged %v once the wait was over, want %v", got, tc.flagged)
			}
		})
	}
}

func hostClosedFlagged(tr *Tracker) bool {
	for i := 0; i < tr.Violations().Len(); i++ {
		if tr.Violations().At(i).Code == ViolationHostClosedStreamLegacy {
			return true
		}
	}
	return false
}

// A legacy host whose stream broke and that resumes a stream (GET with
// Last-Event-ID) within the wait did not give up on its request: no flag,
// and the answer on the resumed stream completes it. One that resumes
// only after the wait was flagged at its end, which NextDeadline names.
func TestHostClosedStreamThenResumed(t *testing.T) {
	start := func() *Tracker {
		tr := NewTracker(Config{LateWindow: time.Second})
		for _, s := range []struct {
			at   int
			kind event.Kind
			raw  string
		}{{0, event.Sent, hostInit}, {1, event.Received, serverInit}, {10, event.Sent, hostCall1}} {
			tr.Observe(msgEvent(t, s.kind, s.at, s.raw))
		}
		tr.HostClosedStream(wire.IntID(1), ms(50))
		return tr
	}
	tr := start()
	if d, ok := tr.NextDeadline(); !ok || !d.Equal(ms(1050)) {
		t.Errorf("next deadline %v %v, want the wait's end at 1050ms", d, ok)
	}
	tr.HostResumed(ms(300))
	tr.Observe(msgEvent(t, event.Received, 400, answer1))
	tr.expire(ms(2000))
	if hostClosedFlagged(tr) {
		t.Error("a host that resumed within the wait is flagged")
	}
	if r, _ := tr.Get(wire.IntID(1)); r.State != StateCompleted {
		t.Errorf("state %s, want completed by the answer on the resumed stream", r.State)
	}

	tr = start()
	tr.expire(ms(1050))
	tr.HostResumed(ms(1200))
	if !hostClosedFlagged(tr) {
		t.Error("a host that resumed nothing in the wait is not flagged")
	}
	v := tr.Violations().At(tr.Violations().Len() - 1)
	if !strings.Contains(v.Detail, "resumed no stream in the 1s watched") {
		t.Errorf("the flag says %q", v.Detail)
	}
}
