package session

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"inflight/event"
	"inflight/wire"
)

// Multi round-trip requests (modern era, basic/patterns/mrtr.mdx): a
// tools/call, prompts/get or resources/read may be answered with
// resultType "input_required", carrying inputRequests (an elicitation, a
// sampling request, a roots/list, keyed by the server) and an opaque
// requestState. The client gathers the answers and retries the original
// request under a new JSON-RPC ID, echoing requestState exactly, until
// the server completes it.
//
// The tracker keeps such a conversation as one Request: every round is a
// Round on Request.Conv, the request's ID is the current round's (so the
// client's events, its cancel and its progress token all name the round
// on the wire), and the first round's ID keeps finding it (Get, Index).
// Between rounds the request is StateWaitingInput. The tracker does no
// I/O: Answer begins the next round and returns it for the caller to
// send, as Due does for a task's polls.
//
// Waiting for the user runs no timer. Nothing is in flight on the wire
// while the request waits (the round that asked is answered), so there is
// no response to time out, and a cancel would send nothing; a person
// reading a form must not be hurried by a timeout meant for a server.
// Each round that is sent gets its own timeout and maximum, counted from
// when it began; the round cap bounds the conversation, and Elapsed still
// counts from the first round.

// DefaultMaxRounds is Config.MaxRounds when it is zero.
const DefaultMaxRounds = 10

// RefusedNotWaiting: Answer or EndConversation on a request that is not
// waiting for an answer.
const RefusedNotWaiting RefusalReason = 64

// Bounds on what a conversation keeps.
const (
	// maxAskedBytes bounds one input request's params kept on a round
	// (the raw response keeps them all, while the raw store does).
	maxAskedBytes = 64 << 10
	// MaxLogLines bounds Conversation.Logs; later lines are counted in
	// Conversation.LogCount only.
	MaxLogLines = 64
	// maxServerRequestsKept bounds the tracker's list of the server's own
	// requests (legacy); older ones are dropped from it.
	maxServerRequestsKept = 1000
)

// Conversation is what passed between the server and the user around one
// request: its rounds (modern), the server's own requests that arrived
// during it (legacy), and the log lines the server sent for it. It is nil
// on a request that had none of them.
type Conversation struct {
	// Rounds is every round of a multi round-trip request, oldest first;
	// empty for a request that never got an input_required answer.
	Rounds []Round
	// GaveUp says the round cap (Config.MaxRounds) ended the
	// conversation: the server still asked for input after that many
	// rounds.
	GaveUp bool
	// Stopped says why the conversation ended short of the server's
	// final answer, as the caller put it (EndConversation), or how the
	// tracker ended it ("gave up after 10 rounds", "no request in flight;
	// the conversation was dropped").
	Stopped string

	// ServerRequests are the legacy server's requests that arrived during
	// this request, oldest first: the open ones and the newest, at most
	// 1000 (maxServerRequestsKept); ServerRequestsDropped counts the older
	// ones that ended and were dropped.
	ServerRequests        []*ServerRequest
	ServerRequestsDropped int

	// LogLevel is the io.modelcontextprotocol/logLevel the request carried
	// in its _meta ("" when none).
	LogLevel string
	// Logs are the first MaxLogLines notifications/message lines the
	// server sent for this request; LogCount counts them all.
	Logs     []LogLine
	LogCount int

	params    json.RawMessage // the user's params, for the retries
	retryable bool            // begun while the caller could answer (Config.Converse)
}

// Round is one request on the wire of a multi round-trip conversation.
type Round struct {
	// ID is the round's JSON-RPC ID.
	ID wire.ID
	// Began is when it began (the first round: when the request did);
	// ResponseAt when the server's answer arrived (zero while it is out).
	Began, ResponseAt time.Time
	// Outcome is what the answer made of it: input_required, or the
	// request's final state for the last round (pending while out).
	Outcome State
	// Asked is what the server asked for, ordered by key.
	Asked []InputRequest
	// RequestState is the exact JSON value of the server's requestState
	// (nil when it gave none). It is never parsed: the next round echoes
	// these bytes.
	RequestState json.RawMessage
	// Answers is what the client answered, by key, as sent on the next
	// round (nil until Answer); AnsweredAt when.
	Answers    map[string]json.RawMessage
	AnsweredAt time.Time
}

