// Package event is the vocabulary between the wire and the judgement: the
// immutable Event a transport reports (a message sent or read, a stream
// opened or closed, a cancel signal, a stderr line), and the facts of a
// connection (era, transport, server). Package client produces events;
// package session consumes them. It imports nothing that does I/O.
package event

import (
	"bytes"
	"time"

	"inflight/wire"
)

// Kind says what happened.
type Kind uint8

// The kinds of events a client reports.
const (
	// Sent: a message was written to the server. Raw holds the exact
	// bytes, Msg the decoded envelope.
	Sent Kind = iota + 1
	// Received: a message was read from the server.
	Received
	// Malformed: a line (stdio) or SSE event (HTTP) that is not a valid
	// JSON-RPC message. Raw holds it (truncated to MaxRawKept), Err says why.
	Malformed
	// CancelSent: Cancel sent its signal for RequestID, or Close did
	// for a modern HTTP request still in flight (closing its stream is the
	// modern cancel). Signal says which signal, Reason the reason given,
	// Time when the signal left (for legacy HTTP, when the POST began); Err
	// is set when sending it failed.
	CancelSent
	// StreamOpened: HTTP response stream for RequestID opened (Status,
	// ContentType set). For the legacy GET stream RequestID is zero.
	StreamOpened
	// StreamClosed: HTTP response stream for RequestID ended. ByClient
	// says inflight closed it (a cancel, or the end of the late window); Err
	// is set when it broke.
	StreamClosed
	// HTTPStatus: an HTTP exchange finished with a status worth showing
	// (errors, 202 for notifications, redirects). Text describes it.
	HTTPStatus
	// Stderr: one line of a stdio server's stderr, in Text.
	Stderr
	// RequestFailed: a request could not be delivered or its reply could
	// not be read (connection refused, HTTP 500, wrong content type, a
	// modern stream broken without a response). Err says why; LostConnection
	// says the request is lost rather than answered with an error.
	RequestFailed
	// Connected: the era is known and requests may be sent. Info holds
	// the connection details.
	Connected
	// Note: something the client did on its own that a person debugging
	// wants to see (era probe outcome, version retry, stream resume). Text.
	Note
	// TransportClosed: the connection is gone (process exited, client
	// closed). Err holds the cause, nil after a clean Close.
	TransportClosed
	// RoundTrip: the client timed one of its own plain requests (a ping in
	// the legacy era, server/discover in the modern one) from the moment its
	// bytes left to the moment its answer was read. RTT holds the time, Text
	// the method. The tracker takes it as the least time the server needs
	// to react to anything, a cancel included.
	RoundTrip
	// CancelLeaving: the cancel's signal for RequestID is leaving now — its
	// write (stdio) or POST (legacy HTTP) starts. Time is that moment;
	// Signal the signal; StreamEnd, on stdio, how many bytes the server had
	// written to its stdout by then (read by inflight, or still waiting in
	// the pipe), 0 when unknown. The CancelSent that follows says how the
	// send went. Reported before the send, so that everything read after
	// the signal left is applied after the tracker knows when it left.
	CancelLeaving
	// ServerRequestRefused: a legacy server had more of its own requests
	// waiting for inflight's answer than inflight allows, so the request in
	// Msg (RequestID is the server's ID; Raw at most MaxRawKept bytes of
	// it) is refused with a JSON-RPC error instead of answered. Text says
	// why. It is Internal (the server's request is no request of ours); the
	// client only reports the fact, and the session judges it.
	ServerRequestRefused
	// Auth: a step of the OAuth authorization of an HTTP connection (the
	// challenge, a metadata document fetched, the registration, the browser
	// step, the token exchange or refresh). Auth holds it; it never carries
	// a token or a secret.
	Auth
	// Exchange: one HTTP request the client made and its response, whole,
	// once its body ended or the request failed (HTTP holds it), recorded
	// only when Config.RecordHTTP asks (a trace or an HAR is being
	// written). RequestID is the JSON-RPC request its body carried, if
	// any. Nothing judges it: the tracker leaves it out of the protocol
	// log; it is for the trace and the HAR.
	Exchange
)

