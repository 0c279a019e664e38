package session

import (
	"errors"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// A request may wait out its own late window, and the user may stop
// watching before it ends; what arrives after that is still late.
func TestPerRequestLateWindowAndStopWatching(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	r := h.tr.Begin(wire.MethodToolsCall, []byte(tcall), RequestOptions{LateWindow: 30 * time.Second}, ms(0))
	h.sent(0, r)
	if r.LateWindow != 30*time.Second {
		t.Fatalf("LateWindow = %v, want the request's 30s", r.LateWindow)
	}
	d := h.begin(0, wire.MethodToolsCall, tcall)
	if d.LateWindow != DefaultLateWindow {
		t.Fatalf("default LateWindow = %v, want %v", d.LateWindow, DefaultLateWindow)
	}
	h.cancel(100, r, CauseUser)
	h.cancelSent(100, r, event.SignalNotification)
	if !r.Cancel.SettleBy.Equal(ms(30100)) {
		t.Fatalf("SettleBy = %v, want 30.1s", r.Cancel.SettleBy.Sub(t0))
	}
	// The default window would have settled it at 5.1 s; its own has not.
	h.tr.expire(ms(5200))
	if r.State != StateCancelRequested {
		t.Fatalf("state at 5.2s = %v, want cancel_requested", r.State)
	}

	var rf *Refused
	if _, err := h.tr.StopWatching(d.ID, ms(5300)); !errors.As(err, &rf) || rf.Why != RefusedNotCancelling {
		t.Fatalf("StopWatching a running request: %v", err)
	}
	c, err := h.tr.StopWatching(r.ID, ms(6000))
	if err != nil || c.To != StateCancelled || r.State != StateCancelled || !r.Ended.Equal(ms(6000)) {
		t.Fatalf("StopWatching = %+v, %v; state %v", c, err, r.State)
	}
	if _, err := h.tr.StopWatching(r.ID, ms(6100)); !errors.As(err, &rf) || rf.Why != RefusedFinal {
		t.Fatalf("StopWatching twice: %v", err)
	}
	h.recv(7000, result(1, complete))
	if !r.Late.Response || r.Late.Crossed || r.State != StateCancelled {
		t.Fatalf("a result after the watch stopped: late %+v, state %v", r.Late, r.State)
	}
}
