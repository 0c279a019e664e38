package session

import (
	"strconv"

	"inflight/event"
	"inflight/wire"
)

// What a server's message means when it names the wrong request: an
// answer to a cancelled request made up as an error whose code means
// nothing, and a cancel of a request the server never sent.
const (
	// ViolationCancelledErrorCode: a response to a request inflight
	// cancelled that is an error whose code is 0 or lies outside the
	// JSON-RPC reserved range (-32768 to -32000): a cancellation the
	// server made up as an error, which a client cannot tell from an
	// error of the request's own ("Implementations surfacing local errors
	// in JSON-RPC-shaped structures should ensure they cannot be mistaken
	// for errors received from the peer"). A late response is flagged
	// anyway; this says what kind.
	ViolationCancelledErrorCode = "cancelled_error_code"
	// ViolationServerCancelUnknown: in the legacy era, a server-sent
	// notifications/cancelled naming an ID the server never used for a
	// request of its own ("Cancellation notifications MUST only reference
	// requests that: Were previously issued in the same direction"); the
	// ID of one of inflight's requests above all, which only the client
	// may cancel.
	ViolationServerCancelUnknown = "server_cancel_unknown"
)

// codeRequestCancelled is the code JSON-RPC tooling (the Language Server
// Protocol's RequestCancelled) gives a cancelled request: outside the
// reserved range, but one a client can read as what it is.
const codeRequestCancelled = -32800

// standardErrorCode reports whether code is one JSON-RPC reserves
// (-32768 to -32000, where its own codes and MCP's are) or the
// well-known RequestCancelled, so a client can read it. Application
// codes lie outside; 0 means nothing at all.
func standardErrorCode(code int) bool {
	return code >= -32768 && code <= -32000 || code == codeRequestCancelled
}

// judgeCancelledError flags an error response to a request inflight
// cancelled whose code is no standard one: the server answered the
// cancel itself with a made-up error (a local error on the wire), which
// is more than a late answer.
func (t *Tracker) judgeCancelledError(r *Request, ev *event.Event) {
	if r.Cancel == nil || ev.Msg.Kind != wire.KindError || ev.Msg.Error == nil || standardErrorCode(ev.Msg.Error.Code) {
		return
	}
	e := ev.Msg.Error
	t.violate(ViolationCancelledErrorCode, "request "+r.ID.String()+", which inflight cancelled, was answered with error "+
		strconv.Itoa(e.Code)+" "+strconv.Quote(clip(e.Message, 128))+
		": a code outside the JSON-RPC range (-32768 to -32000), which no client can tell from an error of the request's own", r, r.ID, ev)
}

// judgeServerCancel flags, in the legacy era, a server's cancel of an ID
// it never sent as a request of its own (serverWithdrew found no open or
// abandoned one). One it sent and inflight already answered is the race
// the spec allows. A proxy's tracker follows none of the server's
// requests, so it judges nothing here.
func (t *Tracker) judgeServerCancel(id wire.ID, ev *event.Event) {
	if t.observing {
		return
	}
	for _, s := range t.serverReqs {
		if s.ID == id {
			return
		}
	}
	detail := "the server sent notifications/cancelled for " + id.String() + ", which it never sent inflight as a request of its own"
	r := t.byID[id]
	if r != nil {
		detail += "; it is the ID of inflight's " + r.Method + ", which only inflight may cancel"
	}
	t.violate(ViolationServerCancelUnknown, detail, r, id, ev)
}
