package otlp

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// event puts what one event says beside the tracker's changes on the
// spans: progress, the cancel's signal, the server's questions and the
// answers, the connection, the OAuth steps.
func (s *Sink) event(tr *session.Tracker, ev *event.Event, changes []session.Change) {
	switch ev.Kind {
	case event.Received:
		if ev.Progress != nil {
			if !arrivedAfter(changes) {
				s.progress(tr, ev)
			}
			return
		}
		if ev.Msg.Kind == wire.KindRequest {
			s.asked(tr, ev)
		}
	case event.Sent:
		switch {
		case ev.Msg.IsResponse():
			s.answered(tr, ev)
		case ev.Msg.Method == wire.NotifyCancelled:
			s.hostCancelled(tr, ev)
		}
	case event.CancelSent:
		s.cancelSent(tr, ev)
	case event.Connected:
		s.connected(ev)
	case event.TransportClosed:
		attrs := []attribute.KeyValue{}
		if ev.Err != nil {
			attrs = append(attrs, attribute.String("error.message", s.text(ev.Err.Error())))
		}
		s.root.AddEvent("inflight.transport_closed", at(ev.Time), trace.WithAttributes(attrs...))
	case event.Auth:
		s.auth(ev)
	}
}

// arrivedAfter reports whether changes judge the event late or crossed
// (change handles those).
func arrivedAfter(changes []session.Change) bool {
	for i := range changes {
		if k := changes[i].Kind; k == session.ChangeLate || k == session.ChangeCrossed {
			return true
		}
	}
	return false
}

func at(t time.Time) trace.EventOption { return trace.WithTimestamp(t) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sampled reports whether the n-th of a flood goes on the span as an
// event, taken had been so far: the first progressHead, then one in
// progressEvery, at most bound in all.
func sampled(n, taken, bound int) bool {
	return taken < bound && (n <= progressHead || n%progressEvery == 0)
}

// progress counts a timely progress notification, and samples it.
func (s *Sink) progress(tr *session.Tracker, ev *event.Event) {
	r, ok := tr.ByProgressToken(ev.Progress.Token)
	if !ok {
		return
	}
	rs := s.spanOf(tr, r)
	if rs == nil {
		return
	}
	rs.progress++
	if !sampled(rs.progress, rs.progressEvents, progressSamples) {
		return
	}
	rs.progressEvents++
	p := ev.Progress
	attrs := []attribute.KeyValue{attribute.Int("inflight.progress.n", rs.progress), attribute.Float64("inflight.progress.value", p.Progress)}
	if p.Total != nil {
		attrs = append(attrs, attribute.Float64("inflight.progress.total", *p.Total))
	}
	if p.Message != "" {
		attrs = append(attrs, attribute.String("inflight.progress.message", s.text(p.Message)))
	}
	rs.span.AddEvent("inflight.progress", at(ev.Time), trace.WithAttributes(attrs...))
}

// target is the span an event about id goes on: the request's, else the
// run's.
func (s *Sink) target(tr *session.Tracker, id wire.ID) trace.Span {
	if rs := s.request(tr, id); rs != nil {
		return rs.span
	}
	return s.root
}

// asked records a question of the server's (a legacy server's own
// request) on the request it came during.
func (s *Sink) asked(tr *session.Tracker, ev *event.Event) {
	sr, ok := tr.ServerRequest(ev.Msg.ID)
	if !ok {
		return
	}
	s.target(tr, sr.During).AddEvent("inflight.server_request", at(ev.Time), trace.WithAttributes(
		attribute.String("mcp.method.name", s.red.String(sr.Method)),
		attribute.String("jsonrpc.request.id", s.red.String(sr.ID.String())),
		attribute.String("inflight.server_request.tied_by", sr.TiedBy.String())))
}

// answered records the answer to a question of the server's.
func (s *Sink) answered(tr *session.Tracker, ev *event.Event) {
	sr := serverRequest(tr, ev.Msg.ID)
	if sr == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", s.red.String(sr.Method)),
		attribute.String("jsonrpc.request.id", s.red.String(sr.ID.String())),
		attribute.String("inflight.server_request.state", sr.State.String()),
	}
	if sr.Error != nil {
		attrs = append(attrs, attribute.String("rpc.response.status_code", strconv.Itoa(sr.Error.Code)))
	}
	s.target(tr, sr.During).AddEvent("inflight.server_request.answered", at(ev.Time), trace.WithAttributes(attrs...))
}

// serverRequest is the server's request id names: the open one, else the
// latest the tracker keeps (an answer closes it before the sink sees it).
func serverRequest(tr *session.Tracker, id wire.ID) *session.ServerRequest {
	if sr, ok := tr.ServerRequest(id); ok {
		return sr
	}
	all := tr.ServerRequests()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].ID == id {
			return all[i]
		}
	}
	return nil
}

