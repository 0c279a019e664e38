package session

import (
	"errors"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// Events wait in a channel between the client's reader and Apply, so the
// tracker may apply, after a cancel, traffic the client read before it. The
// event's own time decides whether it is late.
func TestTrafficReadBeforeTheCancelIsNotLate(t *testing.T) {
	t.Run("progress", func(t *testing.T) {
		h := newStdio(t, event.EraModern)
		r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
		h.cancel(100, r, CauseUser)
		h.recv(90, progress(1, 1)) // read at 90ms, applied after the cancel at 100ms
		if r.Late.ProgressAfterCancel != 0 || r.Progress.Count != 1 || r.Flagged() {
			t.Fatalf("progress read before the cancel counted as late: late=%+v progress=%+v", r.Late, r.Progress)
		}
		h.cancelSent(100, r, event.SignalNotification)
		h.recv(150, progress(1, 2))
		if r.Late.ProgressAfterCancel != 1 || r.Progress.Count != 1 {
			t.Fatalf("progress read after the cancel not counted as late: late=%+v progress=%+v", r.Late, r.Progress)
		}
	})
	t.Run("response", func(t *testing.T) {
		h := newStdio(t, event.EraModern)
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
		h := newStdio(t, event.EraModern)
		r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
		h.cancel(100, r, CauseUser)
		h.recv(100, result(1, complete))
		if r.State != StateCancelled || !r.Late.Response || !r.Late.Crossed {
			t.Fatalf("state %s late %+v; want cancelled with a crossed late response", r.State, r.Late)
		}
	})
}

func TestFailedCancelIsRecorded(t *testing.T) {
	h := newStdio(t, event.EraModern)
	r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
	h.cancel(100, r, CauseUser)
	h.apply(event.Event{Kind: event.CancelSent, Time: ms(101), RequestID: r.ID, Err: errors.New("write to server stdin: broken pipe")})
	if r.Cancel.Failed == "" || r.Cancel.Signal != event.SignalNone {
		t.Fatalf("cancel %+v; want the failure recorded and no signal", r.Cancel)
	}
}

// TestCrossedJudgedWhenCancelSendTimeKnown: the event reporting a cancel can
// only follow its send (for legacy HTTP, the whole POST), so a late
// response may be applied before the tracker knows when the cancel left.
// It is then provisionally crossed, and judged again once that is known.
func TestCrossedJudgedWhenCancelSendTimeKnown(t *testing.T) {
	setup := func(t *testing.T) (*harness, *Request) {
		h := newStdio(t, event.EraLegacy)
		h.begin(0, wire.MethodToolsList, "") // request 1
		h.recv(4, result(1, `{}`))           // round trips take 4ms: a 2ms window
		r := h.begin(10, wire.MethodToolsCall, `{"name":"slow"}`)
		h.cancel(100, r, CauseUser)
		return h, r
	}
	t.Run("response long after the cancel left", func(t *testing.T) {
		h, r := setup(t)
		h.recv(160, result(2, `{}`)) // read during a slow POST
		h.cancelSent(101, r, event.SignalNotification)
		if !r.Late.Response || r.Late.Crossed {
			t.Fatalf("late %+v: a response 59ms after the cancel left, with 4ms round trips, did not cross it", r.Late)
		}
		expect(t, "state", r.State, StateCancelled)
		expect(t, "signal at", r.Cancel.SignalAt, ms(101))
	})
	t.Run("response right after the cancel left", func(t *testing.T) {
		h, r := setup(t)
		h.recv(102, result(2, `{}`))
		h.cancelSent(101, r, event.SignalNotification)
		if !r.Late.Response || !r.Late.Crossed {
			t.Fatalf("late %+v: a response within half a round trip of the cancel crossed it", r.Late)
		}
	})
	t.Run("response before the cancel left", func(t *testing.T) {
		h, r := setup(t)
		h.recv(100, result(2, `{}`))
		h.cancelSent(130, r, event.SignalNotification)
		if !r.Late.Crossed {
			t.Fatalf("late %+v: the server could not have seen the cancel", r.Late)
		}
	})
}

// TestProgressDecodedByTheClient: the tracker uses the progress the client
// decoded (Event.Progress) rather than decoding the params again, and
// decodes them itself when the event carries none.
func TestProgressDecodedByTheClient(t *testing.T) {
	h := newStdio(t, event.EraModern)
	r := h.begin(0, wire.MethodToolsCall, `{"name":"slow"}`)
	total := 10.0
	ev := msgEvent(t, event.Received, 5, progress(1, 1))
	ev.Msg.Params = nil // only the decoded form says anything
	ev.Progress = &wire.Progress{Token: r.ProgressToken, Progress: 7, Total: &total, Message: "decoded"}
	h.apply(ev)
	expect(t, "value", r.Progress.Value, 7.0)
	expect(t, "total", r.Progress.Total, 10.0)
	expect(t, "message", r.Progress.Message, "decoded")
	h.recv(6, progress(1, 8))
	expect(t, "count", r.Progress.Count, 2)
	expect(t, "violations", h.tr.Violations().Total(), int64(0))
}
