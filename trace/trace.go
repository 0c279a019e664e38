// Package trace is inflight's trace file format: JSON Lines, one event a
// line, written by `inflight call --trace`, `inflight check --trace` and the
// TUI's export key, and read back by `inflight replay`.
//
// Every line has "ms" (milliseconds since the trace started) and "dir"
// ("out" for what inflight sent, "in" for what the server sent, "local" for
// what inflight observed or decided), and either "msg" — the JSON-RPC
// message exactly as sent or received — or "event", the name of something
// that is not a message (stream_opened, stream_closed, http_status, stderr,
// state, violation, …). "id" is the JSON-RPC request the line concerns, when
// there is one. Other fields describe the event; see Record.
//
// Secrets never reach a trace: every string and every message goes through
// a redact.Redactor on the way out.
package trace

import (
	"encoding/json"

	"inflight/wire"
)

// Directions.
const (
	DirOut   = "out"
	DirIn    = "in"
	DirLocal = "local"
)

// Event names of lines without a message. Most are the client's event
// kinds (event.Kind.String()); the last ones are the tracker's.
const (
	EventMalformed       = "malformed"
	EventCancelSent      = "cancel_sent"
	EventStreamOpened    = "stream_opened"
	EventStreamClosed    = "stream_closed"
	EventHTTPStatus      = "http_status"
	EventStderr          = "stderr"
	EventRequestFailed   = "request_failed"
	EventConnected       = "connected"
	EventNote            = "note"
	EventTransportClosed = "transport_closed"
	// EventCancelLeaving: a cancel's signal is leaving now (Signal), before
	// its cancel_sent says how the send went.
	EventCancelLeaving = "cancel_leaving"
	// EventRoundTrip: the client timed one of its own plain requests
	// (Text names its method, RTT the time).
	EventRoundTrip = "round_trip"
	// EventState: a request changed state in the tracker (State, From).
	EventState = "state"
	// EventViolation: the tracker recorded a protocol violation (Code,
	// Text holds the detail).
	EventViolation = "violation"
	// EventFinding: a check battery finding (Code is the check's ID,
	// Status its PASS/WARN/FAIL, Text its detail).
	EventFinding = "finding"
	// EventInjected: `inflight proxy` did something on purpose (a --rule):
	// Injected names the action, Text says what was done.
	EventInjected = "injected"
	// EventReply: `inflight proxy`'s answer to one viewer's command on the
	// attach socket (Code "done" or "refused", Text why); only that viewer
	// gets it, never a trace file.
	EventReply = "reply"
)

// The notes of a proxy's trace that say what its tracker did outside a
// message (proxy/recorder.go writes them; `inflight attach` reads them to
// do the same at the same time).
const (
	// NoteHostClosed: the host closed the proxy's stdin (Tracker.HostGone).
	NoteHostClosed = "the host closed its end (stdin)"
	// NoteLateWindowOver: the late window of a host's cancel passed
	// (Tracker.Due at the note's time).
	NoteLateWindowOver = "late window over"
	// NoteHostResumed: the host resumed a stream, a GET with Last-Event-ID
	// (Tracker.HostResumed).
	NoteHostResumed = "the host resumed a stream (Last-Event-ID)"
	// NoteResumeWaitOver: the wait for the host to resume a stream it
	// closed on legacy HTTP passed (Tracker.Due at the note's time).
	NoteResumeWaitOver = "no stream resumed in the wait"
	// NoteHostReopened: the host opened a GET stream without
	// Last-Event-ID (Tracker.HostReopenedIn).
	NoteHostReopened = "the host opened a stream without Last-Event-ID"
	// NoteHostEndedSession: the host ended its HTTP session, a DELETE
	// (Tracker.HostEndedSession).
	NoteHostEndedSession = "the host ended its session (DELETE)"
	// NoteUpstreamEnded: the server's stream of the note's request ended
	// before its answer (Tracker.UpstreamStreamEndedIn).
	NoteUpstreamEnded = "the server's stream ended before its answer"
)

