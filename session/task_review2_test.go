package session

import (
	"testing"

	"inflight/event"
)

// The same path for a task: the server answers with a task handle on an
// SSE stream it keeps open; the client's closeAfter closes it and reports
// StreamClosed ByClient. That closed no live request: the task must not be
// cancelled.
func TestReview2ClientClosesTaskHandleStream(t *testing.T) {
	h := newTaskHarness(t, event.EraModern)
	r := h.call(0, true)
	h.handle(10, r, "t1")
	if r.State != StateTask {
		t.Fatalf("state %s", r.State)
	}
	h.streamClosed(2010, r, true)
	if r.State != StateTask {
		t.Errorf("the client closing the answered stream made the task %s (cancelDue %v)", r.State, r.Task.cancelDue)
	}
}
