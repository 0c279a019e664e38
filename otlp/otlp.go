// Package otlp sends what inflight saw as OpenTelemetry spans over
// OTLP/HTTP (`--otlp URL`, or the standard OTEL_EXPORTER_OTLP_*
// variables), on the official Go SDK and its otlptracehttp exporter.
//
// A Sink derives spans from the tracker, the one truth: it is handed
// every event after the tracker applied it, with what it changed
// (session.Change), and the changes made outside an event — where a run
// writes its trace — and builds one span per request with the times the
// tracker holds (trace.WithTimestamp), never its own clock. So the same
// code serves a live run and a trace file read after the fact
// (ExportFile, where the times are the file's).
//
// Spans follow the OpenTelemetry semantic conventions for MCP: a client
// span named "{mcp.method.name} {target}" (tools/call stubborn) with
// mcp.method.name, jsonrpc.request.id, mcp.protocol.version,
// mcp.session.id, network.transport, gen_ai.tool.name and error.type.
// What only inflight knows goes on the span as events: the cancel (its
// signal, its reason, the late window), each late or crossed arrival
// with its lateness and the round trip the verdict rests on, timeouts,
// violations by code, a task's status changes (its polls are child
// spans), the server's questions and their answers, the OAuth steps.
// Progress is counted, and sampled onto the span within a bound.
//
// Secrets never reach a span: every string goes through the run's
// redact.Redactor. Exporting never blocks the run: the SDK's batch span
// processor sends on a goroutine of its own and drops what its queue
// cannot hold; a collector that is down or slow is said once, and the
// flush at the end is bounded (FlushBound).
package otlp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"inflight/redact"
	"inflight/termsafe"
	"inflight/version"
)

// FlushBound bounds how long the end of a run waits for its last spans
// to reach the collector.
const FlushBound = 2 * time.Second

// The environment variables that turn the export on without --otlp, as
// the SDK reads them (the traces one is used as it is, the other gets
// /v1/traces).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
)

// Enabled reports whether spans are to be sent: --otlp was given
// (endpoint), or the environment names a collector, and the environment
// does not turn the SDK or its trace export off.
func Enabled(endpoint string) bool {
	if os.Getenv("OTEL_SDK_DISABLED") == "true" || strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return endpoint != "" || os.Getenv(EnvEndpoint) != "" || os.Getenv(EnvTracesEndpoint) != ""
}

// CheckEndpoint says what is wrong with an --otlp URL, nil when nothing
// is: it must be an absolute http or https URL.
func CheckEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--otlp wants an OTLP/HTTP URL such as http://127.0.0.1:4318, not %q", endpoint)
	}
	return nil
}

// tracesURL is where --otlp's spans go: the URL as given when it names
// a path, else its /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT is read.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String()
}

// Options configure Open.
type Options struct {
	// Endpoint is --otlp's URL; "" takes the environment's.
	Endpoint string
	// Name names the run's span ("inflight call"), whose children the
	// requests' spans are.
	Name string
	// Transport is the transport until a connection says it ("stdio",
	// "http", "sse"): a proxy's tracker is told no connection.
	Transport string
	// Redactor hides the run's secrets in every string a span carries.
	Redactor *redact.Redactor
	// Warn is told, once, that spans could not be delivered (the
	// collector is down, slow or refuses them), in one sentence. It may
	// be called from another goroutine. Nil says nothing.
	Warn func(msg string)
	// Linger is how long a finished request's span stays open for what
	// may still arrive for it (a late response after its cancel
	// settled), on the run's clock; 0 is DefaultLinger.
	Linger time.Duration
}

// DefaultLinger is Options.Linger's default: the tracker's default late
// window.
const DefaultLinger = 5 * time.Second

// Exporter is the SDK's pipeline behind a Sink: the tracer provider, its
// batch span processor and the OTLP/HTTP exporter.
type Exporter struct {
	tp   *sdktrace.TracerProvider
	warn *warner
}

// Open starts the pipeline and returns a Sink on it, or nil (and no
// error) when the export is not enabled (Enabled). It connects to
// nothing yet: the first batch does, on the processor's goroutine.
func Open(o Options) (*Sink, error) {
	if !Enabled(o.Endpoint) {
		return nil, nil
	}
	if err := CheckEndpoint(o.Endpoint); err != nil {
		return nil, err
	}
	w := &warner{tell: o.Warn, where: describeEndpoint(o.Endpoint)}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 5 * time.Second}),
		otlptracehttp.WithTimeout(5 * time.Second),
	}
	if o.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(tracesURL(o.Endpoint)))
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	// The SDK says its errors through a global handler and logger, which
	// print every failure of every batch: said once, by the run, instead.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(w.failed))
	otel.SetLogger(logr.Discard())
	tp := NewProvider(&warnExporter{SpanExporter: exp, w: w})
	s := NewSink(tp.Tracer("inflight", withVersion()), o)
	s.exp = &Exporter{tp: tp, warn: w}
	return s, nil
}

// NewProvider is the tracer provider a Sink's spans go through: the
// resource (service.name "inflight" unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES say otherwise), room for the events a
// request's span carries, and a batch span processor on exp, which
// never blocks the run (a full queue drops).
func NewProvider(exp sdktrace.SpanExporter) *sdktrace.TracerProvider {
	base := resource.NewSchemaless(attribute.String("service.name", "inflight"), attribute.String("service.version", version.Version))
	res, err := resource.Merge(base, resource.Environment())
	if err != nil {
		res = base
	}
	limits := sdktrace.NewSpanLimits()
	limits.EventCountLimit = max(limits.EventCountLimit, maxEventsPerSpan)
	return sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithRawSpanLimits(limits),
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)),
	)
}

// shutdown flushes what is queued and stops the pipeline, within bound;
// a failure is said (once) and returned.
func (e *Exporter) shutdown(bound time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	err := e.tp.Shutdown(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the last spans were not delivered within %s", bound)
		}
		e.warn.failed(err)
	}
	return e.warn.first()
}

// warner says the first delivery failure, and only the first.
type warner struct {
	mu    sync.Mutex
	tell  func(string)
	where string
	said  error
}

func (w *warner) failed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.said != nil {
		return
	}
	w.said = err
	if w.tell != nil {
		w.tell(termsafe.Line(fmt.Sprintf("otlp: spans to %s are lost (%v); the run goes on without them", w.where, err)))
	}
}

// first is the failure said, nil when none was.
func (w *warner) first() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.said
}

// describeEndpoint names the collector in a warning, without the
// credentials a URL may carry.
func describeEndpoint(endpoint string) string {
	if endpoint == "" {
		endpoint = os.Getenv(EnvTracesEndpoint)
	}
	if endpoint == "" {
		endpoint = os.Getenv(EnvEndpoint)
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "the collector"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// warnExporter is the OTLP exporter whose failures are said once by the
// run rather than handed to the SDK, which would log each.
type warnExporter struct {
	sdktrace.SpanExporter
	w *warner
}

func (e *warnExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.w.failed(err)
	}
	return nil
}