// InputRequest is one thing a server asked for in an InputRequiredResult.
type InputRequest struct {
	// Key is the server's key for it in inputRequests.
	Key string
	// Method is elicitation/create, sampling/createMessage or roots/list.
	Method string
	// Params is its params as sent (clipped past 64 KiB; raw, sanitise
	// before display).
	Params json.RawMessage
}

// LogLine is one notifications/message line.
type LogLine struct {
	At     time.Time
	Level  string
	Logger string
	// Data is the data member's JSON, clipped (raw, sanitise before
	// display).
	Data string
	// TiedBy is how the line was known to be the request's: the stream
	// that carried it, the only request in flight, or (several in
	// flight) its progress token, its logger or the level asked for.
	TiedBy TiedBy
}

// Retry is the next round of a conversation, begun by Answer, for the
// caller to send like any request.
type Retry struct {
	// ID and ProgressToken are the round's (the request's from now on).
	ID, ProgressToken wire.ID
	Method            string
	// Params are the original params with inputResponses and the exact
	// requestState added.
	Params json.RawMessage
	// Round is the round's number, from 1.
	Round int
	// LateWindow is the request's late window, for the client
	// (client.Request.LateWindow): every round keeps the first's.
	LateWindow time.Duration
	// Change is the request's move from waiting_input to pending.
	Change Change
}

// Round reports which round the request is in (1 for a request that was
// never retried).
func (r *Request) Round() int {
	if r.Conv == nil || len(r.Conv.Rounds) == 0 {
		return 1
	}
	return len(r.Conv.Rounds)
}

// conv is r's conversation, made when first needed.
func (r *Request) conv() *Conversation {
	if r.Conv == nil {
		r.Conv = &Conversation{}
	}
	return r.Conv
}

// supportsInputRequired reports whether the MRTR page lets a server answer
// method with an InputRequiredResult.
func supportsInputRequired(method string) bool {
	switch method {
	case wire.MethodToolsCall, wire.MethodPromptsGet, wire.MethodResourcesRead:
		return true
	}
	return false
}

// begun notes what a new request needs for its conversation: the log
// level it asked for, and, when the caller can answer, its params for
// the retries.
func (t *Tracker) begun(r *Request, params json.RawMessage) {
	if lvl, ok := logLevel(params); ok {
		r.conv().LogLevel = clip(lvl, 64)
	}
	if t.cfg.Converse && supportsInputRequired(r.Method) {
		c := r.conv()
		c.params, c.retryable = bytes.Clone(params), true
	}
}

