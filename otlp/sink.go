package otlp

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/version"
	"inflight/wire"
)

// Bounds of what one span carries. The SDK keeps at most
// maxEventsPerSpan events (NewProvider raises its default of 128 to it);
// the samples below stay within it whatever a server sends.
const (
	maxEventsPerSpan = 512
	// progressHead progress notifications of a request are each an
	// event; past them one in progressEvery, at most progressSamples in
	// all. The same for late and crossed progress (lateSamples), and
	// violations (violationSamples). Span attributes count them all.
	progressHead     = 16
	progressEvery    = 1000
	progressSamples  = 64
	lateSamples      = 64
	violationSamples = 32
	// textBound clips a reason, a detail or an error on a span.
	textBound = 512
)

// Sink builds spans from what a tracker applied. It is driven from the
// goroutine that drives the tracker (a run's event loop, a proxy's
// recorder, the TUI's Update), never concurrently; the SDK's processor
// sends on its own goroutine. A nil *Sink does nothing, so a run without
// --otlp calls it as it is.
type Sink struct {
	tracer trace.Tracer
	red    *redact.Redactor
	exp    *Exporter
	name   string
	linger time.Duration

	root    trace.Span
	rootCtx context.Context
	began   bool
	// last is the latest time the run's events reached: the clock that
	// ends a lingering span, and the root's end.
	last time.Time
	conn connAttrs

	spans map[*session.Request]*reqSpan
	// ending are the spans of finished requests, open for what may still
	// come for them until their end plus linger.
	ending []*reqSpan
	// rootViolations counts the violations about no request.
	rootViolations int
}

// connAttrs is what the connection says about every request on it.
type connAttrs struct {
	transport, protocol, session string
}

// reqSpan is one request's span and what was counted onto it.
type reqSpan struct {
	span trace.Span
	ctx  context.Context
	r    *session.Request
	// endAt is when the request reached its fate (zero while active).
	endAt time.Time
	ended bool

	progress, progressEvents       int
	late, crossed, lateEvents      int
	violations, violationEvents    int
	lateResponse, crossedResponse  bool
	taskChanges, taskChangesWanted int
}

// NewSink returns a Sink that starts its spans with tracer (Open's, or a
// test's).
func NewSink(tracer trace.Tracer, o Options) *Sink {
	s := &Sink{tracer: tracer, red: o.Redactor, name: o.Name, linger: o.Linger,
		spans: map[*session.Request]*reqSpan{}, conn: connAttrs{transport: networkTransport(o.Transport)},
		// Until the first moment is seen, the run's span is a no-op.
		rootCtx: context.Background(), root: trace.SpanFromContext(context.Background())}
	if s.name == "" {
		s.name = "inflight"
	}
	if s.linger <= 0 {
		s.linger = DefaultLinger
	}
	return s
}

func withVersion() trace.TracerOption { return trace.WithInstrumentationVersion(version.Version) }

// networkTransport is network.transport for an inflight transport name:
// a pipe for stdio, TCP for every HTTP one.
func networkTransport(t string) string {
	switch t {
	case "stdio":
		return "pipe"
	case "http", "sse":
		return "tcp"
	}
	return ""
}

// Applied is handed one event after tr applied it, with what it changed
// — or, with ev nil, what the run changed outside an event (a cancel, an
// expired timeout, a task poll begun). changes are not kept.
func (s *Sink) Applied(tr *session.Tracker, ev *event.Event, changes []session.Change) {
	if s == nil {
		return
	}
	at := time.Time{}
	if ev != nil {
		at = ev.Time
	} else if len(changes) > 0 {
		at = changes[0].At
	}
	s.begin(at)
	if ev != nil {
		s.event(tr, ev, changes)
	}
	for i := range changes {
		s.change(tr, &changes[i])
	}
	if len(s.ending) > 0 {
		s.sweep(false)
	}
}

// Advance moves the run's clock to now when no event came (a live run's
// tick), and ends the spans whose linger is over by then: a run that
// goes quiet still hands its finished requests to the collector, and
// hears early whether the collector takes them.
func (s *Sink) Advance(now time.Time) {
	if s == nil || !s.began {
		return
	}
	if now.After(s.last) {
		s.last = now
	}
	if len(s.ending) > 0 {
		s.sweep(false)
	}
}

// Lingering is when the first span kept open for what may still arrive
// is to end, on the run's clock (ok false: none is): when Advance has
// something to do.
func (s *Sink) Lingering() (at time.Time, ok bool) {
	if s == nil {
		return time.Time{}, false
	}
	for _, rs := range s.ending {
		if end := rs.endAt.Add(s.linger); !ok || end.Before(at) {
			at, ok = end, true
		}
	}
	return at, ok
}

// begin starts the run's span at the first moment seen, and moves the
// run's clock.
func (s *Sink) begin(at time.Time) {
	if at.IsZero() {
		return
	}
	if at.After(s.last) {
		s.last = at
	}
	if s.began {
		return
	}
	s.began = true
	s.rootCtx, s.root = s.tracer.Start(context.Background(), s.name, trace.WithTimestamp(at),
		trace.WithSpanKind(trace.SpanKindInternal))
}

// request is the span of the request id names (a round's, a task's own
// request's), started when first seen; nil for what the tracker does not
// follow.
func (s *Sink) request(tr *session.Tracker, id wire.ID) *reqSpan {
	if id.IsZero() {
		return nil
	}
	r, ok := tr.Get(id)
	if !ok {
		return nil
	}
	return s.spanOf(tr, r)
}

