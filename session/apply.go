package session

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"inflight/event"
	"inflight/wire"
)

// Bounds on server text kept on a request; the raw store keeps the whole
// message, these keep a finished request small.
const (
	maxMessageBytes = 1 << 10
	maxErrorBytes   = 1 << 10
)

// Apply feeds one client event to the tracker, using the event's Time as
// now. Every event goes to the protocol log. Events marked Internal are the
// client's own housekeeping (era probe, initialize, answers to the server's
// requests): they are only logged, except connection-level events, which
// describe the connection every request shares.
//
// Apply is on the hot path (a server may send hundreds of thousands of
// progress notifications a second), so the common cases avoid formatting
// and allocation; see BenchmarkApplyProgress.
//
// It returns what the event changed; the slice is reused by the next call
// of any tracker method, so copy what must outlive it.
func (t *Tracker) Apply(ev event.Event) []Change {
	t.changes.reset()
	if ev.Kind == event.CancelLeaving {
		// Bookkeeping of the cancel that follows (CancelSent is logged):
		// not a line of the protocol log of its own.
		t.onCancelLeaving(&ev)
		return t.changes.buf
	}
	if ev.Kind == event.Exchange {
		// An HTTP exchange recorded whole for a trace or an HAR: every
		// message in it was its own event already.
		return t.changes.buf
	}
	if slot, ok := t.coalesce(&ev); ok {
		t.curLog = slot
	} else {
		t.curLog = t.log.append(&ev)
	}
	switch ev.Kind {
	case event.Connected:
		t.onConnected(&ev)
	case event.TransportClosed:
		t.onTransportClosed(&ev)
	case event.Stderr:
		t.stderr.ring.push(StderrLine{Time: ev.Time, Text: ev.Text, Truncated: ev.Truncated})
	case event.RoundTrip:
		t.rtts.add(ev.RTT, ev.Text)
	case event.ServerRequestRefused: // see client_faults.go
		t.onServerRequestRefused(&ev)
	}
	if ev.Internal {
		t.onInternal(&ev) // the server's own requests (serverreq.go)
	} else {
		switch ev.Kind {
		case event.Sent:
			t.onSent(&ev)
		case event.Received:
			if !t.misdelivered(&ev) { // streams.go
				t.onReceived(&ev)
			}
		case event.Malformed:
			t.onMalformed(&ev)
		case event.CancelSent:
			t.onCancelSent(&ev)
		case event.StreamOpened:
			t.onStreamOpened(&ev) // streams.go
		case event.StreamClosed:
			t.onStreamClosed(&ev)
		case event.RequestFailed:
			t.onRequestFailed(&ev)
		case event.HTTPStatus:
			t.onPollHTTPStatus(&ev) // task_limits.go
		}
	}
	t.curLog = -1
	return t.changes.buf
}

// coalesce merges a timely progress notification into its request's
// coalesced log entry once the request has logged LogProgressPerRequest
// of them one by one, and reports the entry's slot. It leaves to append
// everything else, including progress that breaks a rule, which onProgress
// will flag on its own entry.
func (t *Tracker) coalesce(ev *event.Event) (int, bool) {
	p := ev.Progress // set by the client on every notifications/progress
	if p == nil || ev.Kind != event.Received || ev.Internal {
		return 0, false
	}
	r := t.byToken(p.Token)
	if r == nil {
		return 0, false
	}
	switch r.State {
	case StatePending, StateRunning, StateListening, StateTask:
	default:
		return 0, false
	}
	if r.Progress.Count > 0 && p.Progress <= r.Progress.Value {
		return 0, false
	}
	if r.logProgress < LogProgressPerRequest {
		r.logProgress++
		return 0, false
	}
	lg := &t.log
	if i, ok := lg.slot(r.peek().coalesceAt); ok && r.peek().coalesceAt > 0 {
		e := &lg.ring.buf[i]
		latest := lg.entry(ev)
		m := e.extra()
		e.Raw, m.Truncated = latest.Raw, latest.Truncated
		m.LastTime = ev.Time
		m.Coalesced++
		return i, true
	}
	// The first merged one (or the old entry left the log): a new entry,
	// which the ones after it join.
	i := lg.append(ev)
	r.side().coalesceAt = lg.ring.total
	return i, true
}

