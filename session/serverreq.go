package session

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"time"

	"inflight/event"
	"inflight/wire"
)

// A legacy server asks its questions with requests of its own
// (elicitation/create, sampling/createMessage, roots/list), which the
// client answers (client.Config.ServerRequests) or refuses, and which the
// server may withdraw with notifications/cancelled. The client marks that
// traffic Internal; the tracker follows it here, as ServerRequests tied to
// the client request they belong to. Their IDs are the server's, a
// namespace of their own: they never name a Request.

// ServerRequestState is where one of the server's requests is.
type ServerRequestState uint8

// The states of a server request.
const (
	// ServerWaiting: asked, not answered yet.
	ServerWaiting ServerRequestState = iota
	// ServerAnswered: answered with a result (an elicitation accepted, a
	// sampling reply, the roots).
	ServerAnswered
	// ServerDeclined: answered, declined (an ElicitResult "decline", or
	// the error -1 for sampling).
	ServerDeclined
	// ServerDismissed: answered with an ElicitResult "cancel" (dismissed
	// without a choice).
	ServerDismissed
	// ServerRefused: answered with an error (inflight's default, -32601,
	// when nothing answers that method).
	ServerRefused
	// ServerWithdrawn: the server cancelled it with notifications/cancelled
	// before it was answered.
	ServerWithdrawn
	// ServerLost: the connection closed before it was answered.
	ServerLost
	// ServerAbandoned: the request it arrived during ended (the server
	// answered it) before this was answered or withdrawn. It is not known
	// to be over: a notifications/cancelled that follows still makes it
	// withdrawn, and an answer may still be sent.
	ServerAbandoned
	// ServerNotAnswered: it came under the ID of another of the server's
	// requests still waiting (server_request_reused_id); inflight answers
	// only the first, so that an answer is never read as the other's.
	ServerNotAnswered
)

var serverRequestStateNames = [...]string{
	ServerWaiting:     "waiting",
	ServerAnswered:    "answered",
	ServerDeclined:    "declined",
	ServerDismissed:   "dismissed",
	ServerRefused:     "refused",
	ServerWithdrawn:   "withdrawn",
	ServerLost:        "connection_lost",
	ServerAbandoned:   "abandoned",
	ServerNotAnswered: "not_answered",
}

// String is the state's snake_case name, as JSON output uses it.
func (s ServerRequestState) String() string {
	if int(s) < len(serverRequestStateNames) {
		return serverRequestStateNames[s]
	}
	return "unknown"
}