// logLevel is the io.modelcontextprotocol/logLevel in params' _meta.
func logLevel(params json.RawMessage) (string, bool) {
	if !bytes.Contains(params, []byte(wire.MetaLogLevel)) {
		return "", false
	}
	raw, ok := wire.MetaValue(params, wire.MetaLogLevel)
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// inputRequired applies a timely InputRequiredResult to r. It reports
// whether it dealt with the request's state; false leaves r to end as
// input_required, as a caller that cannot answer needs (Config.Converse
// off, or an answer the request cannot continue from).
func (t *Tracker) inputRequired(r *Request, ev *event.Event) bool {
	var res struct {
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  json.RawMessage            `json:"requestState"`
	}
	if err := json.Unmarshal(ev.Msg.Result, &res); err != nil {
		t.violate(ViolationMalformedMessage, "InputRequiredResult: "+err.Error(), r, r.ID, ev)
		return false
	}
	c := r.conv()
	if len(c.Rounds) == 0 {
		c.Rounds = append(c.Rounds, Round{ID: r.ID, Began: r.Created})
	}
	rd := &c.Rounds[len(c.Rounds)-1]
	rd.ResponseAt, rd.Outcome = ev.Time, StateInputRequired
	if len(res.RequestState) > 0 && string(res.RequestState) != "null" {
		rd.RequestState = bytes.Clone(res.RequestState)
	}
	keys := make([]string, 0, len(res.InputRequests))
	for k := range res.InputRequests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	declared := t.declaredCaps(rd.ID)
	for _, k := range keys {
		var q struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(res.InputRequests[k], &q); err != nil {
			t.violate(ViolationMalformedMessage, "input request "+strconv.Quote(clip(k, 64))+" is not a request object: "+err.Error(), r, r.ID, ev)
			continue
		}
		switch q.Method {
		case wire.MethodElicitationCreate, wire.MethodSamplingCreate, wire.MethodRootsList:
		default:
			t.violate(ViolationInputRequestMethod, "input request "+strconv.Quote(clip(k, 64))+" is "+strconv.Quote(clip(q.Method, 64))+
				"; an input request MUST be elicitation/create, sampling/createMessage or roots/list", r, r.ID, ev)
		}
		if need := capabilityFor(q.Method); need != "" && declared != nil && !declared[need] {
			t.violate(ViolationInputRequestUndeclared, "input request "+strconv.Quote(clip(k, 64))+" is "+q.Method+
				", but the request's clientCapabilities did not declare "+need+"; a server MUST NOT ask what the client did not declare", r, r.ID, ev)
		}
		p := q.Params
		if len(p) > maxAskedBytes {
			p = nil
		}
		rd.Asked = append(rd.Asked, InputRequest{Key: clip(k, 256), Method: clip(q.Method, 64), Params: bytes.Clone(p)})
	}
	if res.InputRequests == nil && rd.RequestState == nil {
		t.violate(ViolationInputRequiredEmpty, "an InputRequiredResult with neither inputRequests nor requestState; the server MUST include at least one", r, r.ID, ev)
	}
	if !supportsInputRequired(r.Method) {
		t.violate(ViolationInputRequiredMethod, r.Method+" was answered with input_required; only tools/call, prompts/get and resources/read may be", r, r.ID, ev)
		return false
	}
	if max := t.cfg.MaxRounds; len(c.Rounds) >= max {
		c.GaveUp = true
		c.Stopped = "gave up after " + strconv.Itoa(len(c.Rounds)) + " rounds"
		r.LocalError = c.Stopped + ": the server still asked for input (the cap is " + strconv.Itoa(max) + " rounds)"
		t.flag(r)
		t.finish(r, StateInputRequired, ev.Time)
		return true
	}
	if !c.retryable {
		return false
	}
	t.setState(r, StateWaitingInput, ev.Time)
	return true
}

// capabilityFor is the client capability an input request needs.
func capabilityFor(method string) string {
	switch method {
	case wire.MethodElicitationCreate:
		return "elicitation"
	case wire.MethodSamplingCreate:
		return "sampling"
	case wire.MethodRootsList:
		return "roots"
	}
	return ""
}

// declaredCaps is the set of capabilities the round's request, as sent,
// declared in its clientCapabilities; nil when the bytes sent are no
// longer kept or carry none to read (then nothing is judged).
func (t *Tracker) declaredCaps(id wire.ID) map[string]bool {
	raw, ok := t.raw.get(rawKey{id, rawRequest})
	if !ok {
		return nil
	}
	msg, err := wire.Decode(raw)
	if err != nil || msg.Kind != wire.KindRequest {
		return nil
	}
	caps, ok := wire.MetaValue(msg.Params, wire.MetaClientCapabilities)
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return nil
	}
	out := map[string]bool{}
	for k, v := range m {
		out[k] = len(v) > 0 && string(v) != "null"
	}
	return out
}

// Asked returns what the server asks of a request waiting for an answer
// (the last round's input requests), and its requestState's bytes.
func (r *Request) Asked() ([]InputRequest, json.RawMessage) {
	if r.Conv == nil || len(r.Conv.Rounds) == 0 {
		return nil, nil
	}
	rd := r.Conv.Rounds[len(r.Conv.Rounds)-1]
	return rd.Asked, rd.RequestState
}

// lookup finds a request by its ID or by the ID of any of its rounds.
func (t *Tracker) lookup(id wire.ID) *Request {
	if r := t.byID[id]; r != nil {
		return r
	}
	return t.roundOf[id]
}