func (t *Tracker) onConnected(ev *event.Event) {
	if ev.Info != nil {
		t.conn = *ev.Info
		if t.observing && ev.Info.Era != event.EraUnknown {
			t.sawEra(ev.Info.Era, ev.Info.ProtocolVersion)
		}
	}
	t.connected = true
	t.connectedAt = ev.Time
	t.closed, t.closeErr = false, nil
}

// onTransportClosed ends every active request: the connection they shared
// is gone. A request whose cancel was pending now knows its fate.
func (t *Tracker) onTransportClosed(ev *event.Event) {
	t.closed, t.closeErr = true, ev.Err
	// The round trip was the closed connection's: the next one (R, a
	// restarted server) measures its own before its Connected. It still
	// stands for what this connection's reports say.
	t.rtts.stale = true
	t.serversLost(ev.Time)
	for _, r := range t.tasks {
		// The tasks of a closed connection get nothing more from it:
		// no tasks/cancel or tasks/result is sent on the next one.
		r.Task.cancelDue, r.Task.resultDue, r.Task.listenDue = false, false, false
	}
	text := "connection closed"
	if ev.Err != nil {
		text = clip("connection closed: "+ev.Err.Error(), maxErrorBytes)
	}
	for len(t.active) > 0 {
		r := t.active[len(t.active)-1]
		if r.State == StateCancelRequested && !r.Cancel.SignalAt.IsZero() {
			t.settle(r, ev.Time)
			continue
		}
		if r.State == StateCancelRequested {
			// The cancel never left: the server was never told, and the
			// request is lost with the connection, not cancelled.
			r.LocalError = clip(text+"; the cancel could not be sent", maxErrorBytes)
			t.finish(r, StateConnectionLost, ev.Time)
			continue
		}
		r.LocalError = text
		t.finish(r, StateConnectionLost, ev.Time)
	}
}

// requestFor finds the request an event concerns.
func (t *Tracker) requestFor(ev *event.Event) *Request {
	id := ev.RequestID
	if id.IsZero() {
		id = ev.Msg.ID
	}
	return t.byID[id]
}

// onSent records when a request actually left and its exact bytes.
func (t *Tracker) onSent(ev *event.Event) {
	if ev.Msg.Kind != wire.KindRequest {
		return
	}
	r := t.requestFor(ev)
	if r == nil {
		return
	}
	if r.Sent.IsZero() {
		r.Sent = ev.Time
	}
	t.raw.put(rawKey{r.ID, rawRequest}, ev.Raw)
	if r.Method == wire.MethodToolsCall {
		r.taskDeclared = declaresTask(ev.Msg.Params, t.modernFor(r))
	}
	if r.Role != RoleNone {
		t.log.ring.buf[t.curLog].extra().Parent = r.Parent
		t.childSent(r, ev)
	}
}

func (t *Tracker) onReceived(ev *event.Event) {
	switch ev.Msg.Kind {
	case wire.KindResult, wire.KindError:
		t.onResponse(ev)
	case wire.KindNotification:
		switch ev.Msg.Method {
		case wire.NotifyProgress:
			t.onProgress(ev)
		case wire.NotifyCancelled:
			t.onServerCancelled(ev)
		case wire.NotifySubscriptionAck:
			t.onAck(ev)
		case wire.NotifyTaskStatus, wire.NotifyTasks:
			t.onTasksOnListen(ev) // task_limits.go
			t.onTaskNotification(ev)
		default:
			t.onNotification(ev)
		}
	case wire.KindRequest:
		// A legacy server's requests are the client's business (it answers
		// them, and marks them internal). In the modern era servers send
		// none, so the client leaves them unanswered and hands them here.
		if t.conn.Era == event.EraModern {
			t.violate(ViolationServerRequestModern, "the server sent a "+strconv.Quote(clip(ev.Msg.Method, 64))+
				" request, which a modern server must never do; inflight did not answer it", nil, wire.ID{}, ev)
		}
	}
}