// spanOf is r's span, started (at r's creation) when it is new.
func (s *Sink) spanOf(tr *session.Tracker, r *session.Request) *reqSpan {
	if rs := s.spans[r]; rs != nil {
		return rs
	}
	if r.State.IsFinal() && s.last.Sub(r.Ended) >= s.linger {
		// Its span ended with its linger: what comes now goes on the
		// run's span.
		return nil
	}
	if !s.began {
		s.begin(r.Created)
	}
	parent := s.rootCtx
	if !r.Parent.IsZero() {
		if p := s.request(tr, r.Parent); p != nil {
			parent = p.ctx
		}
	}
	name, attrs := s.describe(tr, r)
	ctx, span := s.tracer.Start(parent, name, trace.WithTimestamp(r.Created),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	rs := &reqSpan{span: span, ctx: ctx, r: r}
	s.spans[r] = rs
	return rs
}

// describe is a request's span name and its attributes as the MCP
// conventions name them.
func (s *Sink) describe(tr *session.Tracker, r *session.Request) (string, []attribute.KeyValue) {
	method := s.red.String(r.Method)
	target := s.red.String(r.Target)
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", method),
		attribute.String("jsonrpc.request.id", s.red.String(r.ID.String())),
	}
	name := method
	switch {
	case target == "":
	case r.Method == wire.MethodToolsCall:
		// The conventions' target: a tool's or a prompt's name, which few
		// enough differ to name spans by.
		name += " " + target
		attrs = append(attrs, attribute.String("gen_ai.tool.name", target), attribute.String("gen_ai.operation.name", "execute_tool"))
	case r.Method == wire.MethodPromptsGet:
		name += " " + target
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", target))
	case strings.HasPrefix(r.Method, "resources/"):
		attrs = append(attrs, attribute.String("mcp.resource.uri", target))
	case strings.HasPrefix(r.Method, "tasks/"):
		attrs = append(attrs, attribute.String("inflight.task.id", target))
	default:
		attrs = append(attrs, attribute.String("inflight.target", target))
	}
	if info, ok := tr.Conn(); ok {
		if t := networkTransport(info.Transport.String()); t != "" {
			s.conn.transport = t
		}
		if info.ProtocolVersion != "" {
			s.conn.protocol = info.ProtocolVersion
		}
		if info.SessionID != "" {
			s.conn.session = info.SessionID
		}
	}
	attrs = s.conn.append(attrs, s.red.String(r.HostSession()))
	if r.ByHost {
		attrs = append(attrs, attribute.Bool("inflight.by_host", true))
	}
	if !r.Parent.IsZero() {
		attrs = append(attrs, attribute.String("inflight.task.role", r.Role.String()))
	}
	return name, attrs
}

// append adds the connection's attributes; session is the request's own
// (a host's HTTP session), else the connection's.
func (c connAttrs) append(attrs []attribute.KeyValue, session string) []attribute.KeyValue {
	if c.transport != "" {
		attrs = append(attrs, attribute.String("network.transport", c.transport))
	}
	if c.protocol != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", c.protocol))
	}
	if session == "" {
		session = c.session
	}
	if session != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", session))
	}
	return attrs
}

// Close ends every span still open — a request still in flight ends
// where the run did, said so — and, for an Open sink, flushes what is
// queued within FlushBound and stops the pipeline. Its error is the
// flush's (said already through Options.Warn).
func (s *Sink) Close() error {
	return s.CloseAt(time.Time{})
}

// CloseAt is Close with the run's end given (zero: the latest moment
// its events reached, or now for a live run that saw none).
func (s *Sink) CloseAt(end time.Time) error {
	if s == nil {
		return nil
	}
	if !end.IsZero() && end.After(s.last) {
		s.last = end
	}
	s.endAll()
	if s.exp == nil {
		return nil
	}
	return s.exp.shutdown(FlushBound)
}

// endAll ends the spans of the requests and the run's.
func (s *Sink) endAll() {
	s.sweep(true)
	for r, rs := range s.spans {
		if !rs.ended {
			rs.span.AddEvent("inflight.unfinished", trace.WithTimestamp(s.last),
				trace.WithAttributes(attribute.String("inflight.state", r.State.String())))
			s.end(rs, s.last)
		}
	}
	clear(s.spans)
	if s.began {
		if s.rootViolations > 0 {
			s.root.SetAttributes(attribute.Int("inflight.violations.count", s.rootViolations))
		}
		s.root.End(trace.WithTimestamp(s.last))
		s.began = false
	}
}

// sweep ends the lingering spans whose linger is over on the run's clock
// (all of them with all set).
func (s *Sink) sweep(all bool) {
	kept := s.ending[:0]
	for _, rs := range s.ending {
		if all || s.last.Sub(rs.endAt) >= s.linger {
			s.end(rs, rs.endAt)
			delete(s.spans, rs.r)
			continue
		}
		kept = append(kept, rs)
	}
	clear(s.ending[len(kept):])
	s.ending = kept
}

// end ends a request's span at at, with what was counted onto it.
func (s *Sink) end(rs *reqSpan, at time.Time) {
	if rs.ended {
		return
	}
	rs.ended = true
	attrs := []attribute.KeyValue{attribute.Int("inflight.progress.count", rs.progress)}
	if rs.late > 0 {
		attrs = append(attrs, attribute.Int("inflight.late.progress.count", rs.late))
	}
	if rs.crossed > 0 {
		attrs = append(attrs, attribute.Int("inflight.crossed.progress.count", rs.crossed))
	}
	if rs.lateResponse {
		attrs = append(attrs, attribute.Bool("inflight.late.response", true))
	}
	if rs.crossedResponse {
		attrs = append(attrs, attribute.Bool("inflight.crossed.response", true))
	}
	if rs.violations > 0 {
		attrs = append(attrs, attribute.Int("inflight.violations.count", rs.violations))
	}
	rs.span.SetAttributes(attrs...)
	rs.span.End(trace.WithTimestamp(at))
}