// Answer answers the request waiting for input with answers (inputResponses,
// by the keys the server used; each value a JSON result such as an
// ElicitResult) and begins the next round under a new ID, which it
// returns for the caller to send. The round's params are the request's
// original params with inputResponses (omitted when answers is empty) and
// the last round's requestState, byte for byte (omitted when the server
// gave none). It refuses (a *Refused) a request that is not waiting for
// input, and an answer that is not JSON.
func (t *Tracker) Answer(id wire.ID, answers map[string]json.RawMessage, now time.Time) (Retry, error) {
	t.changes.reset()
	r := t.lookup(id)
	switch {
	case r == nil:
		if t.wasEvicted(id) {
			return Retry{}, &Refused{Why: RefusedEvicted, ID: id}
		}
		return Retry{}, &Refused{Why: RefusedUnknown, ID: id}
	case r.State != StateWaitingInput:
		return Retry{}, &Refused{Why: RefusedNotWaiting, ID: id, State: r.State}
	}
	c := r.Conv
	last := &c.Rounds[len(c.Rounds)-1]
	params, err := retryParams(c.params, answers, last.RequestState)
	if err != nil {
		return Retry{}, err
	}
	last.Answers = make(map[string]json.RawMessage, len(answers))
	for k, v := range answers {
		last.Answers[k] = bytes.Clone(v)
	}
	last.AnsweredAt = now

	// The new round: a new ID (never reused), which from now on is the
	// request's on the wire; the old one keeps finding it.
	t.lastID++
	nid := wire.IntID(t.lastID)
	old := r.ID
	delete(t.byID, old)
	if t.roundOf == nil {
		t.roundOf = map[wire.ID]*Request{}
	}
	t.roundOf[old] = r
	t.byID[nid] = r
	r.ID = nid
	if r.ProgressToken == old {
		r.ProgressToken = nid
	}
	r.Sent = time.Time{}
	r.responded = false
	r.Progress = Progress{}
	r.logProgress = 0
	if r.aside != nil {
		r.aside.coalesceAt = 0
	}
	r.Timeout.Deadline = now.Add(r.Timeout.Timeout)
	r.Timeout.MaxDeadline = now.Add(r.Timeout.Max)
	c.Rounds = append(c.Rounds, Round{ID: nid, Began: now})
	t.raw.put(rawKey{nid, rawRequest}, params)
	t.setState(r, StatePending, now)
	return Retry{ID: nid, ProgressToken: r.ProgressToken, Method: r.Method, Params: params, Round: len(c.Rounds),
		LateWindow: r.LateWindow, Change: t.changes.buf[len(t.changes.buf)-1]}, nil
}

// EndConversation ends a request waiting for input as input_required: the
// caller will not answer (why says so, and is kept as
// Conversation.Stopped). It refuses (a *Refused) a request that is not
// waiting.
func (t *Tracker) EndConversation(id wire.ID, why string, now time.Time) (Change, error) {
	t.changes.reset()
	r := t.lookup(id)
	if r == nil || r.State != StateWaitingInput {
		st := State(0)
		if r != nil {
			st = r.State
		}
		return Change{}, &Refused{Why: RefusedNotWaiting, ID: id, State: st}
	}
	r.Conv.Stopped = clip(why, maxErrorBytes)
	t.finish(r, StateInputRequired, now)
	return t.changes.buf[len(t.changes.buf)-1], nil
}

// dropConversation cancels a request waiting for input. Nothing is in
// flight on the wire, so nothing is to be sent: it is cancelled at once,
// with no signal.
func (t *Tracker) dropConversation(r *Request, reason string, cause CancelCause, now time.Time) Change {
	r.Cancel = &Cancel{At: now, SettleBy: now, Reason: reason, Cause: cause}
	r.Conv.Stopped = "no request in flight; the conversation was dropped"
	s := StateCancelled
	if cause == CauseTimeout {
		s = StateTimedOut
	}
	t.finish(r, s, now)
	return t.changes.buf[len(t.changes.buf)-1]
}

