package session

import (
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// What follows a cancel is kept with its first and last arrival, so that a
// reader can tell a server sending every second from one that went quiet:
// at the end of a two-second watch both show a last message a second old.
func TestLateFirstAndLastArrival(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	r := h.begin(0, wire.MethodToolsCall, tcall)
	h.cancel(100, r, CauseUser)
	h.cancelSent(100, r, event.SignalNotification)
	if !r.Late.FirstAt.IsZero() || !r.Late.LastAt.IsZero() {
		t.Fatalf("before anything came: first %v last %v", r.Late.FirstAt, r.Late.LastAt)
	}
	h.recv(1100, progress(1, 1))
	h.recv(2100, progress(1, 2))
	h.recv(3100, progress(1, 3))
	if got := r.Late.FirstAt.Sub(t0); got != 1100*time.Millisecond {
		t.Errorf("FirstAt = %v, want 1.1s", got)
	}
	if got := r.Late.LastAt.Sub(t0); got != 3100*time.Millisecond {
		t.Errorf("LastAt = %v, want 3.1s", got)
	}
	if r.Late.ProgressAfterCancel != 3 {
		t.Errorf("ProgressAfterCancel = %d, want 3", r.Late.ProgressAfterCancel)
	}
}