// cancelSent records when the cancel's signal left, which, and the late
// window it opened.
func (s *Sink) cancelSent(tr *session.Tracker, ev *event.Event) {
	rs := s.request(tr, ev.RequestID)
	if rs == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("inflight.cancel.signal", ev.Signal.String()),
		attribute.String("inflight.cancel.reason", s.text(ev.Reason)),
		attribute.Float64("inflight.late_window_ms", ms(rs.r.LateWindow)),
	}
	name := "inflight.cancel.sent"
	if ev.Err != nil {
		name = "inflight.cancel.failed"
		attrs = append(attrs, attribute.String("error.message", s.text(ev.Err.Error())))
	}
	rs.span.AddEvent(name, at(ev.Time), trace.WithAttributes(attrs...))
}

// hostCancelled records a host's notifications/cancelled, seen through
// a proxy, as its cancel's signal (inflight's own cancels are their
// CancelSent).
func (s *Sink) hostCancelled(tr *session.Tracker, ev *event.Event) {
	c, err := wire.DecodeCancelled(ev.Msg.Params)
	if err != nil {
		return
	}
	rs := s.request(tr, c.RequestID)
	if rs == nil || !rs.r.ByHost || rs.r.Cancel == nil || rs.r.Cancel.Cause != session.CauseHost {
		return
	}
	rs.span.AddEvent("inflight.cancel.sent", at(ev.Time), trace.WithAttributes(
		attribute.String("inflight.cancel.signal", event.SignalNotification.String()),
		attribute.String("inflight.cancel.reason", s.text(c.Reason)),
		attribute.Float64("inflight.late_window_ms", ms(rs.r.LateWindow))))
}

// connected learns the connection's attributes, for the run's span and
// every request's after.
func (s *Sink) connected(ev *event.Event) {
	in := ev.Info
	if in == nil {
		return
	}
	if t := networkTransport(in.Transport.String()); t != "" {
		s.conn.transport = t
	}
	s.conn.protocol, s.conn.session = in.ProtocolVersion, s.red.String(in.SessionID)
	attrs := s.conn.append([]attribute.KeyValue{attribute.String("inflight.era", in.Era.String())}, "")
	if in.ServerName != "" {
		attrs = append(attrs, attribute.String("inflight.server.name", s.text(in.ServerName)),
			attribute.String("inflight.server.version", s.text(in.ServerVersion)))
	}
	s.root.SetAttributes(attrs...)
	s.root.AddEvent("inflight.connected", at(ev.Time), trace.WithAttributes(attrs...))
}

// auth records a step of the OAuth authorization on the run's span.
func (s *Sink) auth(ev *event.Event) {
	st := ev.AuthStep
	if st == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("inflight.oauth.step", st.Kind.String())}
	if st.Method != "" {
		attrs = append(attrs, attribute.String("http.request.method", st.Method), attribute.String("url.full", s.text(st.URL)))
	}
	if st.Status != 0 {
		attrs = append(attrs, attribute.Int("http.response.status_code", st.Status))
	}
	if st.Duration > 0 {
		attrs = append(attrs, attribute.Float64("inflight.duration_ms", ms(st.Duration)))
	}
	for k, v := range map[string]string{"inflight.text": st.Text, "inflight.oauth.flag": st.Flag, "error.message": st.Err} {
		if v != "" {
			attrs = append(attrs, attribute.String(k, s.text(v)))
		}
	}
	when := st.Start
	if when.IsZero() {
		when = ev.Time
	}
	s.root.AddEvent("inflight.oauth."+st.Kind.String(), at(when), trace.WithAttributes(attrs...))
}

// change puts one of the tracker's changes on the spans.
func (s *Sink) change(tr *session.Tracker, ch *session.Change) {
	switch ch.Kind {
	case session.ChangeState:
		s.state(tr, ch)
	case session.ChangeLate, session.ChangeCrossed:
		s.arrival(tr, ch)
	case session.ChangeViolation:
		s.violation(tr, &ch.Violation)
	}
}

