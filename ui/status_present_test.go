package ui

import (
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// The status line is always about the present (issue 10): these are the
// three ways it outlived what it described in the trial (finding 11).

// "cancellation requested" goes when the watch after the cancel ends and
// the request settles, not a second later when the message would expire.
func TestStatusGoesWhenTheWatchSettles(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	h.key("c")
	h.cancelSent(id, event.SignalNotification)
	if !strings.Contains(h.m.status.text, "cancellation requested — notifications/cancelled sent") {
		t.Fatalf("status after c: %q", h.m.status.text)
	}
	for i := 0; i < 51 && h.request(id).State != session.StateCancelled; i++ {
		h.advance(100 * time.Millisecond)
	}
	if h.request(id).State != session.StateCancelled {
		t.Fatalf("still %s after the watch", h.request(id).State)
	}
	if h.m.status.text != "" {
		t.Errorf("#%d settled cancelled and the status still says %q", id, h.m.status.text)
	}
}

// W's message is about the request it stopped watching: it goes when
// another request is on screen.
func TestStopWatchingStatusFollowsTheSelection(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	first := startSlow(h)
	startSlow(h)
	h.key("up")
	if h.m.screens.list.Selected() != wire.IntID(first) {
		t.Fatalf("selected %s, want #%d", h.m.screens.list.Selected(), first)
	}
	h.key("c")
	h.cancelSent(first, event.SignalNotification)
	h.advance(time.Second)
	h.key("W")
	if !strings.Contains(h.m.status.text, "stopped watching") {
		t.Fatalf("status after W: %q", h.m.status.text)
	}
	h.key("enter") // its own detail keeps it
	if !strings.Contains(h.screen(), "stopped watching") {
		t.Fatalf("the detail of the request W was about lost its message:\n%s", h.screen())
	}
	h.key("esc", "down", "enter")
	if scr := h.screen(); strings.Contains(scr, "stopped watching") {
		t.Errorf("the detail of another request shows W's message about #%d:\n%s", first, scr)
	}
}

// A timeout's cancel says the timeout was reached: nobody asked.
func TestTimeoutStatusSaysTimeout(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.run(h.m.send(wire.MethodToolsCall, []byte(`{"name":"slow","arguments":{}}`), session.RequestOptions{Timeout: time.Second}))
	r := h.m.tracker.At(h.m.tracker.Len() - 1)
	id, _ := r.ID.Int()
	h.sentEvent(id)
	h.advance(time.Second)
	if got := h.m.status.text; !strings.Contains(got, "timeout reached — notifications/cancelled sent") || strings.Contains(got, "cancellation requested") {
		t.Errorf("status after a timeout: %q", got)
	}
}
