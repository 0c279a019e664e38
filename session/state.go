package session

// State is where a request is in its life. The zero State is StatePending.
type State uint8

// The states of a request. Every state from StateCompleted on is final: the
// request leaves the active set and nothing the server sends can change its
// state any more (late traffic is recorded beside it).
const (
	// StatePending: created and (about to be) sent; nothing came back yet.
	StatePending State = iota
	// StateRunning: at least one progress notification arrived.
	StateRunning
	// StateListening: a subscriptions/listen request the server acknowledged.
	StateListening
	// StateTask: the server answered with a task handle and the task has
	// not reached a terminal status; Request.Task follows it.
	StateTask
	// StateWaitingInput: a multi round-trip request whose last round was
	// answered input_required, waiting for the caller's answer
	// (Tracker.Answer) before its next round; nothing is on the wire and
	// no timer runs (see rounds.go).
	StateWaitingInput
	// StateCancelRequested: the user or a timeout cancelled it and the outcome
	// is not known yet (a response may still cross the cancel).
	StateCancelRequested

	// StateCompleted: a successful response arrived.
	StateCompleted
	// StateFailed: a JSON-RPC error, a tool result with isError, an invalid
	// result, or a local failure (HTTP error, unreadable reply).
	StateFailed
	// StateInputRequired: a modern result with resultType "input_required";
	// the client must retry with a new request.
	StateInputRequired
	// StateCancelled: cancelled by the client and the fate is known.
	StateCancelled
	// StateTimedOut: cancelled because a timeout expired and the fate is
	// known; for an initialize, which must never be cancelled, given up on
	// when its timeout expired, with no cancel sent (see Due).
	StateTimedOut
	// StateEndedByServer: a subscription the server ended (a result for the
	// listen request, or notifications/cancelled naming it).
	StateEndedByServer
	// StateConnectionLost: the transport went away before an answer.
	StateConnectionLost

	numStates
)

var stateNames = [numStates]string{
	StatePending:         "pending",
	StateRunning:         "running",
	StateListening:       "listening",
	StateTask:            "task",
	StateWaitingInput:    "waiting_input",
	StateCancelRequested: "cancel_requested",
	StateCompleted:       "completed",
	StateFailed:          "failed",
	StateInputRequired:   "input_required",
	StateCancelled:       "cancelled",
	StateTimedOut:        "timed_out",
	StateEndedByServer:   "ended_by_server",
	StateConnectionLost:  "connection_lost",
}

// String is the state's snake_case name, as used in JSON output and traces.
func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return "unknown"
}

// MarshalText makes a State encode as its name in JSON.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// IsFinal reports whether the request's fate is known. Final requests are
// never active again and may be evicted from history.
func (s State) IsFinal() bool { return s >= StateCompleted && s < numStates }

// IsActive reports whether the request is still in flight, including while
// its cancellation is pending.
func (s State) IsActive() bool { return s < StateCompleted }

// CancelCause says why a request was cancelled. It decides the final state
// name: a timeout ends as timed_out, every other cause as cancelled.
type CancelCause uint8

// The causes of a cancellation.
const (
	// CauseUser: the user pressed the cancel key.
	CauseUser CancelCause = iota + 1
	// CauseTimeout: the request's timeout or maximum timeout expired.
	CauseTimeout
	// CauseInterrupted: the user interrupted inflight (Ctrl+C in headless runs).
	CauseInterrupted
	// CauseShutdown: inflight is quitting, or the client cancelled the request
	// on its own.
	CauseShutdown
	// CauseHost: the host a proxy watches cancelled its own request
	// (Tracker.Observe).
	CauseHost
)

// String is the cause's name as used in JSON output.
func (c CancelCause) String() string {
	switch c {
	case CauseUser:
		return "user"
	case CauseTimeout:
		return "timeout"
	case CauseInterrupted:
		return "interrupted"
	case CauseShutdown:
		return "shutdown"
	case CauseHost:
		return "host"
	}
	return "none"
}

// MarshalText makes a CancelCause encode as its name in JSON.
func (c CancelCause) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Limit names the time limit that will end a request first.
type Limit uint8

// The time limits.
const (
	// LimitNone: no limit applies (the request is final, a cancel is pending,
	// or it is an acknowledged subscription, which may live forever).
	LimitNone Limit = iota
	// LimitTimeout: the per-request timeout, which progress may push back.
	LimitTimeout
	// LimitMax: the maximum timeout, which nothing pushes back.
	LimitMax
	// LimitTTL: a task's time to live, after which the server may delete it.
	LimitTTL
)

// String is the limit's name as used in JSON output.
func (l Limit) String() string {
	switch l {
	case LimitTimeout:
		return "timeout"
	case LimitMax:
		return "max"
	case LimitTTL:
		return "ttl"
	}
	return "none"
}

// MarshalText makes a Limit encode as its name in JSON.
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }
