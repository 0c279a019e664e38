package session

import (
	"testing"

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
			flagged := false
			for i := 0; i < tr.Violations().Len(); i++ {
				if tr.Violations().At(i).Code == ViolationHostClosedStreamLegacy {
					flagged = true
				}
			}
			if flagged != tc.flagged {
				t.Errorf("flagged %v, want %v", flagged, tc.flagged)
			}
		})
	}
}
