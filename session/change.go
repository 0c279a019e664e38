package session

import (
	"fmt"
	"time"

	"inflight/event"
	"inflight/wire"
)

// ChangeKind says what a Change is.
type ChangeKind uint8

// The kinds of change the tracker reports.
const (
	// ChangeState: request ID moved From → To at At.
	ChangeState ChangeKind = iota + 1
	// ChangeLate: something arrived for request ID after the server could
	// have seen its cancel (or after it was given up): What says what.
	ChangeLate
	// ChangeCrossed: something arrived for request ID within the crossing
	// window of its cancel: it may have been sent before the server saw
	// the cancel. What says what.
	ChangeCrossed
	// ChangeViolation: a protocol violation was recorded (Violation).
	ChangeViolation
	// ChangeRenamed: the finished host request that had the ID Was is ID
	// from now on (a later request of the host took Was:
	// observe_reuse.go); what a consumer keeps by ID follows it.
	ChangeRenamed
)

// Arrival names what arrived late or crossed.
type Arrival uint8

// What can arrive after a cancel.
const (
	ArrivalResponse Arrival = iota + 1
	ArrivalProgress
	ArrivalNotification
)

func (a Arrival) String() string {
	switch a {
	case ArrivalResponse:
		return "response"
	case ArrivalProgress:
		return "progress"
	case ArrivalNotification:
		return "notification"
	}
	return "unknown"
}

// Change is one thing a tracker method changed, so that no consumer has to
// diff snapshots to find it: a trace writes a line per change, the UI drops
// a status message once its request's fate is known, `call` prints the
// state it reached.
type Change struct {
	Kind ChangeKind
	// ID is the request concerned (zero for a violation about no request).
	ID wire.ID
	// At is when it happened (the event's time, or the caller's now).
	At time.Time
	// From and To are the states of a ChangeState.
	From, To State
	// What is what arrived, for ChangeLate and ChangeCrossed.
	What Arrival
	// Violation is the violation of a ChangeViolation.
	Violation Violation
	// Was is the ID a ChangeRenamed request had.
	Was wire.ID
}

// Verdict is the tracker's judgement of a message it just applied, as
// traces carry it: "late" or "crossed" when it came after its request was
// given up, "" otherwise (or for anything but a received message).
func Verdict(kind event.Kind, changes []Change) string {
	if kind != event.Received {
		return ""
	}
	v := ""
	for _, ch := range changes {
		switch ch.Kind {
		case ChangeLate:
			return VerdictLate
		case ChangeCrossed:
			v = VerdictCrossed
		}
	}
	return v
}

// changes collects what one tracker call changed. The slice handed out is
// reused by the next call, so the hot path (progress that changes no state)
// allocates nothing.
type changes struct{ buf []Change }

func (c *changes) reset() { c.buf = c.buf[:0] }

func (c *changes) add(ch Change) { c.buf = append(c.buf, ch) }

// Refused says why the tracker refused an action (RequestCancel,
// AdjustTimeout). It carries facts, not words: the UI and `call` phrase
// them for their readers.
type Refused struct {
	Why RefusalReason
	ID  wire.ID
	// State is the request's state when it was refused.
	State State
	// Since is when the request ended (RefusedFinal) or its cancel was
	// asked for (RefusedCancelling).
	Since time.Time
}

// RefusalReason is why an action was refused.
type RefusalReason uint8

// The reasons.
const (
	// RefusedUnknown: no request has that ID.
	RefusedUnknown RefusalReason = iota + 1
	// RefusedEvicted: the request was dropped from history.
	RefusedEvicted
	// RefusedFinal: the request has reached its fate.
	RefusedFinal
	// RefusedCancelling: its cancellation was already requested.
	RefusedCancelling
	// RefusedInitialize: initialize must never be cancelled.
	RefusedInitialize
	// RefusedNoTimeout: an acknowledged subscription has no timeout to
	// adjust.
	RefusedNoTimeout
	// RefusedNotCancelling: there is no late window to stop watching; the
	// request's cancel was not requested.
	RefusedNotCancelling
)

func (r *Refused) Error() string {
	var why string
	switch r.Why {
	case RefusedUnknown:
		why = "unknown request"
	case RefusedEvicted:
		why = "no longer in history"
	case RefusedFinal:
		why = "already " + r.State.String()
	case RefusedCancelling:
		why = "cancellation already requested"
	case RefusedInitialize:
		why = "initialize must never be cancelled"
	case RefusedNoTimeout:
		why = "an acknowledged subscription has no timeout"
		if r.State == StateTask {
			why = "a task has no response timeout once its handle arrived (only its maximum and its TTL)"
		}
	case RefusedNotCancelling:
		why = "not being cancelled, so there is no late window to stop watching"
	case RefusedNotWaiting:
		why = r.State.String() + ", not waiting for an answer"
	default:
		why = "refused"
	}
	return fmt.Sprintf("request %s: %s", r.ID, why)
}

// Clamped says that AdjustTimeout did adjust, but stopped at a bound.
type Clamped uint8

// The bounds.
const (
	NotClamped Clamped = iota
	// ClampedMax: the timeout is at the request's maximum.
	ClampedMax
	// ClampedFloor: the timeout was kept to leave at least MinTimeout.
	ClampedFloor
)