func (t *Tracker) onResponse(ev *event.Event) {
	id := ev.RequestID
	if id.IsZero() {
		id = ev.Msg.ID
	}
	r := t.byID[id]
	if r == nil && t.staleRound(id, ev) {
		return
	}
	if r == nil {
		// A null ID is a server saying it could not read some request's ID:
		// legal, unattributable, and visible in the log.
		if id != wire.NullID && !t.wasEvicted(id) {
			t.violate(ViolationUnknownResponseID, "response for id "+id.String()+", which "+t.requester()+" never issued", nil, id, ev)
		}
		return
	}
	if r.ByHost && otherSession(ev.SessionID, r.hostSession) {
		// The answer to a request of another host session with this ID,
		// which the tracker does not follow (one request per ID): not
		// this one's (observe_reuse.go).
		t.log.ring.buf[t.curLog].Text = "the answer to another host session's request " + id.String() + ", which is not followed"
		return
	}
	t.log.ring.buf[t.curLog].Method = r.Method
	if r.responded {
		t.violate(ViolationDuplicateResponse, "another response for request "+r.ID.String()+", which already had one", r, id, ev)
		return
	}
	r.responded = true
	t.raw.put(rawKey{r.ID, rawResponse}, ev.Raw)
	if r.Role != RoleNone {
		defer t.childAnswered(r, ev)
	}
	switch {
	case r.State == StateCancelRequested && readBeforeCancel(r, ev):
		// The answer was read before the cancel was even asked for and
		// only reached the tracker after it: the request completed, the
		// cancel came too late to matter.
		t.answer(r, ev)
	case r.State.IsActive() && r.State != StateCancelRequested:
		t.answer(r, ev)
	case r.State == StateCancelRequested:
		t.lateResponse(r, ev)
		t.judgeCancelledError(r, ev)
		t.settle(r, ev.Time)
	case r.State == StateEndedByServer:
		// The server ended the subscription with notifications/cancelled
		// and also answered the listen request: the spec allows both.
	default:
		t.lateResponse(r, ev)
		t.judgeCancelledError(r, ev)
	}
}

// answer applies a timely response.
func (t *Tracker) answer(r *Request, ev *event.Event) {
	if !r.Sent.IsZero() && !(r.ByHost && r.Method == wire.MethodInitialize) {
		// Every timely answer bounds the round trip from above, and the
		// least of them is what crossings are judged by (crossing.go). A
		// host's initialize is no sample: over stdio it includes the
		// server's start-up, as the era probe does.
		t.rtts.add(ev.Time.Sub(r.Sent), r.Method)
	}
	msg := &ev.Msg
	if msg.Kind == wire.KindError {
		if msg.Error.Code == wire.CodeUnsupportedProtocolVersion && t.modernFor(r) {
			detail := "request " + r.ID.String() + " was refused with UnsupportedProtocolVersionError, though it was sent under " +
				strconv.Quote(clip(t.conn.ProtocolVersion, 64)) + ", the version server/discover agreed"
			if v := wire.SupportedVersions(msg.Error.Data); len(v) > 0 {
				detail += "; the server now lists " + clip(strings.Join(v, ", "), 256)
			}
			t.violate(ViolationVersionRejected, detail, r, r.ID, ev)
		}
		r.Error = clipError(msg.Error)
		t.finish(r, StateFailed, ev.Time)
		return
	}
	if t.taskHandle(r, ev) {
		return
	}
	state := StateCompleted
	if r.listen {
		state = StateEndedByServer
		if !r.Acked {
			t.violate(ViolationResultBeforeAck, "subscriptions/listen "+r.ID.String()+
				" was answered with its result before notifications/subscriptions/acknowledged, which must be the first message carrying its ID", r, r.ID, ev)
		}
	}
	if t.modernFor(r) {
		rt, ok := wire.ResultType(msg.Result)
		switch {
		case !ok:
			t.violate(ViolationMissingResultType, "result without resultType (treated as complete)", r, r.ID, ev)
		case rt == wire.ResultComplete:
		case rt == wire.ResultInputRequired && !r.listen:
			if t.inputRequired(r, ev) {
				return // waiting for an answer, or given up (rounds.go)
			}
			state = StateInputRequired
		default:
			t.violate(ViolationUnknownResultType, "result with unrecognised resultType "+strconv.Quote(clip(rt, 64)), r, r.ID, ev)
			if !r.listen {
				state = StateFailed
				r.LocalError = "invalid result: unrecognised resultType " + strconv.Quote(clip(rt, 64))
			}
		}
	}
	if state == StateCompleted && r.Method == wire.MethodToolsCall && isToolError(msg.Result) {
		r.ToolError = true
		state = StateFailed
	}
	t.finish(r, state, ev.Time)
}

