package session

import (
	"errors"
	"testing"

	"inflight/client"
	"inflight/wire"
)

// Events wait in a channel between the client's reader and Apply, so the
// tracker may apply, after a cancel, traffic the client read before it. The
// event's own time decides whether it is late.
func TestTrafficReadBeforeTheCancelIsNotLate(t *testing.T) {
	t.Run("progress", func(t *testing.T) {
		h := newStdio(t, client.EraModern)
		r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
		h.cancel(100, r, CauseUser)
		h.recv(90, progress(1, 1)) // read at 90ms, applied after the cancel at 100ms
		if r.Late.ProgressAfterCancel != 0 || r.Progress.Count != 1 || r.Flagged() {
			t.Fatalf("progress read before the cancel counted as late: late=%+v progress=%+v", r.Late, r.Progress)
		}
		h.recv(150, progress(1, 2))
		if r.Late.ProgressAfterCancel != 1 || r.Progress.Count != 1 {
			t.Fatalf("progress read after the cancel not counted as late: late=%+v progress=%+v", r.Late, r.Progress)
		}
	})
	t.Run("response", func(t *testing.T) {
		h := newStdio(t, client.EraModern)
		r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
		h.cancel(100, r, CauseUser)
		h.recv(95, result(1, complete))
		if r.State != StateCompleted || r.Late.Response || r.Flagged() {
			t.Fatalf("a response read before the cancel: state %s, late %+v; want completed, not late", r.State, r.Late)
		}
		if c := h.tr.Counts(); c.Cancelling != 0 || c.Done != 1 {
			t.Fatalf("counts %+v", c)
		}
	})
	t.Run("response at the cancel's instant is late", func(t *testing.T) {
		h := newStdio(t, client.EraModern)
		r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
		h.cancel(100, r, CauseUser)
		h.recv(100, result(1, complete))
		if r.State != StateCancelled || !r.Late.Response || !r.Late.Crossed {
			t.Fatalf("state %s late %+v; want cancelled with a crossed late response", r.State, r.Late)
		}
	})
}

func TestFailedCancelIsRecorded(t *testing.T) {
	h := newStdio(t, client.EraModern)
	r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
	h.cancel(100, r, CauseUser)
	h.apply(client.Event{Kind: client.EventCancelSent, Time: ms(101), RequestID: r.ID, Err: errors.New("write to server stdin: broken pipe")})
	if r.Cancel.Failed == "" || r.Cancel.Signal != client.SignalNone {
		t.Fatalf("cancel %+v; want the failure recorded and no signal", r.Cancel)
	}
}
