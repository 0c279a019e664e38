package otlp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"inflight/client"
	"inflight/internal/testkit/testserver"
	"inflight/otlp"
	"inflight/redact"
	"inflight/runner"
	"inflight/session"
	"inflight/target"
	inflighttrace "inflight/trace"
	"inflight/wire"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// recorded is a Sink on an in-memory exporter, through the provider Open
// uses.
type recorded struct {
	exp  *tracetest.InMemoryExporter
	tp   *sdktrace.TracerProvider
	sink *otlp.Sink
}

func newRecorded(o otlp.Options) *recorded {
	exp := tracetest.NewInMemoryExporter()
	tp := otlp.NewProvider(exp)
	return &recorded{exp: exp, tp: tp, sink: otlp.NewSink(tp.Tracer("test"), o)}
}

// spans closes the sink and returns what reached the exporter.
func (r *recorded) spans(t *testing.T) tracetest.SpanStubs {
	t.Helper()
	if err := r.sink.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := r.exp.GetSpans()
	_ = r.tp.Shutdown(context.Background())
	return spans
}

func find(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %q", name, names)
	return tracetest.SpanStub{}
}

func attr(attrs []attribute.KeyValue, key string) (attribute.Value, bool) {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantAttr(t *testing.T, what string, attrs []attribute.KeyValue, key, want string) {
	t.Helper()
	v, ok := attr(attrs, key)
	if !ok || v.Emit() != want {
		t.Errorf("%s: %s = %q (set: %v), want %q", what, key, v.Emit(), ok, want)
	}
}

func eventOf(t *testing.T, s tracetest.SpanStub, name string) sdktrace.Event {
	t.Helper()
	for _, e := range s.Events {
		if e.Name == name {
			return e
		}
	}
	var names []string
	for _, e := range s.Events {
		names = append(names, e.Name)
	}
	t.Fatalf("span %q has no event %q among %q", s.Name, name, names)
	return sdktrace.Event{}
}

// stubbornRun cancels the demo's stubborn tool mid-way on tg, which
// answers anyway, late, with the sink given the run.
func stubbornRun(t *testing.T, tg target.Target, sink *otlp.Sink, red *redact.Redactor) {
	t.Helper()
	stubbornRunWith(t, tg, runner.Options{Spans: sink, Redactor: red})
}

// stubbornRunTraced is stubbornRun with a trace written too.
func stubbornRunTraced(t *testing.T, tg target.Target, sink *otlp.Sink, tw *inflighttrace.Writer) {
	t.Helper()
	stubbornRunWith(t, tg, runner.Options{Spans: sink, Trace: tw})
}

func stubbornRunWith(t *testing.T, tg target.Target, o runner.Options) {
	t.Helper()
	o.Timeout, o.MaxTimeout, o.LateWindow = time.Minute, time.Minute, 5*time.Second
	cn, err := runner.Dial(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	r, err := cn.Begin(context.Background(), "tools/call", testserver.ToolParams(t, "stubborn", `{"seconds":0.6,"steps":3}`), session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// At the first progress: the stubborn tool is working.
	cn.Wait(context.Background(), func() bool { return r.Progress.Count > 0 }, time.Now().Add(30*time.Second))
	if err := cn.Cancel(r.ID, "enough of that", session.CauseUser); err != nil {
		t.Fatal(err)
	}
	cn.Settle(r.ID, 30*time.Second)
	if r, _ := cn.Tracker().Get(r.ID); r.State != session.StateCancelled || !r.Late.Response {
		t.Fatalf("the run did not end cancelled with a late response: %s, late %v", r.State, r.Late.Response)
	}
}

// A cancelled stubborn call is one client span named after the MCP
// conventions, the child of the run's span, with the cancel, its signal,
// the late response (how late, and the round trip the verdict rests
// on) and the settling as its events, each at the tracker's time.
func TestStubbornCallSpan(t *testing.T) {
	rec := newRecorded(otlp.Options{Name: "inflight test", Transport: "stdio"})
	stubbornRun(t, testserver.Stdio(t, testserver.Legacy), rec.sink, nil)
	spans := rec.spans(t)
	root := find(t, spans, "inflight test")
	s := find(t, spans, "tools/call stubborn")
	if s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != root.SpanContext.SpanID() || s.SpanContext.TraceID() != root.SpanContext.TraceID() {
		t.Errorf("kind %v, parent %v (root %v)", s.SpanKind, s.Parent.SpanID(), root.SpanContext.SpanID())
	}
	for key, want := range map[string]string{"mcp.method.name": "tools/call", "jsonrpc.request.id": "1", "network.transport": "pipe",
		"gen_ai.tool.name": "stubborn", "mcp.protocol.version": testserver.Legacy.Version, "error.type": "cancelled",
		"inflight.state": "cancelled", "inflight.late.response": "true"} {
		wantAttr(t, s.Name, s.Attributes, key, want)
	}
	cancel := eventOf(t, s, "inflight.cancel")
	wantAttr(t, "cancel", cancel.Attributes, "inflight.cancel.cause", "user")
	wantAttr(t, "cancel", cancel.Attributes, "inflight.cancel.reason", "enough of that")
	wantAttr(t, "cancel", cancel.Attributes, "inflight.late_window_ms", "5000")
	sent := eventOf(t, s, "inflight.cancel.sent")
	wantAttr(t, "cancel sent", sent.Attributes, "inflight.cancel.signal", "notifications/cancelled")
	late := eventOf(t, s, "inflight.late.response")
	for _, key := range []string{"inflight.after_cancel_ms", "inflight.after_signal_ms", "inflight.round_trip_ms", "inflight.crossing_window_ms"} {
		if _, ok := attr(late.Attributes, key); !ok {
			t.Errorf("the late response's event has no %s: %v", key, late.Attributes)
		}
	}
	// Progress after the cancel says the same as the late response: how
	// late, and the window and round trip its verdict rests on.
	lateProgress := 0
	for _, ev := range s.Events {
		if ev.Name != "inflight.late.progress" && ev.Name != "inflight.crossed.progress" {
			continue
		}
		lateProgress++
		for _, key := range []string{"inflight.after_cancel_ms", "inflight.after_signal_ms", "inflight.round_trip_ms", "inflight.crossing_window_ms", "inflight.n"} {
			if _, ok := attr(ev.Attributes, key); !ok {
				t.Errorf("the %s event has no %s: %v", ev.Name, key, ev.Attributes)
			}
		}
	}
	if lateProgress == 0 {
		t.Errorf("no progress event after the cancel of the stubborn call: %v", s.Events)
	}
	settled := eventOf(t, s, "inflight.cancel.settled")
	if !(s.StartTime.Before(cancel.Time) && !sent.Time.Before(cancel.Time) && late.Time.After(sent.Time) && !settled.Time.Before(late.Time)) {
		t.Errorf("events out of order: start %v cancel %v sent %v late %v settled %v", s.StartTime, cancel.Time, sent.Time, late.Time, settled.Time)
	}
	if !s.EndTime.Equal(settled.Time) {
		t.Errorf("the span ends at %v, not when the cancel settled (%v)", s.EndTime, settled.Time)
	}
	if progress := eventOf(t, s, "inflight.progress"); !progress.Time.Before(cancel.Time) {
		t.Errorf("timely progress at %v, after the cancel at %v", progress.Time, cancel.Time)
	}
}

// Secrets the run knows never reach a span: the cancel's reason carries
// one, and it is masked like everywhere else.
func TestSpansAreRedacted(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	red := redact.New(nil, []string{"API_KEY=" + secret}, "")
	rec := newRecorded(otlp.Options{Name: "inflight test", Redactor: red})
	tg := testserver.Stdio(t, testserver.Modern)
	cn, err := runner.Dial(context.Background(), tg, runner.Options{Timeout: time.Minute, MaxTimeout: time.Minute,
		LateWindow: testserver.Late, Spans: rec.sink, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cn.Begin(context.Background(), "tools/call", testserver.ToolParams(t, "slow", `{"seconds":5,"steps":5}`), session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cn.Cancel(r.ID, "key "+secret+" revoked", session.CauseUser); err != nil {
		t.Fatal(err)
	}
	cn.Settle(r.ID, 30*time.Second)
	cn.Close()
	spans := rec.spans(t)
	for _, s := range spans {
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.Emit(), secret) {
				t.Errorf("span %q: %s holds the secret", s.Name, a.Key)
			}
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				if strings.Contains(a.Value.Emit(), secret) {
					t.Errorf("span %q, event %q: %s holds the secret", s.Name, e.Name, a.Key)
				}
			}
		}
	}
	reason, _ := attr(eventOf(t, find(t, spans, "tools/call slow"), "inflight.cancel").Attributes, "inflight.cancel.reason")
	if !strings.Contains(reason.Emit(), "revoked") {
		t.Errorf("the reason is gone altogether: %q", reason.Emit())
	}
}

// A progress flood is counted whole and sampled onto the span within a
// bound: the first notifications, then one in a thousand.
func TestProgressFloodIsSampled(t *testing.T) {
	const n = 5000
	rec := newRecorded(otlp.Options{Name: "inflight test"})
	cn, err := runner.Dial(context.Background(), testserver.Stdio(t, testserver.Modern), runner.Options{Timeout: time.Minute,
		MaxTimeout: time.Minute, LateWindow: testserver.Late, Spans: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cn.Begin(context.Background(), "tools/call", testserver.ToolParams(t, "flood", `{"count":5000}`), session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cn.Settle(r.ID, time.Minute)
	cn.Close()
	if r.State != session.StateCompleted || r.Progress.Count != n {
		t.Fatalf("flood: %s, %d progress", r.State, r.Progress.Count)
	}
	s := find(t, rec.spans(t), "tools/call flood")
	wantAttr(t, s.Name, s.Attributes, "inflight.progress.count", "5000")
	var ns []int64
	for _, e := range s.Events {
		if e.Name == "inflight.progress" {
			v, _ := attr(e.Attributes, "inflight.progress.n")
			ns = append(ns, v.AsInt64())
		}
	}
	want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1000, 2000, 3000, 4000, 5000}
	if !slices.Equal(ns, want) {
		t.Errorf("progress events %v, want %v", ns, want)
	}
	if s.DroppedEvents != 0 {
		t.Errorf("%d events dropped", s.DroppedEvents)
	}
}

// A trace file sent after the fact gives the spans the live run sent:
// the same names, attributes and events in the same order, at the same
// moments of the run.
func TestExportFileMatchesTheLiveRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	f, err := inflighttrace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	live := newRecorded(otlp.Options{Name: "inflight test"})
	tw := inflighttrace.NewWriter(f, start, nil)
	stubbornRunTraced(t, testserver.Stdio(t, testserver.Legacy), live.sink, tw)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	liveSpan := find(t, live.spans(t), "tools/call stubborn")

	exported := newRecorded(otlp.Options{})
	err = otlp.ExportFile(context.Background(), "http://127.0.0.1:4318", path, otlp.ExportOptions{Start: start,
		Open: func(o otlp.Options) (*otlp.Sink, error) {
			if o.Name != "inflight trace run.jsonl" || o.Endpoint != "http://127.0.0.1:4318" {
				t.Errorf("opened with %+v", o)
			}
			return otlp.NewSink(exported.tp.Tracer("test"), o), nil
		}, Tracker: session.Config{LateWindow: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	// The Sink ExportFile opened has been closed: only flush.
	if err := exported.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exported.exp.GetSpans()
	_ = exported.tp.Shutdown(context.Background())
	find(t, spans, "inflight trace run.jsonl")
	got := find(t, spans, "tools/call stubborn")
	if names(got.Events) != names(liveSpan.Events) {
		t.Errorf("exported events %s\nlive events     %s", names(got.Events), names(liveSpan.Events))
	}
	if len(got.Events) == len(liveSpan.Events) {
		for i := range got.Events {
			if d := got.Events[i].Time.Sub(liveSpan.Events[i].Time).Abs(); d > time.Millisecond {
				t.Errorf("event %s: exported at %v, live at %v", got.Events[i].Name, got.Events[i].Time, liveSpan.Events[i].Time)
			}
		}
	}
	for _, key := range []string{"mcp.method.name", "jsonrpc.request.id", "gen_ai.tool.name", "network.transport", "mcp.protocol.version", "error.type", "inflight.late.response"} {
		want, _ := attr(liveSpan.Attributes, key)
		wantAttr(t, "exported", got.Attributes, key, want.Emit())
	}
}

func names(evs []sdktrace.Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Name)
	}
	return strings.Join(s, " ")
}

// dialLegacy connects to the demo in the legacy era with the sink given,
// answering the server's elicitations with accept.
func dialLegacy(t *testing.T, sink *otlp.Sink, timeout time.Duration) *runner.Conn {
	t.Helper()
	cn, err := runner.Dial(context.Background(), testserver.Stdio(t, testserver.Legacy), runner.Options{Timeout: timeout,
		MaxTimeout: time.Minute, LateWindow: testserver.Late, Spans: sink, Answers: client.Answers{Elicitation: true},
		ServerRequests: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
			return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return cn
}

// A task is its request's span with its polls as child spans and each
// status it went through as an event; a timeout is its own event and
// error.type; the server's question and its answer are events on the
// request they came during.
func TestTaskTimeoutAndQuestionSpans(t *testing.T) {
	rec := newRecorded(otlp.Options{Name: "inflight test"})
	cn := dialLegacy(t, rec.sink, time.Minute)
	params, err := runner.WithTask(testserver.ToolParams(t, "task_job", `{"seconds":0.5,"steps":4,"pollMs":20}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	job, err := cn.Begin(context.Background(), "tools/call", params, session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cn.Settle(job.ID, time.Minute)
	silent, err := cn.Begin(context.Background(), "tools/call", testserver.ToolParams(t, "silent", `{"seconds":30}`),
		session.RequestOptions{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cn.Settle(silent.ID, time.Minute)
	confirm, err := cn.Begin(context.Background(), "tools/call", testserver.ToolParams(t, "confirm", `{}`), session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cn.Settle(confirm.ID, time.Minute)
	cn.Close()
	if job.State != session.StateCompleted || silent.State != session.StateTimedOut || confirm.State != session.StateCompleted {
		t.Fatalf("task_job %s, silent %s, confirm %s", job.State, silent.State, confirm.State)
	}
	spans := rec.spans(t)

	task := find(t, spans, "tools/call task_job")
	eventOf(t, task, "inflight.task")
	var statuses []string
	for _, e := range task.Events {
		if e.Name == "inflight.task.status" {
			v, _ := attr(e.Attributes, "inflight.task.status")
			statuses = append(statuses, v.Emit())
		}
	}
	if len(statuses) < 2 || statuses[len(statuses)-1] != "completed" {
		t.Errorf("the task's statuses on its span: %q", statuses)
	}
	polls := 0
	for _, s := range spans {
		if s.Parent.SpanID() == task.SpanContext.SpanID() {
			if s.Name != "tasks/get" && s.Name != "tasks/result" {
				t.Errorf("a child of the task's span: %q", s.Name)
			}
			if s.Name == "tasks/get" {
				polls++
			}
		}
	}
	if polls == 0 || polls != job.Task.Polls {
		t.Errorf("%d polls as child spans, the task counted %d", polls, job.Task.Polls)
	}
	wantAttr(t, task.Name, task.Attributes, "inflight.task.polls", strconv.Itoa(job.Task.Polls))

	timedOut := find(t, spans, "tools/call silent")
	wantAttr(t, timedOut.Name, timedOut.Attributes, "error.type", "timeout")
	wantAttr(t, "timeout", eventOf(t, timedOut, "inflight.timeout").Attributes, "inflight.timeout.limit", "timeout")

	asked := find(t, spans, "tools/call confirm")
	wantAttr(t, "question", eventOf(t, asked, "inflight.server_request").Attributes, "mcp.method.name", "elicitation/create")
	wantAttr(t, "answer", eventOf(t, asked, "inflight.server_request.answered").Attributes, "inflight.server_request.state", "answered")
}