// isToolError reports whether a tools/call result says "isError": true.
func isToolError(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(`"isError"`)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// lateResponse records a response to a request that was given up.
func (t *Tracker) lateResponse(r *Request, ev *event.Event) {
	r.Late.Response = true
	r.Late.ResponseAt = ev.Time
	if c := r.Cancel; c != nil {
		r.Late.AfterCancel = ev.Time.Sub(c.At)
	} else {
		r.Late.AfterCancel = ev.Time.Sub(r.Ended)
	}
	if ev.Msg.Kind == wire.KindError {
		r.Error = clipError(ev.Msg.Error)
	} else {
		t.lateTaskHandle(r, ev)
	}
	r.Late.ResponseStreamEnd = ev.StreamEnd
	r.Late.Crossed = t.arrived(r, ArrivalResponse, ev.Time, ev.StreamEnd)
}

// readBeforeCancel reports whether the client read ev before the cancel
// of r was requested. Events wait in a channel between the client's reader
// and Apply, so order of application is not order of arrival; the event's
// own time is.
func readBeforeCancel(r *Request, ev *event.Event) bool {
	return r.Cancel != nil && ev.Time.Before(r.Cancel.At)
}

// onProgress applies notifications/progress. This is the hottest path.
func (t *Tracker) onProgress(ev *event.Event) {
	var p wire.Progress
	if ev.Progress != nil {
		p = *ev.Progress // the client decoded it already
	} else {
		var err error
		if p, err = wire.DecodeProgress(ev.Msg.Params); err != nil {
			t.violate(ViolationMalformedMessage, err.Error(), t.byID[ev.RequestID], ev.RequestID, ev)
			return
		}
	}
	// The progress token is the request's ID (see Begin).
	r := t.byToken(p.Token)
	if r != nil && r.ByHost && otherSession(ev.SessionID, r.hostSession) {
		// Progress of another host session's request with that token,
		// which the tracker does not follow: not this one's.
		return
	}
	if r == nil && t.roundOf[p.Token] != nil {
		// An earlier round of a conversation, answered already.
		old := t.roundOf[p.Token]
		t.violate(ViolationProgressAfterCompletion, "progress for "+p.Token.String()+", an earlier round of request "+old.ID.String()+", after its answer", old, old.ID, ev)
		return
	}
	if r == nil {
		if _, ok := t.unfollowedTokens[p.Token]; ok {
			return // a host request not followed: its progress is its own
		}
		if !t.wasEvicted(p.Token) {
			t.violate(ViolationUnknownProgressToken, "progress for token "+p.Token.String()+", which no request carried", nil, wire.ID{}, ev)
		}
		return
	}
	t.log.ring.buf[t.curLog].ID = r.ID
	switch r.State {
	case StatePending, StateRunning, StateListening, StateTask:
	case StateCancelRequested, StateCancelled, StateTimedOut, StateConnectionLost:
		if r.State == StateCancelRequested && readBeforeCancel(r, ev) {
			// Read before the cancel, applied after it: timely progress.
			break
		}
		t.progressAfter(r, ev.Time, ev.StreamEnd)
		return
	case StateFailed:
		if !r.responded {
			// Failed locally (HTTP error): like a lost request, the server
			// may not know it is over.
			t.progressAfter(r, ev.Time, ev.StreamEnd)
			return
		}
		fallthrough
	default:
		t.violate(ViolationProgressAfterCompletion, "progress after request "+r.ID.String()+" was "+r.State.String(), r, r.ID, ev)
		return
	}
	t.checkProgressRange(r, p, ev)
	pr := &r.Progress
	if pr.Count > 0 && p.Progress <= pr.Value {
		t.violate(ViolationProgressNotIncreasing, "progress "+number(p.Progress)+" after "+number(pr.Value), r, r.ID, ev)
	}
	pr.Count++
	pr.Value = p.Progress
	pr.HasTotal = p.Total != nil
	pr.Total = 0
	if p.Total != nil {
		pr.Total = *p.Total
	}
	pr.Message = clip(p.Message, maxMessageBytes)
	if pr.Count == 1 {
		pr.First = ev.Time
	}
	pr.Last = ev.Time
	r.addSample(pr.Count, ProgressSample{At: ev.Time.Sub(r.Created), Value: pr.Value, Total: pr.Total})
	if r.State == StatePending {
		t.setState(r, StateRunning, ev.Time)
	}
	if r.Timeout.ResetOnProgress {
		r.Timeout.Deadline = ev.Time.Add(r.Timeout.Timeout)
	}
}

// progressAfter counts progress for a request given up, as crossed or late.
func (t *Tracker) progressAfter(r *Request, at time.Time, streamEnd int64) {
	if t.arrived(r, ArrivalProgress, at, streamEnd) {
		r.Late.ProgressCrossed++
		return
	}
	r.Late.ProgressAfterCancel++
	r.Late.LastProgressAt = at
}

// notificationAfter counts subscription notifications for a listen request
// given up, as crossed or late.
func (t *Tracker) notificationAfter(r *Request, at time.Time, streamEnd int64) {
	if t.arrived(r, ArrivalNotification, at, streamEnd) {
		r.Late.NotificationsCrossed++
		return
	}
	r.Late.NotificationsAfterCancel++
}

// onServerCancelled handles a notifications/cancelled from the server. The
// only legitimate use in the modern era is ending a subscription; in the
// legacy era the server may cancel its own requests, whose IDs live in
// another namespace, so anything else is none of the tracker's business.
func (t *Tracker) onServerCancelled(ev *event.Event) {
	c, err := wire.DecodeCancelled(ev.Msg.Params)
	if err != nil {
		t.violate(ViolationMalformedMessage, err.Error(), nil, wire.ID{}, ev)
		return
	}
	if id, ok := wire.RelatedTask(ev.Msg.Params); ok {
		// "The notifications/cancelled notification MUST NOT be used for
		// task cancellation."
		t.violate(ViolationCancelledForTask, "the server sent notifications/cancelled for task "+strconv.Quote(clip(id, 128))+
			": tasks are cancelled with tasks/cancel, never notifications/cancelled", t.tasks[id], c.RequestID, ev)
		return
	}
	r := t.byID[c.RequestID]
	if r != nil && r.listen {
		t.log.ring.buf[t.curLog].ID = r.ID
		switch {
		case r.State == StateCancelRequested:
			// The server confirms the teardown the client asked for.
			t.settle(r, ev.Time)
		case r.State.IsActive():
			t.finish(r, StateEndedByServer, ev.Time)
		}
		return
	}
	if t.conn.Era != event.EraModern {
		if !t.serverWithdrew(c.RequestID, c.Reason, ev) {
			t.judgeServerCancel(c.RequestID, ev) // misaddressed.go
		}
		return // or the server withdrew one of its own requests (serverreq.go)
	}
	if t.conn.Era == event.EraModern {
		t.violate(ViolationServerCancelNotListen, "server sent notifications/cancelled for "+c.RequestID.String()+", which is not a subscriptions/listen request", r, c.RequestID, ev)
	}
}

// listenFor finds the subscription a notification names, recording a
// violation when the ID names no listen request.
func (t *Tracker) listenFor(sid wire.ID, ev *event.Event) (*Request, bool) {
	r := t.byID[sid]
	if r == nil || !r.listen {
		if r != nil || !t.wasEvicted(sid) {
			t.violate(ViolationUnknownSubscription, ev.Msg.Method+" for subscription "+sid.String()+", which is no subscriptions/listen request", nil, sid, ev)
		}
		return nil, false
	}
	t.log.ring.buf[t.curLog].ID = r.ID
	return r, true
}

// onAck handles notifications/subscriptions/acknowledged.
func (t *Tracker) onAck(ev *event.Event) {
	sid, ok := wire.SubscriptionID(ev.Msg.Params)
	if !ok {
		t.violate(ViolationMalformedMessage, "subscription acknowledgment without "+wire.MetaSubscriptionID, nil, wire.ID{}, ev)
		return
	}
	r, ok := t.listenFor(sid, ev)
	if !ok {
		return
	}
	switch {
	case r.State.IsFinal():
		t.notificationAfter(r, ev.Time, ev.StreamEnd)
	case !r.Acked:
		r.Acked = true
		if r.State == StatePending || r.State == StateRunning {
			t.setState(r, StateListening, ev.Time)
		}
		if r.Role == RoleListen {
			t.taskListenAcked(r, ev, ev.Time)
		}
	}
}

// onNotification counts notifications delivered on a subscription. Other
// notifications (logging, list changes in the legacy era) are only logged.
func (t *Tracker) onNotification(ev *event.Event) {
	if ev.Msg.Method == wire.NotifyMessage {
		t.onLog(ev) // serverreq.go
		return
	}
	sid, ok := wire.SubscriptionID(ev.Msg.Params)
	if !ok {
		return
	}
	r, ok := t.listenFor(sid, ev)
	if !ok {
		return
	}
	switch {
	case r.State == StateCancelRequested || r.State.IsFinal():
		t.notificationAfter(r, ev.Time, ev.StreamEnd)
		return
	case !r.Acked:
		t.violate(ViolationNotificationBeforeAck, ev.Msg.Method+" on subscription "+r.ID.String()+" before its acknowledgment", r, r.ID, ev)
	}
	r.Notifications++
	r.LastNotificationAt = ev.Time
}

// onMalformed records a line or event that is not a JSON-RPC message.
func (t *Tracker) onMalformed(ev *event.Event) {
	code := ViolationMalformedMessage
	trimmed := bytes.TrimLeft(ev.Raw, " \t\r\n")
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		code = ViolationNonJSONLine
	}
	detail := "not a JSON-RPC message"
	if ev.Err != nil {
		detail = ev.Err.Error()
	}
	t.violate(code, detail, t.byID[ev.RequestID], ev.RequestID, ev)
}

