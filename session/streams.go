package session

import (
	"inflight/event"
	"inflight/wire"
)

// What a message means when it comes on another request's HTTP response
// stream: progress for one request on the stream of another (the server
// mixing two requests' streams), and, on a stream resumed with
// Last-Event-ID, a message that belongs to a different stream replayed on
// it.
const (
	// ViolationProgressOtherStream: notifications/progress for request A's
	// token on request B's response stream, which carries what relates to
	// B ("These notifications MUST relate to the originating client
	// request", 2026-07-28; "These messages SHOULD relate to the
	// originating client request", 2025-11-25). The progress is A's, and is
	// counted as A's.
	ViolationProgressOtherStream = "progress_on_other_stream"
	// ViolationReplayedOtherStream: on request A's stream resumed with
	// Last-Event-ID, a message of another request (its progress, or its
	// response): "The server MUST NOT replay messages that would have been
	// delivered on a different stream" (2025-11-25, Resumability and
	// Redelivery). The wire cannot tell a replay from a server that mixes
	// requests' streams live, so on a resumed stream every message of
	// another request is taken for a replay. A replayed progress
	// notification, and a replayed
	// response to a request already answered, repeat what the other
	// request had: they are not counted again as its.
	ViolationReplayedOtherStream = "replayed_other_stream"
)

// onStreamOpened notes a request's response stream resumed with
// Last-Event-ID: from then on, whatever comes on it is a replay or what
// follows one.
func (t *Tracker) onStreamOpened(ev *event.Event) {
	if !ev.Resumed {
		return
	}
	if r := t.byID[ev.RequestID]; r != nil && r.ID == ev.RequestID {
		r.side().resumed = true
	}
}

// misdelivered judges a message read on a request's HTTP response stream
// that belongs to another request, and reports whether it was consumed by
// that verdict (a replay that repeats what the other request had), so that
// it is not applied as that request's again. The stream's request is
// ev.RequestID for a notification and ev.Owner for a response; on stdio
// and the GET stream there is none. A proxy's tracker (observing) leaves
// this alone: its hosts' streams are theirs.
func (t *Tracker) misdelivered(ev *event.Event) bool {
	if t.observing {
		return false
	}
	switch {
	case ev.Msg.Kind == wire.KindNotification && ev.Msg.Method == wire.NotifyProgress && ev.Progress != nil:
		return t.progressElsewhere(ev, ev.RequestID)
	case ev.Msg.IsResponse() && !ev.Owner.IsZero() && ev.Msg.ID != ev.Owner && ev.Msg.ID != wire.NullID:
		return t.responseElsewhere(ev)
	}
	return false
}

// streamOf returns the request whose stream carried a message, when it is
// one the tracker follows.
func (t *Tracker) streamOf(owner wire.ID) *Request {
	if owner.IsZero() {
		return nil
	}
	if s := t.byID[owner]; s != nil && s.ID == owner {
		return s
	}
	return nil
}

// progressElsewhere judges progress on owner's stream for another
// request's token. A task's progress is left alone: it may come on the
// stream of whatever request the server is answering about the task.
func (t *Tracker) progressElsewhere(ev *event.Event, owner wire.ID) bool {
	s := t.streamOf(owner)
	if s == nil {
		return false
	}
	tok := ev.Progress.Token
	r := t.byToken(tok)
	if r == nil || r == s || r.Task != nil || s.Task != nil {
		return false
	}
	if s.peek().resumed {
		t.violate(ViolationReplayedOtherStream, "progress for token "+tok.String()+", request "+r.ID.String()+"'s, on the stream of request "+
			s.ID.String()+" resumed with Last-Event-ID: a message of another stream replayed on it", r, r.ID, ev)
		return true
	}
	t.violate(ViolationProgressOtherStream, "progress for token "+tok.String()+", request "+r.ID.String()+"'s, on the response stream of request "+
		s.ID.String()+": the server mixed two requests' streams", r, r.ID, ev)
	return false
}

// responseElsewhere judges a response to another request on a resumed
// stream. The answer to a request still waiting for it is applied all the
// same (it is the only answer it has); one to a request already answered
// is the replay's alone.
func (t *Tracker) responseElsewhere(ev *event.Event) bool {
	s := t.streamOf(ev.Owner)
	if s == nil || !s.peek().resumed {
		return false
	}
	r := t.byID[ev.Msg.ID]
	detail := "a response to " + ev.Msg.ID.String() + " on the stream of request " + s.ID.String() +
		" resumed with Last-Event-ID: a message of another stream replayed on it"
	if r == nil {
		t.violate(ViolationReplayedOtherStream, detail, s, s.ID, ev)
		return false // also a response to no request of inflight's
	}
	t.violate(ViolationReplayedOtherStream, detail, r, r.ID, ev)
	return r.responded
}