// MarshalText makes a ServerRequestState encode as its name.
func (s ServerRequestState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// TiedBy says how the tracker knew which request a server request
// belongs to.
type TiedBy uint8

// The ways.
const (
	// TiedNone: it could not tell (several requests were in flight on
	// stdio, or none).
	TiedNone TiedBy = iota
	// TiedStream: it came on that request's HTTP response stream.
	TiedStream
	// TiedTask: its _meta named that request's task
	// (io.modelcontextprotocol/related-task).
	TiedTask
	// TiedOnly: it arrived while that request was the only one in flight
	// that could ask (a tools/call, prompts/get or resources/read; a
	// tools/list beside it cannot).
	TiedOnly
	// The ways only a log line (notifications/message) is tied, when it
	// came on no request's stream with several requests in flight
	// (session/logtie.go). TiedProgressToken: its _meta named the
	// request's progress token. TiedLogger: its logger is the name of the
	// one request in flight acting on that name (a tool's, a prompt's,
	// a resource's URI). TiedLevel: that request was the only one in
	// flight that asked for log lines at that level.
	TiedProgressToken
	TiedLogger
	TiedLevel
)

func (b TiedBy) String() string {
	switch b {
	case TiedStream:
		return "stream"
	case TiedTask:
		return "related_task"
	case TiedOnly:
		return "only_request_in_flight"
	case TiedProgressToken:
		return "progress_token"
	case TiedLogger:
		return "logger"
	case TiedLevel:
		return "log_level"
	}
	return "none"
}

// MarshalText makes a TiedBy encode as its name.
func (b TiedBy) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// ServerRequest is one request a legacy server sent inflight.
type ServerRequest struct {
	// ID is the server's ID for it (the server's namespace, not inflight's).
	ID     wire.ID
	Method string
	// Params are its params (clipped; raw, sanitise before display).
	Params json.RawMessage
	// At is when it arrived; Ended when it was answered, withdrawn or lost.
	At, Ended time.Time
	State     ServerRequestState
	// During is the inflight request it belongs to (its ID then), and
	// TiedBy how that was known; zero and TiedNone when it could not be.
	During wire.ID
	TiedBy TiedBy
	// InFlight is how many of inflight's requests were in flight when it
	// came and could not be tied to one (TiedNone), 0 otherwise.
	InFlight int
	// Answer is the result inflight sent (clipped), Error the error.
	Answer json.RawMessage
	Error  *wire.Error
	// Reason is the reason the server's notifications/cancelled gave when
	// it withdrew it (clipped; raw, sanitise before display).
	Reason string
	// AnswerFailed is why the last answer inflight wrote could not be
	// sent ("" when none failed): the request waits again.
	AnswerFailed string
	// seq is the last request ID inflight had begun when it came: its
	// place among the requests (ServerRequestPlace), whatever the clock.
	seq int64
	// pauses is the request whose timeout this question pauses while it
	// waits for the user (pause.go); nil when it pauses none.
	pauses *Request
}

// ServerRequestPlace is where s came among the requests in history: the
// index of the last one begun before it (-1: before every one kept). The
// order is the order of events, not of times, which may be equal.
func (t *Tracker) ServerRequestPlace(s *ServerRequest) int {
	return sort.Search(len(t.hist), func(i int) bool { return t.hist[i].seq > s.seq }) - 1
}

// Open reports whether it still waits for an answer.
func (s *ServerRequest) Open() bool { return s.State == ServerWaiting }

// ServerRequests returns the server's requests the tracker keeps (the
// last 1000), oldest first. Read-only.
func (t *Tracker) ServerRequests() []*ServerRequest { return t.serverReqs }

// ServerRequest finds one of the server's requests still waiting by its
// ID.
func (t *Tracker) ServerRequest(id wire.ID) (*ServerRequest, bool) {
	s, ok := t.serverOpen[id]
	return s, ok
}

// onInternal follows the client's own traffic that concerns the server's
// requests: the request, inflight's answer, and the server withdrawing it.
func (t *Tracker) onInternal(ev *event.Event) {
	if t.conn.Era == event.EraModern {
		return
	}
	switch {
	case ev.Kind == event.Received && ev.Msg.Kind == wire.KindRequest && ev.Msg.Method != wire.MethodPing:
		t.serverAsked(ev)
	case ev.Kind == event.Sent && (ev.Msg.Kind == wire.KindResult || ev.Msg.Kind == wire.KindError):
		t.serverAnswered(ev)
	case ev.Kind == event.RequestFailed:
		t.serverAnswerFailed(ev)
	case ev.Kind == event.Received && ev.Msg.Kind == wire.KindNotification && ev.Msg.Method == wire.NotifyCancelled:
		if c, err := wire.DecodeCancelled(ev.Msg.Params); err == nil {
			t.serverWithdrew(c.RequestID, c.Reason, ev)
		}
	}
}

func (t *Tracker) serverAsked(ev *event.Event) {
	if t.serverOpen == nil {
		t.serverOpen = map[wire.ID]*ServerRequest{}
	}
	p := ev.Msg.Params
	if len(p) > maxAskedBytes {
		p = nil
	}
	s := &ServerRequest{ID: ev.Msg.ID, Method: clip(ev.Msg.Method, 64), Params: bytes.Clone(p), At: ev.Time, seq: t.lastID}
	var r *Request
	switch {
	case !ev.Owner.IsZero():
		r, s.TiedBy = t.lookup(ev.Owner), TiedStream
	default:
		if id, ok := wire.RelatedTask(ev.Msg.Params); ok && t.tasks[id] != nil {
			r, s.TiedBy = t.tasks[id], TiedTask
		} else if only := t.askerInFlight(); only != nil {
			r, s.TiedBy = only, TiedOnly
		}
	}
	if r != nil {
		s.During = r.ID
		r.conv().addServerRequest(s)
	} else {
		s.TiedBy = TiedNone
		s.InFlight = t.userInFlight()
	}
	old := t.serverOpen[s.ID]
	if old == nil {
		// An abandoned request still waits for inflight's answer too (its
		// call ended, its question did not): the client still holds its
		// ID and answers nothing else under it.
		old = t.abandoned(s.ID)
	}
	if old != nil {
		// The server reused an ID still waiting for inflight's answer.
		// The client answers only the first (client.handleServerRequest),
		// so what inflight sends under that ID stays the first one's.
		t.violate(ViolationServerRequestReusedID, "the server sent "+strconv.Quote(s.Method)+" under ID "+s.ID.String()+
			", which its "+strconv.Quote(old.Method)+" still waiting for an answer has; the second is not answered", r, wire.ID{}, ev)
		s.State, s.Ended = ServerNotAnswered, ev.Time
	} else {
		t.serverOpen[s.ID] = s
		t.questionOpened(s, r, ev.Time)
	}
	t.serverReqs = append(t.serverReqs, s)
	if len(t.serverReqs) > maxServerRequestsKept {
		drop := len(t.serverReqs) - maxServerRequestsKept
		for _, d := range t.serverReqs[:drop] {
			if t.serverAbandoned[d.ID] == d {
				delete(t.serverAbandoned, d.ID)
			}
		}
		clear(t.serverReqs[:drop])
		t.serverReqs = t.serverReqs[drop:]
	}
}

// addServerRequest keeps s among the server's requests that arrived
// during the conversation's request, at most maxServerRequestsKept of
// them: past that the oldest that ended is dropped (the oldest of all when
// every one is open), and counted. A flood of questions during one call
// (each with up to 64 KiB of params) would otherwise be kept whole for as
// long as the request is.
func (c *Conversation) addServerRequest(s *ServerRequest) {
	c.ServerRequests = append(c.ServerRequests, s)
	if len(c.ServerRequests) <= maxServerRequestsKept {
		return
	}
	drop := 0
	for i, o := range c.ServerRequests {
		if !o.Open() {
			drop = i
			break
		}
	}
	c.ServerRequests = slices.Delete(c.ServerRequests, drop, drop+1) // clears the tail too
	c.ServerRequestsDropped++
}

// userInFlight counts the user's requests in flight that the server's
// question could belong to (as askerInFlight sees them): what the user
// sees as the candidates in the list.
func (t *Tracker) userInFlight() int {
	n, any := 0, 0
	for _, r := range t.active {
		if !r.isUsers() {
			continue
		}
		any++
		if canAsk(r.Method) {
			n++
		}
	}
	if n == 0 {
		return any
	}
	return n
}

// isUsers reports whether r is one of the user's own requests: not a
// task's housekeeping, not a subscription, not a host's.
func (r *Request) isUsers() bool { return r.Role == RoleNone && !r.listen && !r.ByHost }

// canAsk reports whether a request with method can be the one a server's
// question belongs to: the requests whose handling may need the user (a
// tool call, a prompt, a resource read; the same that may be answered
// with input_required in the modern era). A tools/list or a
// logging/setLevel sent beside a tool call is never the one.
func canAsk(method string) bool { return supportsInputRequired(method) }

// Waiting counts what waits for the user now: modern requests waiting
// for input (active, but nothing of theirs on the wire) and the legacy
// server's own requests still waiting for an answer.
func (t *Tracker) Waiting() (input, server int) {
	for _, r := range t.active {
		if r.State == StateWaitingInput {
			input++
		}
	}
	return input, len(t.serverOpen)
}

// ServerRequestsUntied returns the server's requests kept that were tied
// to no request, oldest first (the order they came in).
func (t *Tracker) ServerRequestsUntied() []*ServerRequest {
	var out []*ServerRequest
	for _, s := range t.serverReqs {
		if s.TiedBy == TiedNone {
			out = append(out, s)
		}
	}
	return out
}

// onlyInFlight is the one user request in flight, or nil when there are
// none or several (then a log line arriving on stdio could belong to any,
// and the tracker does not guess).
func (t *Tracker) onlyInFlight() *Request {
	var only *Request
	for _, r := range t.active {
		if !r.isUsers() {
			continue
		}
		if only != nil {
			return nil
		}
		only = r
	}
	return only
}

// askerInFlight is the one user request in flight a server's question
// can belong to (canAsk), or nil when there are none or several. When no
// request in flight is of a kind that asks, the only request in flight
// of any kind is the one (a method the tracker does not know may ask).
func (t *Tracker) askerInFlight() *Request {
	var only *Request
	for _, r := range t.active {
		if !r.isUsers() || !canAsk(r.Method) {
			continue
		}
		if only != nil {
			return nil
		}
		only = r
	}
	if only == nil && t.userInFlight() == 1 {
		return t.onlyInFlight()
	}
	return only
}

func (t *Tracker) serverAnswered(ev *event.Event) {
	s := t.serverOpen[ev.Msg.ID]
	if s == nil {
		// An abandoned request may still be answered (its form stays
		// open): what went out is its answer.
		if s = t.abandoned(ev.Msg.ID); s == nil {
			return
		}
	}
	delete(t.serverOpen, s.ID)
	delete(t.serverAbandoned, s.ID)
	t.questionClosed(s, ev.Time)
	s.Ended, s.AnswerFailed = ev.Time, ""
	if ev.Msg.Kind == wire.KindError {
		s.Error = clipError(ev.Msg.Error)
		s.State = ServerRefused
		if ev.Msg.Error.Code == wire.CodeUserRejected {
			s.State = ServerDeclined
		}
		return
	}
	res := ev.Msg.Result
	if len(res) <= maxMessageBytes*16 {
		s.Answer = bytes.Clone(res)
	}
	s.State = ServerAnswered
	if s.Method == wire.MethodElicitationCreate {
		var a struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(res, &a)
		switch a.Action {
		case "decline":
			s.State = ServerDeclined
		case "cancel":
			s.State = ServerDismissed
		}
	}
}

// serverAnswerFailed applies the client's report that the answer it wrote
// to one of the server's requests could not be sent (ev.RequestID is the
// server's ID): the server never got it, so the request waits again, with
// why, for another answer.
func (t *Tracker) serverAnswerFailed(ev *event.Event) {
	id := ev.RequestID
	if id.IsZero() || t.serverOpen[id] != nil {
		return
	}
	for i := len(t.serverReqs) - 1; i >= 0 && i >= len(t.serverReqs)-64; i-- {
		s := t.serverReqs[i]
		if s.ID != id {
			continue
		}
		switch s.State {
		case ServerAnswered, ServerDeclined, ServerDismissed, ServerRefused:
			why := "not sent"
			if ev.Err != nil {
				why = ev.Err.Error()
			}
			s.State, s.Ended, s.Answer, s.Error, s.AnswerFailed = ServerWaiting, time.Time{}, nil, nil, clip(why, 256)
			t.serverOpen[id] = s
			t.questionOpened(s, t.lookup(s.During), ev.Time)
		}
		return
	}
}

// serverWithdrew applies the server's notifications/cancelled of one of
// its own requests, and reports whether id named one still waiting.
func (t *Tracker) serverWithdrew(id wire.ID, reason string, ev *event.Event) bool {
	s := t.serverOpen[id]
	if s == nil {
		if s = t.abandoned(id); s == nil {
			return false
		}
	}
	delete(t.serverOpen, id)
	delete(t.serverAbandoned, id)
	t.questionClosed(s, ev.Time)
	s.State, s.Ended, s.Reason = ServerWithdrawn, ev.Time, clip(reason, 256)
	return true
}

// serversLost ends the server's requests still waiting when the
// connection closed.
func (t *Tracker) serversLost(at time.Time) {
	for id, s := range t.serverOpen {
		t.questionClosed(s, at)
		s.State, s.Ended = ServerLost, at
		delete(t.serverOpen, id)
	}
	// The abandoned ones stay abandoned (their call had ended), but the
	// next connection's IDs are its own.
	clear(t.serverAbandoned)
}

// onLog applies a notifications/message: a line of the request it belongs
// to (the request whose HTTP stream carried it; on stdio, the only request
// in flight). A modern server may log only for a request that asked with
// io.modelcontextprotocol/logLevel.
func (t *Tracker) onLog(ev *event.Event) {
	var m logParams
	_ = json.Unmarshal(ev.Msg.Params, &m)
	var r *Request
	tied := TiedStream
	if !ev.RequestID.IsZero() {
		r = t.lookup(ev.RequestID)
	} else {
		r, tied = t.logOwner(&m)
	}
	if r == nil {
		t.logsUnattributed++
		return
	}
	t.log.ring.buf[t.curLog].ID = r.ID
	c := r.conv()
	if t.conn.Era == event.EraModern && c.LogLevel == "" && !ev.RequestID.IsZero() {
		t.violate(ViolationLogNotRequested, "notifications/message for request "+r.ID.String()+
			", which carried no "+wire.MetaLogLevel+"; the server MUST NOT log for a request that did not ask", r, r.ID, ev)
	}
	c.LogCount++
	if len(c.Logs) < MaxLogLines {
		c.Logs = append(c.Logs, LogLine{At: ev.Time, Level: clip(m.Level, 32), Logger: clip(m.Logger, 128), Data: clip(string(m.Data), maxMessageBytes), TiedBy: tied})
	}
}

// LogsUnattributed counts notifications/message lines that belonged to no
// request the tracker could name.
func (t *Tracker) LogsUnattributed() int { return t.logsUnattributed }

// abandoned finds the server request left abandoned under id (nil when
// none is). Every abandoned one kept is found, however many came after:
// the client holds each until it is answered or withdrawn (up to 256 of
// them at once), whatever the tracker keeps.
func (t *Tracker) abandoned(id wire.ID) *ServerRequest {
	if s := t.serverAbandoned[id]; s != nil && s.State == ServerAbandoned {
		return s
	}
	return nil
}

// serversAbandoned marks the server requests still open that arrived
// during r, which just ended.
func (t *Tracker) serversAbandoned(r *Request, at time.Time) {
	for _, s := range r.Conv.ServerRequests {
		if s.Open() && t.serverOpen[s.ID] == s {
			t.questionClosed(s, at)
			delete(t.serverOpen, s.ID)
			s.State, s.Ended = ServerAbandoned, at
			if t.serverAbandoned == nil {
				t.serverAbandoned = map[wire.ID]*ServerRequest{}
			}
			t.serverAbandoned[s.ID] = s
		}
	}
}