// state records a request's move: the cancel asked for (or the timeout
// that asked for it), a question waiting for the user and its answer,
// the task's handle, and its fate.
func (s *Sink) state(tr *session.Tracker, ch *session.Change) {
	rs := s.request(tr, ch.ID)
	if rs == nil {
		return
	}
	r := rs.r
	switch {
	case ch.To == session.StateCancelRequested && r.Cancel != nil:
		s.cancelAsked(rs, ch.At)
	case ch.To == session.StateWaitingInput:
		rs.span.AddEvent("inflight.input_required", at(ch.At), trace.WithAttributes(attribute.Int("inflight.round", r.Round())))
	case ch.From == session.StateWaitingInput && !ch.To.IsFinal():
		rs.span.AddEvent("inflight.input_answered", at(ch.At), trace.WithAttributes(attribute.Int("inflight.round", r.Round())))
	case ch.To == session.StateTask && r.Task != nil:
		rs.span.AddEvent("inflight.task", at(ch.At), trace.WithAttributes(attribute.String("inflight.task.id", s.text(r.Task.ID))))
	case ch.To.IsFinal():
	default:
		rs.span.AddEvent("inflight.state", at(ch.At), trace.WithAttributes(
			attribute.String("inflight.state.from", ch.From.String()), attribute.String("inflight.state", ch.To.String())))
	}
	s.taskNews(tr, rs)
	if ch.To.IsFinal() {
		s.finish(rs, ch)
	}
}

// cancelAsked records the cancel asked for: by whom, why, and the late
// window it opens; a timeout's cancel is a timeout event.
func (s *Sink) cancelAsked(rs *reqSpan, when time.Time) {
	c := rs.r.Cancel
	name := "inflight.cancel"
	attrs := []attribute.KeyValue{
		attribute.String("inflight.cancel.cause", c.Cause.String()),
		attribute.String("inflight.cancel.reason", s.text(c.Reason)),
		attribute.Float64("inflight.late_window_ms", ms(rs.r.LateWindow)),
	}
	if c.Cause == session.CauseTimeout {
		name = "inflight.timeout"
		attrs = append(attrs, attribute.String("inflight.timeout.limit", c.Limit.String()))
	}
	rs.span.AddEvent(name, at(when), trace.WithAttributes(attrs...))
}

// taskNews records a task's status changes not recorded yet, on the
// task's span (rs's, or its parent's for a task's own request).
func (s *Sink) taskNews(tr *session.Tracker, rs *reqSpan) {
	if !rs.r.Parent.IsZero() {
		if rs = s.request(tr, rs.r.Parent); rs == nil {
			return
		}
	}
	tk := rs.r.Task
	if tk == nil {
		return
	}
	for i, ch := range tk.History {
		if tk.HistoryDropped+i < rs.taskChanges {
			continue
		}
		attrs := []attribute.KeyValue{attribute.String("inflight.task.status", s.text(ch.Status))}
		if ch.Message != "" {
			attrs = append(attrs, attribute.String("inflight.task.message", s.text(ch.Message)))
		}
		rs.span.AddEvent("inflight.task.status", at(ch.At), trace.WithAttributes(attrs...))
	}
	rs.taskChanges = tk.HistoryDropped + len(tk.History)
	rs.span.SetAttributes(attribute.Int("inflight.task.polls", tk.Polls))
}

// finish records a request's fate, and leaves its span open for its
// linger: what comes after it (a late response) still goes on it.
func (s *Sink) finish(rs *reqSpan, ch *session.Change) {
	if !rs.endAt.IsZero() {
		return
	}
	r := rs.r
	rs.endAt = ch.At
	if ch.From == session.StateCancelRequested && r.Cancel != nil {
		attrs := []attribute.KeyValue{attribute.String("inflight.state", ch.To.String())}
		if r.Cancel.Failed != "" {
			attrs = append(attrs, attribute.String("inflight.cancel.failed", s.text(r.Cancel.Failed)))
		}
		rs.span.AddEvent("inflight.cancel.settled", at(ch.At), trace.WithAttributes(attrs...))
	}
	rs.span.SetAttributes(attribute.String("inflight.state", ch.To.String()))
	if kind, desc := s.failure(r, ch.To); kind != "" {
		rs.span.SetAttributes(attribute.String("error.type", kind))
		if r.Error != nil && ch.To == session.StateFailed {
			rs.span.SetAttributes(attribute.String("rpc.response.status_code", strconv.Itoa(r.Error.Code)))
		}
		rs.span.SetStatus(codes.Error, desc)
	}
	s.ending = append(s.ending, rs)
}

// failure is error.type for a request that ended in state (empty when
// it did not fail) and the status's description.
func (s *Sink) failure(r *session.Request, state session.State) (kind, desc string) {
	switch state {
	case session.StateFailed:
		switch {
		case r.Error != nil:
			return strconv.Itoa(r.Error.Code), s.text(r.Error.Message)
		case r.ToolError:
			return "tool_error", "the tool's result is an error"
		}
		return "failed", s.text(r.LocalError)
	case session.StateCancelled:
		reason := ""
		if r.Cancel != nil {
			reason = r.Cancel.Reason
		}
		return "cancelled", s.text(reason)
	case session.StateTimedOut:
		return "timeout", "the request's timeout expired"
	case session.StateConnectionLost:
		return "connection_lost", s.text(r.LocalError)
	}
	return "", ""
}