// roundEnded records the final answer of the current round.
func (t *Tracker) roundEnded(r *Request, now time.Time) {
	if r.Conv == nil {
		return
	}
	if r.State.IsFinal() && len(r.Conv.ServerRequests) > 0 {
		t.serversAbandoned(r, now)
	}
	if len(r.Conv.Rounds) == 0 {
		return
	}
	rd := &r.Conv.Rounds[len(r.Conv.Rounds)-1]
	if rd.ID == r.ID && rd.Outcome != StateInputRequired {
		rd.Outcome = r.State
		if r.responded && rd.ResponseAt.IsZero() {
			rd.ResponseAt = now
		}
	}
}

// staleRound handles a response for an earlier round of a conversation,
// which had its answer already: a duplicate. It reports whether id was
// one.
func (t *Tracker) staleRound(id wire.ID, ev *event.Event) bool {
	r := t.roundOf[id]
	if r == nil {
		return false
	}
	t.log.ring.buf[t.curLog].Method = r.Method
	t.violate(ViolationDuplicateResponse, "another response for request "+id.String()+
		", an earlier round of request "+r.ID.String()+", which already had one", r, id, ev)
	return true
}

// forgetRounds drops what an evicted conversation kept under its earlier
// rounds' IDs.
func (t *Tracker) forgetRounds(r *Request) {
	if r.Conv == nil {
		return
	}
	for _, rd := range r.Conv.Rounds {
		if rd.ID == r.ID {
			continue
		}
		delete(t.roundOf, rd.ID)
		t.raw.remove(rawKey{rd.ID, rawRequest})
		t.raw.remove(rawKey{rd.ID, rawResponse})
	}
	for _, s := range r.Conv.ServerRequests {
		s.During = wire.ID{}
	}
}

// retryParams is params with inputResponses and requestState added. It is
// written by hand, not through encoding/json: requestState must go back
// exactly as it came, and encoding/json rewrites "<", ">" and "&".
func retryParams(params json.RawMessage, answers map[string]json.RawMessage, state json.RawMessage) (json.RawMessage, error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		p = []byte("{}")
	}
	if p[0] != '{' || p[len(p)-1] != '}' || !json.Valid(p) {
		return nil, &json.UnsupportedValueError{Str: "params are not a JSON object"}
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(p, &members); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	keys := make([]string, 0, len(members))
	for k := range members {
		if k != "inputResponses" && k != "requestState" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	sep := func() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
	}
	for _, k := range keys {
		sep()
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(members[k])
	}
	if len(answers) > 0 {
		sep()
		b.WriteString(`"inputResponses":{`)
		ak := make([]string, 0, len(answers))
		for k := range answers {
			ak = append(ak, k)
		}
		sort.Strings(ak)
		for i, k := range ak {
			v := bytes.TrimSpace(answers[k])
			if !json.Valid(v) {
				return nil, &json.UnsupportedValueError{Str: "the answer to " + strconv.Quote(k) + " is not JSON"}
			}
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
	}
	if state != nil {
		sep()
		b.WriteString(`"requestState":`)
		b.Write(state)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Violations of the conversations (rounds.go, serverreq.go).
const (
	// ViolationInputRequiredMethod: input_required on a method other than
	// tools/call, prompts/get and resources/read ("Servers MUST NOT send
	// InputRequiredResult responses on any other client requests").
	ViolationInputRequiredMethod = "input_required_method"
	// ViolationInputRequiredEmpty: an InputRequiredResult with neither
	// inputRequests nor requestState ("MUST include at least one").
	ViolationInputRequiredEmpty = "input_required_empty"
	// ViolationInputRequestMethod: an input request that is not
	// elicitation/create, sampling/createMessage or roots/list.
	ViolationInputRequestMethod = "input_request_method"
	// ViolationServerRequestReusedID: a legacy server sent a request under
	// an ID one of its requests still waiting for an answer has.
	ViolationServerRequestReusedID = "server_request_reused_id"
	// ViolationLogNotRequested: a modern server sent notifications/message
	// on the stream of a request that carried no logLevel ("The server
	// MUST NOT emit notifications/message for a request that does not
	// include this field").
	ViolationLogNotRequested = "log_not_requested"
	// ViolationInputRequestUndeclared: an input request the round's
	// clientCapabilities did not declare ("Servers MUST NOT send an
	// inputRequests that the client has not declared support for").
	ViolationInputRequestUndeclared = "input_request_undeclared"
)