var kindNames = map[Kind]string{
	Sent:            "sent",
	Received:        "received",
	Malformed:       "malformed",
	CancelSent:      "cancel_sent",
	StreamOpened:    "stream_opened",
	StreamClosed:    "stream_closed",
	HTTPStatus:      "http_status",
	Stderr:          "stderr",
	RequestFailed:   "request_failed",
	Connected:       "connected",
	Note:            "note",
	TransportClosed: "transport_closed",
	RoundTrip:       "round_trip",
	CancelLeaving:   "cancel_leaving",

	ServerRequestRefused: "server_request_refused",
	Auth:                 "auth",
	Exchange:             "http_exchange",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "unknown"
}

// Direction says which way an event's bytes went.
type Direction uint8

// The directions.
const (
	// DirLocal: something the client observed or decided (stream opened,
	// connection established, request failed, note).
	DirLocal Direction = iota
	// DirOut: bytes inflight sent (requests, notifications, cancels).
	DirOut
	// DirIn: bytes the server sent (messages, malformed lines, stderr).
	DirIn
)

// String is the direction as the log view and traces name it.
func (d Direction) String() string {
	switch d {
	case DirOut:
		return "out"
	case DirIn:
		return "in"
	}
	return "local"
}

// MarshalText makes a Direction encode as its name in JSON.
func (d Direction) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Direction is which way the bytes of an event of this kind went: the one
// mapping the protocol log and the trace share.
func (k Kind) Direction() Direction {
	switch k {
	case Sent, CancelSent:
		return DirOut
	case Received, Malformed, Stderr:
		return DirIn
	}
	return DirLocal
}

// CancelSignal is the signal Cancel sent.
type CancelSignal uint8

// The cancel signals.
const (
	SignalNone CancelSignal = iota
	// SignalNotification: notifications/cancelled was sent (stdio; legacy HTTP).
	SignalNotification
	// SignalStreamClosed: the request's SSE response stream was closed and no
	// notification was sent (modern Streamable HTTP).
	SignalStreamClosed
	// SignalTaskCancel: a tasks/cancel request was sent for the request's
	// task (the session begins it; the client sends it as any request).
	SignalTaskCancel
)

// String is the signal's name as it appears in JSON output and traces.
func (s CancelSignal) String() string {
	switch s {
	case SignalNotification:
		return "notifications/cancelled"
	case SignalStreamClosed:
		return "stream_closed"
	case SignalTaskCancel:
		return "tasks/cancel"
	}
	return "none"
}

// Era is a protocol era.
type Era uint8

// The protocol eras.
const (
	EraUnknown Era = iota
	EraModern      // 2026-07-28 and later: per-request _meta, no handshake
	EraLegacy      // 2025-11-25 and earlier: initialize handshake
)

func (e Era) String() string {
	switch e {
	case EraModern:
		return "modern"
	case EraLegacy:
		return "legacy"
	}
	return "unknown"
}

// TransportKind names a transport.
type TransportKind uint8

// The transports.
const (
	TransportStdio TransportKind = iota + 1
	TransportHTTP
	// TransportSSE is the deprecated HTTP+SSE transport of 2024-11-05: one
	// GET stream for everything the server sends, a POST per message.
	TransportSSE
)

func (t TransportKind) String() string {
	switch t {
	case TransportStdio:
		return "stdio"
	case TransportHTTP:
		return "http"
	case TransportSSE:
		return "sse"
	}
	return "unknown"
}

// ConnInfo describes an established connection. All of it is copied; the
// server-provided strings are raw and must be sanitised before display.
type ConnInfo struct {
	Transport       TransportKind
	Era             Era
	ProtocolVersion string
	ServerName      string
	ServerVersion   string
	Instructions    string
	// Capabilities is the server's capabilities object as sent.
	Capabilities []byte
	// SupportedVersions is what a modern server listed in server/discover.
	SupportedVersions []string
	// SessionID is the legacy HTTP Mcp-Session-Id, if any.
	SessionID string
}

