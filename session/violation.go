package session

import (
	"bytes"
	"strings"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Violation codes. They are stable: JSON output and the check battery use
// them.
const (
	// ViolationUnknownResponseID: a response for an ID inflight never issued.
	// (A numeric ID it issued long ago and evicted from history is not one.)
	ViolationUnknownResponseID = "unknown_response_id"
	// ViolationDuplicateResponse: a second response for the same request.
	ViolationDuplicateResponse = "duplicate_response"
	// ViolationUnknownProgressToken: progress for a token no request carried.
	ViolationUnknownProgressToken = "unknown_progress_token"
	// ViolationProgressNotIncreasing: a progress value not above the last one.
	ViolationProgressNotIncreasing = "progress_not_increasing"
	// ViolationProgressAfterCompletion: progress for a request the server
	// already answered ("progress notifications MUST stop after completion").
	ViolationProgressAfterCompletion = "progress_after_completion"
	// ViolationServerCancelNotListen: in the modern era, a server-sent
	// notifications/cancelled naming anything but a subscriptions/listen.
	ViolationServerCancelNotListen = "server_cancel_not_listen"
	// ViolationNonJSONLine: a line or event that is not JSON at all.
	ViolationNonJSONLine = "non_json_line"
	// ViolationMalformedMessage: JSON that is not a valid JSON-RPC message,
	// or MCP params that cannot be read.
	ViolationMalformedMessage = "malformed_message"
	// ViolationMissingResultType: a modern-era result without resultType. It
	// is treated as "complete", as the spec requires for compatibility.
	ViolationMissingResultType = "missing_result_type"
	// ViolationUnknownResultType: a modern-era resultType the client does not
	// know; the spec says it MUST be considered invalid, so the request fails.
	ViolationUnknownResultType = "unknown_result_type"
	// ViolationUnknownSubscription: a notification whose subscriptionId names
	// no subscriptions/listen request.
	ViolationUnknownSubscription = "unknown_subscription"
	// ViolationNotificationBeforeAck: a notification on a subscription before
	// its acknowledgment, which the server MUST send first.
	ViolationNotificationBeforeAck = "notification_before_ack"
	// ViolationResultBeforeAck: a subscriptions/listen answered with its
	// result before notifications/subscriptions/acknowledged: "The server
	// MUST send notifications/subscriptions/acknowledged as the first
	// message carrying the subscription's ID".
	ViolationResultBeforeAck = "result_before_ack"
	// ViolationServerRequestModern: in the modern era, a request from the
	// server ("The server MUST NOT write JSON-RPC requests to stdout";
	// servers do not initiate requests on any transport). The client does
	// not answer it, since clients do not send responses either.
	ViolationServerRequestModern = "server_request_modern"
	// ViolationVersionRejected: in the modern era, a request refused with
	// UnsupportedProtocolVersionError (-32022) although it was sent under
	// the version the connection negotiated through server/discover. The
	// client speaks one modern version, so there is none to retry with:
	// the request fails, and the inconsistency is recorded.
	ViolationVersionRejected = "version_rejected"

	// Task violations (legacy tasks utility, 2025-11-25; the modern tasks
	// extension).

	// ViolationTaskStatusAfterTerminal: a task status other than the
	// terminal one it reached ("Tasks with a completed, failed, or
	// cancelled status are in a terminal state and MUST NOT transition to
	// any other status").
	ViolationTaskStatusAfterTerminal = "task_status_after_terminal"
	// ViolationCancelledForTask: notifications/cancelled used for a task
	// ("The notifications/cancelled notification MUST NOT be used for task
	// cancellation").
	ViolationCancelledForTask = "cancelled_for_task"
	// ViolationTaskCancelTerminalAccepted: in the legacy era, tasks/cancel
	// of a task already in a terminal status answered with success
	// ("Receivers MUST reject cancellation requests for tasks already in a
	// terminal status … with error code -32602").
	ViolationTaskCancelTerminalAccepted = "task_cancel_terminal_accepted"
	// ViolationTaskCancelNotCancelled: in the legacy era, tasks/cancel of a
	// working task answered with a status other than cancelled ("receivers
	// … MUST transition the task to cancelled status before sending the
	// response").
	ViolationTaskCancelNotCancelled = "task_cancel_not_cancelled"
	// ViolationTaskUndeclared: a task handle for a request that did not
	// declare task support ("A server MUST NOT return CreateTaskResult to
	// a client that did not include the extension capability on its
	// request"; legacy: a request without the task field is processed
	// normally).
	ViolationTaskUndeclared = "task_undeclared"
	// ViolationTaskNotDurable: the first tasks/get of a task just created
	// answered that the task does not exist ("A server MUST NOT return
	// CreateTaskResult until the task is durably created").
	ViolationTaskNotDurable = "task_not_durable"
	// ViolationTaskUnsupportedMethod: a task handle for a request type
	// that does not support tasks, which "MUST" be interpreted "as an
	// invalid response".
	ViolationTaskUnsupportedMethod = "task_unsupported_method"
	// ViolationTaskPollRateLimited: a tasks/get refused as rate-limited
	// (HTTP 429, or a JSON-RPC error that says it is a rate limit) though
	// the server had given no poll interval for the task, or inflight had
	// waited the whole interval it gave ("Servers MAY rate-limit clients
	// polling more frequently than the recorded pollIntervalMs": only
	// those): polling guidance ignored by the server.
	ViolationTaskPollRateLimited = "task_poll_rate_limited"
)

// violationRawBytes bounds the raw bytes copied into a Violation.
const violationRawBytes = 4 << 10

// Violation is one protocol violation by the server. Violations are recorded
// and shown; none of them stops anything.
type Violation struct {
	Code   string
	Detail string
	// RequestID is the request concerned, zero when none is known.
	RequestID wire.ID
	Time      time.Time
	// Raw is a copy of at most 4 KiB of the offending message.
	Raw []byte
}

// ViolationLog is the bounded list of violations, with exact counts per
// code beyond the bound.
type ViolationLog struct {
	ring   ring[Violation]
	counts map[string]int
	// host counts the host's findings among them (IsHostFinding).
	host int64
}

// Len is the number of violations kept.
func (l *ViolationLog) Len() int { return l.ring.len() }

// At returns the i-th violation kept, oldest first (0 ≤ i < Len).
func (l *ViolationLog) At(i int) Violation { return *l.ring.at(i) }

// Total counts every violation ever recorded.
func (l *ViolationLog) Total() int64 { return l.ring.total }

// HostTotal counts the host's findings ever recorded (a proxy's judgement
// of the host, IsHostFinding): Total less HostTotal are the server's.
func (l *ViolationLog) HostTotal() int64 { return l.host }

// IsHostFinding reports whether a violation code is a finding of the host
// a proxy watches (host_…) rather than a violation of the server's.
func IsHostFinding(code string) bool { return strings.HasPrefix(code, "host_") }

// Count is how many violations with the code were ever recorded.
func (l *ViolationLog) Count(code string) int { return l.counts[code] }

// Counts returns a copy of the per-code counts.
func (l *ViolationLog) Counts() map[string]int {
	m := make(map[string]int, len(l.counts))
	for k, v := range l.counts {
		m[k] = v
	}
	return m
}

// ForRequest returns the kept violations attributed to a request, oldest
// first.
func (l *ViolationLog) ForRequest(id wire.ID) []Violation {
	var out []Violation
	for i := 0; i < l.Len(); i++ {
		if v := l.ring.at(i); v.RequestID == id {
			out = append(out, *v)
		}
	}
	return out
}

// violate records a violation caused by ev, attributes it to r when known,
// and marks the event's log entry.
func (t *Tracker) violate(code, detail string, r *Request, id wire.ID, ev *event.Event) {
	raw := ev.Raw
	if len(raw) > violationRawBytes {
		raw = raw[:violationRawBytes]
	}
	if r != nil {
		id = r.ID
		r.Violations++
		t.flag(r)
	}
	v := Violation{
		Code:      code,
		Detail:    detail,
		RequestID: id,
		Time:      ev.Time,
		Raw:       bytes.Clone(raw),
	}
	t.violations.ring.push(v)
	t.changes.add(Change{Kind: ChangeViolation, ID: id, At: ev.Time, Violation: v})
	t.violations.counts[code]++
	if IsHostFinding(code) {
		t.violations.host++
	}
	if t.curLog >= 0 {
		if e := &t.log.ring.buf[t.curLog]; e.peek().Violation == "" {
			e.extra().Violation = code
		}
	}
}