// onCancelSent records the signal the client actually sent.
func (t *Tracker) onCancelSent(ev *event.Event) {
	r := t.byID[ev.RequestID]
	if r == nil {
		return
	}
	if r.Cancel == nil {
		if r.State.IsFinal() {
			return
		}
		// A cancel the tracker never asked for: the client closing a modern
		// request's stream as it closes the connection (that is the modern
		// cancel), or a caller of client.Cancel that bypassed the tracker.
		// Follow it, so the request does not look in flight after its
		// cancel went out.
		t.beginCancel(r, ev.Reason, CauseShutdown, ev.Time)
	}
	if ev.Err != nil {
		r.Cancel.Failed = clip(ev.Err.Error(), maxErrorBytes)
		if ev.Signal == event.SignalNone {
			// It never left (its CancelLeaving said it was about to):
			// what follows is judged from when the cancel was asked for.
			r.Cancel.Signal, r.Cancel.SignalAt = event.SignalNone, time.Time{}
			return
		}
	}
	first := r.Cancel.SignalAt.IsZero()
	r.Cancel.Signal = ev.Signal
	if first {
		// No CancelLeaving came first (stdio, a modern stream close): the
		// signal left when this says, at this point of the server's output.
		r.Cancel.SignalAt = ev.Time
		r.Cancel.SignalStreamEnd = ev.StreamEnd
	}
	if first && r.Late.Response && r.Late.Crossed {
		// The late response was applied before the cancel's send time was
		// known (the event reporting it can only follow the send, a legacy
		// HTTP one the whole POST) and was judged crossed for want of it.
		// Judge it now against the time the cancel left.
		if !t.crossedCancel(r, r.Late.ResponseAt, r.Late.ResponseStreamEnd) {
			r.Late.Crossed = false
			t.flag(r)
			t.changes.add(Change{Kind: ChangeLate, ID: r.ID, At: r.Late.ResponseAt, What: ArrivalResponse})
			t.relabelLateResponse(r)
		}
		r.Late.Window = t.CrossingWindow()
	}
}

