package client_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// DropStream cuts a legacy request's SSE connection after an event with an
// ID, without cancelling it: the client resumes at once with a GET
// carrying the last event ID read, reports the stream opened again as
// resumed, and the rest of the stream (the answer) arrives on it.
func TestDropStreamResumesWithLastEventID(t *testing.T) {
	peer := &hostile.Resumable{Mode: hostile.Redelivers, Steps: 4, Interval: 40 * time.Millisecond}
	ts := hostile.NewServer(peer, false)
	t.Cleanup(ts.Close)
	c, rec, _ := connectClient(t, client.Config{URL: ts.URL, ProtocolVersion: wire.Version20251125})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
	rec.wait(t, "the first progress", func(ev event.Event) bool { return ev.Progress != nil })
	last, err := c.DropStream(id)
	if err != nil {
		t.Fatalf("DropStream: %v", err)
	}
	rec.wait(t, "the stream resumed", func(ev event.Event) bool {
		return ev.Kind == event.StreamOpened && ev.Resumed && ev.RequestID == id
	})
	answer := rec.wait(t, "the answer on the resumed stream", responseTo(id))
	if answer.Owner != id {
		t.Errorf("the answer's Owner = %v, want the request whose stream carried it (%v)", answer.Owner, id)
	}
	if !slices.Contains(peer.Log(), "GET Last-Event-ID="+last) {
		t.Errorf("no GET with Last-Event-ID %q; the server saw %q", last, peer.Log())
	}
	if n := rec.count(func(ev event.Event) bool { return ev.Kind == event.CancelSent }); n != 0 {
		t.Errorf("dropping the stream sent %d cancels", n)
	}
	if n := rec.count(func(ev event.Event) bool { return ev.Kind == event.RequestFailed }); n != 0 {
		t.Errorf("dropping the stream failed the request:\n%s", rec.dump())
	}
}

// A server that refuses the resumption with 409 Conflict because it has
// not yet seen the old connection go is asked again, a little later, and
// the rest of the stream arrives; each refusal is said.
func TestResumeRetriedOnConflict(t *testing.T) {
	peer := &hostile.Resumable{Mode: hostile.Redelivers, Steps: 4, Interval: 40 * time.Millisecond, Conflicts: 2}
	ts := hostile.NewServer(peer, false)
	t.Cleanup(ts.Close)
	c, rec, _ := connectClient(t, client.Config{URL: ts.URL, ProtocolVersion: wire.Version20251125})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
	rec.wait(t, "the first progress", func(ev event.Event) bool { return ev.Progress != nil })
	last, err := c.DropStream(id)
	if err != nil {
		t.Fatalf("DropStream: %v", err)
	}
	rec.wait(t, "the answer on the resumed stream", responseTo(id))
	gets := 0
	for _, l := range peer.Log() {
		if l == "GET Last-Event-ID="+last {
			gets++
		}
	}
	if gets != 3 {
		t.Errorf("%d resuming GETs, want 3 (two refused, one taken); the server saw %q", gets, peer.Log())
	}
	if n := rec.count(func(ev event.Event) bool {
		return ev.Kind == event.Note && ev.RequestID == id && strings.Contains(ev.Text, "409 Conflict")
	}); n != 2 {
		t.Errorf("%d notes of a refused resumption, want 2:\n%s", n, rec.dump())
	}
	if n := rec.count(func(ev event.Event) bool { return ev.Kind == event.RequestFailed }); n != 0 {
		t.Errorf("the refused resumptions failed the request:\n%s", rec.dump())
	}
}

// A server that gives its events no IDs leaves nothing to resume from:
// DropStream refuses, and the stream goes on.
func TestDropStreamWithoutEventIDs(t *testing.T) {
	peer := &hostile.Resumable{Mode: hostile.NoEventIDs, Steps: 3, Interval: 40 * time.Millisecond}
	ts := hostile.NewServer(peer, false)
	t.Cleanup(ts.Close)
	c, rec, _ := connectClient(t, client.Config{URL: ts.URL, ProtocolVersion: wire.Version20251125})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
	rec.wait(t, "the first progress", func(ev event.Event) bool { return ev.Progress != nil })
	if _, err := c.DropStream(id); !errors.Is(err, client.ErrNoEventID) {
		t.Fatalf("DropStream = %v, want ErrNoEventID", err)
	}
	rec.wait(t, "the answer on the stream never dropped", responseTo(id))
}