// Record is one line of a trace. Fields that do not apply are omitted.
type Record struct {
	// MS is the time since the trace started, in milliseconds (with
	// microsecond precision).
	MS float64 `json:"ms"`
	// Dir is "out", "in" or "local".
	Dir string `json:"dir"`
	// By names who sent a message in a trace of someone else's traffic
	// (`inflight proxy`: "host" on "out", "server" on "in"); empty in
	// inflight's own traces, where out is inflight.
	By string `json:"by,omitempty"`
	// ID is the JSON-RPC request the line concerns.
	ID *wire.ID `json:"id,omitempty"`
	// Msg is the JSON-RPC message as sent or received. It is the exact
	// bytes unless they spanned several lines (an SSE event's data may), in
	// which case they were compacted and Compacted is set.
	Msg       json.RawMessage `json:"msg,omitempty"`
	Compacted bool            `json:"compacted,omitempty"`
	// Event names a line that carries no message.
	Event string `json:"event,omitempty"`
	// Internal marks the client's own housekeeping traffic (era probe,
	// initialize, answers to server pings).
	Internal bool `json:"internal,omitempty"`

	// Raw holds bytes that were not a valid JSON-RPC message (malformed).
	Raw string `json:"raw,omitempty"`
	// Truncated counts bytes dropped from Raw, Msg or Text to bound memory.
	Truncated int `json:"truncated,omitempty"`
	// Dropped, on a note, counts the lines of a flood (the server's
	// stderr) left out of the trace at that point.
	Dropped int `json:"dropped,omitempty"`
	// Text is a stderr line, note, HTTP status text or violation detail.
	Text string `json:"text,omitempty"`
	// Error is the error of a failure or closure.
	Error string `json:"error,omitempty"`
	// Status and ContentType describe an HTTP exchange.
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	// Signal and Reason describe a cancel_sent (a cancel_leaving has its
	// Signal).
	Signal string `json:"signal,omitempty"`
	Reason string `json:"reason,omitempty"`
	// RTT is a round_trip's time, in milliseconds (with microsecond
	// precision): the tracker's crossing window is half the quickest.
	RTT float64 `json:"rttMs,omitempty"`
	// ByClient: a stream_closed inflight closed itself.
	ByClient bool `json:"byClient,omitempty"`
	// Lost: a request_failed whose request is lost rather than rejected.
	Lost bool `json:"lost,omitempty"`
	// Owner, on a message the server sent on a request's HTTP response
	// stream (a response, a notification, a request of the server's), is
	// that request (event.Event.Owner): what the tracker judges a message
	// of another request on it by, and ties a server's question to its
	// request by (in a proxy's trace too). Absent on stdio, on HTTP+SSE and
	// on the legacy GET stream, where no request has a stream of its own.
	Owner *wire.ID `json:"owner,omitempty"`
	// Resumed: a stream_opened that resumes the line's request's response
	// stream with Last-Event-ID (event.Event.Resumed); what comes on it
	// after is a replay, or what follows one.
	Resumed bool `json:"resumed,omitempty"`
	// State and From describe a state change; Method and Target the
	// request, on its first state line.
	State  string `json:"state,omitempty"`
	From   string `json:"from,omitempty"`
	Method string `json:"method,omitempty"`
	Target string `json:"target,omitempty"`
	// Code is a violation code or a check ID; Status a finding's
	// PASS/WARN/FAIL (in CheckStatus, since Status is HTTP's).
	Code        string `json:"code,omitempty"`
	CheckStatus string `json:"checkStatus,omitempty"`
	// Connection details of a connected line.
	Transport       string `json:"transport,omitempty"`
	Era             string `json:"era,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	Server          string `json:"server,omitempty"`
	SessionID       string `json:"sessionId,omitempty"`
	// Violation is the code of a violation the line's message caused
	// (traces exported from the tracker's protocol log).
	Violation string `json:"violation,omitempty"`
	// Coalesced: this progress line stands for itself and Coalesced later
	// progress notifications for the same request, which the protocol log
	// merged (session.LogProgressPerRequest); Msg is the latest of them,
	// received at LastMS.
	Coalesced int     `json:"coalesced,omitempty"`
	LastMS    float64 `json:"lastMs,omitempty"`
	// Verdict, on a message that arrived after its request was given up,
	// is the tracker's judgement of it (session/crossing.go): "crossed"
	// (it may have been sent before the server saw the cancel) or "late".
	// replay prints it as it is, and judges nothing itself.
	Verdict string `json:"verdict,omitempty"`
	// Injected, in a proxy's trace, names the rule's action ("delay 30s",
	// "drop", "cancel 1s") that acted on this line: on an "injected" event,
	// on the server's message it held or dropped (which the host got late
	// or never), and on the messages inflight itself sent ("by":
	// "inflight": the cancel upstream, the error answered to the host).
	Injected string `json:"injected,omitempty"`
	// Parent, on the state lines of a task's own requests (tasks/get,
	// tasks/result, tasks/cancel), is the request whose task they serve;
	// replay shows them in that request's table.
	Parent *wire.ID `json:"parent,omitempty"`
	// Round and Conversation, on the state line of a multi round-trip
	// request's later round, are its number (from 2) and the first
	// round's ID: the rounds of one conversation, under their own IDs.
	Round        int      `json:"round,omitempty"`
	Conversation *wire.ID `json:"conversation,omitempty"`
	// End, in the stream a proxy sends `inflight attach` (Writer.
	// SetPositions), is where a server's message ends in its stdout, or,
	// on the host's notifications/cancelled and on a cancel a rule sent,
	// how much the server had written when it passed: the positions the
	// proxy's tracker judged crossings by (session/crossing.go), so that
	// the view judges with the same facts.
	End int `json:"end,omitempty"`
	// HTTP is the exchange of an http_exchange line (EventHTTPExchange).
	HTTP *HTTP `json:"http,omitempty"`
}

// Message decodes the record's message, if it has one.
func (r *Record) Message() (wire.Message, bool) {
	if len(r.Msg) == 0 {
		return wire.Message{}, false
	}
	m, err := wire.Decode(r.Msg)
	return m, err == nil
}

// RequestID is the request the line concerns: its ID field, or for a
// progress notification its token (inflight's progress tokens are its
// request IDs), or for a notifications/cancelled the ID it names.
func (r *Record) RequestID() (wire.ID, bool) {
	if r.ID != nil && !r.ID.IsZero() {
		return *r.ID, true
	}
	m, ok := r.Message()
	if !ok {
		return wire.ID{}, false
	}
	// Requests the server sends, and inflight's answers to them, carry IDs
	// from the server's own namespace: they name none of inflight's requests.
	if (r.Dir == DirIn && m.Kind == wire.KindRequest) || (r.Dir == DirOut && m.IsResponse()) {
		return wire.ID{}, false
	}
	if id, ok := messageID(m); ok {
		return id, true
	}
	return wire.ID{}, false
}

// messageID finds the request a message concerns.
func messageID(m wire.Message) (wire.ID, bool) {
	switch m.Kind {
	case wire.KindRequest, wire.KindResult, wire.KindError:
		if !m.ID.IsZero() && m.ID != wire.NullID {
			return m.ID, true
		}
	case wire.KindNotification:
		switch m.Method {
		case wire.NotifyProgress:
			if p, err := wire.DecodeProgress(m.Params); err == nil {
				return p.Token, true
			}
		case wire.NotifyCancelled:
			if c, err := wire.DecodeCancelled(m.Params); err == nil {
				return c.RequestID, true
			}
		}
	}
	return wire.ID{}, false
}