// onCancelLeaving records when, and at which point of the server's
// output, the cancel's signal left: what is read after this is judged
// against it.
func (t *Tracker) onCancelLeaving(ev *event.Event) {
	r := t.byID[ev.RequestID]
	if r == nil || r.Cancel == nil || !r.Cancel.SignalAt.IsZero() {
		return
	}
	r.Cancel.Signal = ev.Signal
	r.Cancel.SignalAt = ev.Time
	r.Cancel.SignalStreamEnd = ev.StreamEnd
}

// onStreamClosed settles a pending cancel when the request's HTTP response
// stream ends: closed by the client it is the cancel itself (modern) or the
// end of the client's late window (legacy); closed by the server without a
// response it means nothing more will come.
func (t *Tracker) onStreamClosed(ev *event.Event) {
	if ev.RequestID.IsZero() {
		return
	}
	r := t.byID[ev.RequestID]
	if r == nil {
		return
	}
	if ev.RequestID != r.ID || r.Task != nil || r.State == StateWaitingInput {
		// The stream of an earlier round, of a task's handle, or of a
		// round already answered (input_required): its answer is in, so
		// its closing (the client does so after the late window, when the
		// server keeps it open) cancels nothing. Found in review.
		return
	}
	switch {
	case r.State == StateCancelRequested:
		t.settle(r, ev.Time)
	case ev.ByClient && r.State.IsActive():
		// A modern cancel the tracker never asked for (a caller of
		// client.Cancel that bypassed it) whose stream-closed report
		// overtook its EventCancelSent: Cancel closes the stream before it
		// reports the cancel, and the two come from different goroutines.
		// (When the client closes, its EventCancelSent comes first.)
		// Closing the stream cancels, so follow it.
		t.beginCancel(r, "stream closed by the client", CauseShutdown, ev.Time)
		r.Cancel.Signal = event.SignalStreamClosed
		r.Cancel.SignalAt = ev.Time
		t.settle(r, ev.Time)
	}
	// A stream the server closed on an active request without answering is
	// reported by the client as EventRequestFailed.
}

