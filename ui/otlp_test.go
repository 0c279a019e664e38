package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"inflight/event"
	"inflight/otlp"
)

// --otlp sends the TUI's session as spans from the same events and
// changes as its trace: the user's cancel, its signal and the progress
// after it are events of the request's span; the export's one warning
// reaches the status line.
func TestSpansRecordTheSession(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := otlp.NewProvider(exp)
	defer tp.Shutdown(context.Background())
	h := newHarness(t, 120, 35)
	h.m.opts.Spans = otlp.NewSink(tp.Tracer("test"), otlp.Options{Name: "inflight"})
	h.connect()
	id := startSlow(h)
	h.progress(id, 1, 10, "step 1")
	h.key("c")
	h.cancelSent(id, event.SignalNotification)
	h.now = h.now.Add(100 * time.Millisecond)
	h.progress(id, 2, 10, "step 2, after the cancel")
	if err := h.m.opts.Spans.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var span *tracetest.SpanStub
	spans := exp.GetSpans()
	for i := range spans {
		if strings.HasPrefix(spans[i].Name, "tools/call slow") {
			span = &spans[i]
		}
	}
	if span == nil {
		t.Fatalf("no span of the request among %d", len(spans))
	}
	want := []string{"inflight.progress", "inflight.cancel", "inflight.cancel.sent", "inflight.late.progress"}
	if got := eventNames(span.Events); !containsInOrder(got, want) {
		t.Errorf("events %q, want %q among them in order", got, want)
	}

	notices := make(chan string, 1)
	h.m.opts.Notices = notices
	notices <- "otlp: spans to http://127.0.0.1:4318 are lost (connection refused); the run goes on without them"
	msg := waitNotice(notices, nil)()
	if _, ok := msg.(noticeMsg); !ok {
		t.Fatalf("waitNotice delivered %#v", msg)
	}
	// The command Update returns waits for the next notice: not run here.
	if _, next := h.m.Update(msg); next == nil {
		t.Error("the UI stops listening for notices after the first")
	}
	if !strings.Contains(h.screen(), "spans to http://127.0.0.1:4318 are lost") {
		t.Errorf("the warning is not on the status line:\n%s", h.screen())
	}
}

func eventNames(evs []sdktrace.Event) []string {
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	return names
}

// containsInOrder reports whether want are all in got, in that order.
func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
