package ui

import (
	"context"
	"net"
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

// A collector that refuses the spans is heard of while the TUI runs,
// though the run goes quiet once its requests ended: the clock wakes when
// a finished request's span has lingered its time, the span goes out, and
// the refusal stays on the status line under what is said later.
func TestRefusedCollectorIsSaidWhileTheRunGoesOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	notices := make(chan string, 1)
	spans, err := otlp.Open(otlp.Options{Endpoint: "http://" + addr, Name: "inflight", Transport: "stdio",
		Warn: func(msg string) {
			select {
			case notices <- msg:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer spans.Close()
	h := newHarness(t, 120, 35)
	h.m.opts.Spans, h.m.opts.Notices = spans, notices
	h.connect() // tools/list answered: its span lingers
	at, ok := spans.Lingering()
	if !ok {
		t.Fatal("no span lingers after tools/list was answered")
	}
	// Ticks due earlier (the connecting frame) come first.
	for i := 0; i < 5 && len(h.ticks) > 0 && h.ticks[len(h.ticks)-1] < at.Sub(h.now); i++ {
		h.advance(h.ticks[len(h.ticks)-1])
	}
	if len(h.ticks) == 0 || h.ticks[len(h.ticks)-1] != at.Sub(h.now) {
		t.Fatalf("the clock does not wake at the linger's end (%s from now); ticks asked: %v", at.Sub(h.now), h.ticks)
	}
	h.advance(at.Sub(h.now))
	if _, ok := spans.Lingering(); ok {
		t.Fatal("the tick at the linger's end left the finished request's span open")
	}
	stop := make(chan struct{})
	timer := time.AfterFunc(15*time.Second, func() { close(stop) })
	defer timer.Stop()
	msg := waitNotice(notices, stop)()
	if msg == nil {
		t.Fatalf("the refused collector at %s was not said within 15 s", addr)
	}
	// The command Update returns waits for the next notice: not run here.
	h.m.Update(msg)
	want := "spans to http://" + addr + " are lost"
	if !strings.Contains(h.screen(), want) {
		t.Fatalf("the warning is not on the status line:\n%s", h.screen())
	}
	h.m.setStatus(levelInfo, "something else")
	if s := h.screen(); !strings.Contains(s, "something else") || strings.Contains(s, want) {
		t.Fatalf("a later message is not shown over the warning:\n%s", s)
	}
	h.advance(2 * statusLife)
	if !strings.Contains(h.screen(), want) {
		t.Errorf("the warning is gone once the later message expired:\n%s", h.screen())
	}
}
