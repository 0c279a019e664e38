package session

import (
	"testing"

	"inflight/event"
)

func newHTTP(t *testing.T, era event.Era) *harness {
	return newHarness(t, Config{}, era, event.TransportHTTP)
}

// on marks a received message as read on request owner's response stream,
// as the HTTP client reports it (a notification's RequestID, a response's
// Owner).
func on(ev event.Event, owner int) event.Event {
	if ev.Msg.IsResponse() {
		ev.Owner = id(owner)
	} else {
		ev.RequestID = id(owner)
	}
	return ev
}

func (h *harness) recvOn(at int, owner int, raw string) {
	h.t.Helper()
	h.apply(on(msgEvent(h.t, event.Received, at, raw), owner))
}

func (h *harness) resumed(at int, owner int) {
	h.apply(event.Event{Kind: event.StreamOpened, Time: ms(at), RequestID: id(owner), Status: 200, Resumed: true})
}

// Progress for request 1's token on request 2's stream is the server
// mixing two requests' streams: flagged once, and still request 1's
// progress. Each request's own progress on its own stream is nothing.
func TestProgressOnAnotherRequestsStream(t *testing.T) {
	for _, era := range []event.Era{event.EraLegacy, event.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			h := newHTTP(t, era)
			a := h.begin(0, "tools/call", `{"name":"slow"}`)
			b := h.begin(1, "tools/call", `{"name":"slow"}`)
			h.recvOn(10, 1, progress(1, 1))
			h.recvOn(11, 2, progress(2, 1))
			expect(t, "violations on own streams", h.tr.Violations().Len(), 0)
			h.recvOn(20, 2, progress(1, 2))
			expect(t, ViolationProgressOtherStream, h.tr.Violations().Count(ViolationProgressOtherStream), 1)
			expect(t, "a's progress count", a.Progress.Count, 2)
			expect(t, "a's progress value", a.Progress.Value, 2.0)
			expect(t, "b's progress count", b.Progress.Count, 1)
			v := h.tr.Violations().At(0)
			expect(t, "the violation names request 1", v.RequestID, a.ID)
		})
	}
}

// On stdio and on the legacy GET stream there is no request's stream to
// be wrong about.
func TestProgressWithoutAStreamIsNotJudged(t *testing.T) {
	h := newHTTP(t, event.EraLegacy)
	h.begin(0, "tools/call", `{"name":"slow"}`)
	h.begin(1, "tools/call", `{"name":"slow"}`)
	h.recv(10, progress(1, 1)) // the GET stream: no owner
	h.recv(11, progress(2, 1))
	expect(t, "violations", h.tr.Violations().Len(), 0)

	s := newStdio(t, event.EraLegacy)
	s.begin(0, "tools/call", `{"name":"slow"}`)
	s.recv(10, progress(1, 1))
	expect(t, "stdio violations", s.tr.Violations().Len(), 0)
}

// On a stream resumed with Last-Event-ID, another request's progress or
// response is a message of another stream replayed: flagged, and not
// counted again as that request's (no "not increasing", no duplicate
// response). The stream's own messages after the resumption are its own.
func TestReplayOfAnotherStream(t *testing.T) {
	h := newHTTP(t, event.EraLegacy)
	a := h.begin(0, "tools/call", `{"name":"slow"}`)
	b := h.begin(1, "tools/call", `{"name":"slow"}`)
	h.recvOn(10, 1, progress(1, 1))
	h.recvOn(11, 2, progress(2, 1))
	h.recvOn(12, 2, progress(2, 2))
	h.recvOn(50, 2, result(2, `{"content":[]}`))
	expect(t, "b", b.State, StateCompleted)
	h.resumed(100, 1)
	h.recvOn(101, 1, progress(2, 1))
	h.recvOn(102, 1, result(2, `{"content":[]}`))
	h.recvOn(103, 1, progress(1, 2))
	h.recvOn(104, 1, result(1, `{"content":[]}`))
	vl := h.tr.Violations()
	expect(t, ViolationReplayedOtherStream, vl.Count(ViolationReplayedOtherStream), 2)
	expect(t, "all violations", vl.Len(), 2)
	expect(t, "b's progress count", b.Progress.Count, 2)
	expect(t, "a", a.State, StateCompleted)
	expect(t, "a's progress count", a.Progress.Count, 2)
}

// A response on a resumed stream to a request still waiting for it is the
// replay's violation, and still that request's answer: it has no other.
func TestReplayedAnswerToAWaitingRequestIsKept(t *testing.T) {
	h := newHTTP(t, event.EraLegacy)
	h.begin(0, "tools/call", `{"name":"slow"}`)
	b := h.begin(1, "tools/call", `{"name":"slow"}`)
	h.resumed(100, 1)
	h.recvOn(102, 1, result(2, `{"content":[]}`))
	expect(t, ViolationReplayedOtherStream, h.tr.Violations().Count(ViolationReplayedOtherStream), 1)
	expect(t, "b", b.State, StateCompleted)
}

// A stream that was not resumed carrying another request's response is
// not a replay (nothing to say here; the response is that request's).
func TestResponseOnAnotherStreamNotResumed(t *testing.T) {
	h := newHTTP(t, event.EraLegacy)
	h.begin(0, "tools/call", `{"name":"slow"}`)
	b := h.begin(1, "tools/call", `{"name":"slow"}`)
	h.recvOn(10, 1, result(2, `{"content":[]}`))
	expect(t, "violations", h.tr.Violations().Len(), 0)
	expect(t, "b", b.State, StateCompleted)
}

// Progress for a token no request carried is flagged as before, whatever
// stream brought it.
func TestUnknownTokenOnAStream(t *testing.T) {
	h := newHTTP(t, event.EraLegacy)
	h.begin(0, "tools/call", `{"name":"slow"}`)
	h.recvOn(10, 1, progress(77, 1))
	expect(t, ViolationUnknownProgressToken, h.tr.Violations().Count(ViolationUnknownProgressToken), 1)
	expect(t, ViolationProgressOtherStream, h.tr.Violations().Count(ViolationProgressOtherStream), 0)
}
