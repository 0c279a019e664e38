package list

import (
	"time"

	"inflight/session"
	"inflight/wire"
)

// Facts is what the root knows of a request that the tracker does not
// hold, and the list draws: whether it waits for the connection's
// authorization or was sent again after it, and what a proxy did to it.
// The root hands a value of its own (which holds no root model) to
// Layout; the list asks it only about the rows it draws.
type Facts interface {
	// AuthWaiting reports whether r waits for an authorization in
	// progress, and since when that began.
	AuthWaiting(r *session.Request) (since time.Time, ok bool)
	// AuthRetried reports whether request id was sent again with a new
	// token.
	AuthRetried(id wire.ID) bool
	// HostAct is what a proxy said it did to r (inflight attach); ok is
	// false when it did nothing.
	HostAct(r *session.Request) (a HostAct, ok bool)
}

// noFacts knows nothing: the list before the root first laid it out.
type noFacts struct{}

func (noFacts) AuthWaiting(*session.Request) (time.Time, bool) { return time.Time{}, false }
func (noFacts) AuthRetried(wire.ID) bool                       { return false }
func (noFacts) HostAct(*session.Request) (HostAct, bool)       { return HostAct{}, false }