// onRequestFailed ends a request the client could not deliver or whose
// reply it could not read.
func (t *Tracker) onRequestFailed(ev *event.Event) {
	r := t.byID[ev.RequestID]
	if r == nil {
		return
	}
	switch {
	case r.State == StateCancelRequested:
		t.settle(r, ev.Time)
		return
	case r.State.IsFinal():
		return
	}
	text := "request failed"
	if ev.Err != nil {
		text = clip(ev.Err.Error(), maxErrorBytes)
	}
	r.LocalError = text
	if ev.LostConnection {
		t.finish(r, StateConnectionLost, ev.Time)
		return
	}
	t.finish(r, StateFailed, ev.Time)
}

// clip bounds s to n bytes at a rune boundary, copying when it cuts so the
// kept prefix does not pin a large string.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.Clone(s[:i]) + "…"
}

// clipError bounds a JSON-RPC error kept on a request. Data too large to
// keep is dropped; the raw response holds it.
func clipError(e *wire.Error) *wire.Error {
	if e == nil || (len(e.Message) <= maxErrorBytes && len(e.Data) <= maxErrorBytes) {
		return e
	}
	c := &wire.Error{Code: e.Code, Message: clip(e.Message, maxErrorBytes)}
	if len(e.Data) <= maxErrorBytes {
		c.Data = e.Data
	}
	return c
}