// arrival records what came after the request was given up: a late or
// crossed response, each with its lateness and the round trip and
// crossing window its verdict rests on; late and crossed progress
// counted and sampled.
func (s *Sink) arrival(tr *session.Tracker, ch *session.Change) {
	r, ok := tr.Get(ch.ID)
	if !ok {
		return
	}
	rs := s.spanOf(tr, r)
	verdict := "late"
	if ch.Kind == session.ChangeCrossed {
		verdict = "crossed"
	}
	if ch.What == session.ArrivalResponse {
		s.lateResponse(tr, rs, r, verdict, ch.At)
		return
	}
	n := 0
	if rs != nil {
		if verdict == "late" {
			rs.late++
			n = rs.late
		} else {
			rs.crossed++
			n = rs.crossed
		}
		if !sampled(n, rs.lateEvents, lateSamples) {
			return
		}
		rs.lateEvents++
	}
	attrs := append(s.lateness(tr, r, ch.At), attribute.Int("inflight.n", n))
	s.spanOr(rs).AddEvent("inflight."+verdict+"."+ch.What.String(), at(ch.At), trace.WithAttributes(attrs...))
}

// lateResponse records a late or crossed response.
func (s *Sink) lateResponse(tr *session.Tracker, rs *reqSpan, r *session.Request, verdict string, when time.Time) {
	attrs := s.lateness(tr, r, when)
	if r.Error != nil && r.Late.Response {
		attrs = append(attrs, attribute.String("rpc.response.status_code", strconv.Itoa(r.Error.Code)))
	}
	if rs != nil {
		if verdict == "late" {
			rs.lateResponse = true
		} else {
			rs.crossedResponse = true
		}
	}
	s.spanOr(rs).AddEvent("inflight."+verdict+".response", at(when), trace.WithAttributes(attrs...))
}

// lateness is how late something came for r, and the crossing window and
// round trip the verdict rests on (the same for a response, progress and
// a notification).
func (s *Sink) lateness(tr *session.Tracker, r *session.Request, when time.Time) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String("jsonrpc.request.id", s.red.String(r.ID.String()))}
	if c := r.Cancel; c != nil {
		attrs = append(attrs, attribute.Float64("inflight.after_cancel_ms", ms(when.Sub(c.At))))
		if !c.SignalAt.IsZero() {
			attrs = append(attrs, attribute.Float64("inflight.after_signal_ms", ms(when.Sub(c.SignalAt))))
		}
	} else if !r.Ended.IsZero() {
		attrs = append(attrs, attribute.Float64("inflight.after_end_ms", ms(when.Sub(r.Ended))))
	}
	if r.Late.Window > 0 {
		attrs = append(attrs, attribute.Float64("inflight.crossing_window_ms", ms(r.Late.Window)))
	}
	rt := tr.RoundTrip()
	attrs = append(attrs, attribute.Float64("inflight.round_trip_ms", ms(rt.D)),
		attribute.Int("inflight.round_trip.samples", rt.Samples))
	if rt.Source != "" {
		attrs = append(attrs, attribute.String("inflight.round_trip.source", rt.Source))
	}
	return attrs
}

// spanOr is rs's span, or the run's when rs is gone.
func (s *Sink) spanOr(rs *reqSpan) trace.Span {
	if rs != nil {
		return rs.span
	}
	return s.root
}

// violation records a protocol violation by its code, on its request's
// span (the run's for one about no request), within a bound.
func (s *Sink) violation(tr *session.Tracker, v *session.Violation) {
	rs := s.request(tr, v.RequestID)
	n, taken := &s.rootViolations, s.rootViolations
	if rs != nil {
		rs.violations++
		n, taken = &rs.violations, rs.violationEvents
		rs.violationEvents++
	} else {
		*n++
	}
	if taken >= violationSamples {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("inflight.violation.code", v.Code), attribute.Int("inflight.n", *n)}
	if v.Detail != "" {
		attrs = append(attrs, attribute.String("inflight.violation.detail", s.text(v.Detail)))
	}
	s.spanOr(rs).AddEvent("inflight.violation", at(v.Time), trace.WithAttributes(attrs...))
}

// text is a string fit for a span: the run's secrets masked, valid
// UTF-8, at most textBound bytes.
func (s *Sink) text(v string) string {
	v = strings.ToValidUTF8(s.red.String(v), "\uFFFD")
	if len(v) <= textBound {
		return v
	}
	cut := textBound
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}