// Clone copies the slices too, so a caller can never change (or race with)
// the producer's own copy.
func (i ConnInfo) Clone() ConnInfo {
	i.Capabilities = bytes.Clone(i.Capabilities)
	i.SupportedVersions = append([]string(nil), i.SupportedVersions...)
	return i
}

// MaxRawKept bounds the bytes of a malformed message or stderr line kept in an
// event; the rest is counted in Truncated.
const MaxRawKept = 64 << 10

// Event is one thing that happened on the wire. Every field is a copy owned
// by the receiver: no other goroutine touches it after it is sent.
type Event struct {
	Kind Kind
	// Time is when the client observed the event (read, written, closed).
	Time time.Time
	// RequestID is the request the event concerns, when there is one. For a
	// received response it is the response's ID. For a received
	// notification it is the request whose HTTP response stream carried it
	// (zero on stdio and on the legacy GET stream); progress is matched to
	// its request by token, not by this.
	RequestID wire.ID
	// Raw is the exact bytes sent or received.
	Raw []byte
	// Truncated counts bytes of Raw or Text that were dropped to bound memory.
	Truncated int
	// Msg is the decoded message for Sent and Received.
	Msg wire.Message
	// Progress is set on an Received of notifications/progress whose
	// params are valid: the client's reader decodes them once, so that the
	// consumer (the UI's goroutine, the busiest) need not. Read-only.
	Progress *wire.Progress
	// Signal and Reason describe an CancelSent.
	Signal CancelSignal
	Reason string
	// Status and ContentType describe an HTTP exchange.
	Status      int
	ContentType string
	// ByClient: for StreamClosed, inflight closed the stream itself.
	ByClient bool
	// SessionID is, for what a proxy saw on legacy HTTP, the host's
	// Mcp-Session-Id on the message (or the stream closed): a proxy may
	// carry several hosts' sessions.
	SessionID string
	// LostConnection: for RequestFailed, the request is lost (no error
	// response will come), as opposed to rejected.
	LostConnection bool
	// Text is a stderr line, a note, or an HTTP status description.
	Text string
	// Err is the error of a failure or closure.
	Err error
	// StreamEnd is, for a message read from a stdio server, how many bytes
	// of its stdout precede the end of the message (0 when unknown, as on
	// HTTP); for a stdio CancelSent, how many the server had written when
	// the cancel's write began. A message whose end is within what the server had
	// written by then was sent before the cancel left, whenever it is read.
	StreamEnd int64
	// RTT is the measured round trip of a RoundTrip event.
	RTT time.Duration
	// Info is set on Connected.
	Info *ConnInfo
	// Owner is, for a request the server sent on an HTTP response stream,
	// the request whose stream carried it (zero on stdio and GET streams):
	// the server asked it while working on that request. RequestID is the
	// server's own ID for it. For a response read on a request's HTTP
	// response stream it is that request too (RequestID is the response's
	// ID): an answer to another request on it is the server's mistake. For
	// a notification read on a request's HTTP response stream it is that
	// request, as RequestID is. A trace records it ("owner"), so that a
	// replay knows which stream carried each message.
	Owner wire.ID
	// Resumed: for StreamOpened, a GET with Last-Event-ID that resumes
	// RequestID's broken (or dropped) response stream. A trace records it
	// ("resumed").
	Resumed bool
	// AuthStep is set on Auth.
	AuthStep *AuthStep
	// HTTP is set on Exchange.
	HTTP *HTTPExchange
	// Internal marks traffic of the client's own housekeeping (the era probe,
	// initialize, answers to server pings and server-to-client requests).
	// It belongs in the protocol log but not in the request tracker.
	Internal bool
}
