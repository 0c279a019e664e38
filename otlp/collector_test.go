package otlp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/internal/testkit/testserver"
	"inflight/otlp"
	"inflight/runner"
	"inflight/session"
)

// warnings collects what a Sink says.
type warnings struct {
	mu   sync.Mutex
	said []string
}

func (w *warnings) warn(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.said = append(w.said, msg)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.said...)
}

// runSlow runs the demo's slow tool to its end with the sink given.
func runSlow(t *testing.T, sink *otlp.Sink) {
	t.Helper()
	cn, err := runner.Dial(context.Background(), testserver.Stdio(t, testserver.Modern), runner.Options{Timeout: time.Minute,
		MaxTimeout: time.Minute, LateWindow: testserver.Late, Spans: sink})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cn.Begin(context.Background(), "tools/call", testserver.ToolParams(t, "slow", `{"seconds":0.2,"steps":2}`), session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cn.Settle(r.ID, time.Minute)
	cn.Close()
	if r.State != session.StateCompleted {
		t.Fatalf("the run ended %s, not completed", r.State)
	}
}

// A collector that is not there, or that never answers, is said once and
// changes nothing of the run; the end's flush gives up within its bound.
func TestCollectorDownOrSlow(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	stuck := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(stuck)
	for name, endpoint := range map[string]string{"down": down, "slow": slow.URL} {
		t.Run(name, func(t *testing.T) {
			var w warnings
			sink, err := otlp.Open(otlp.Options{Endpoint: endpoint, Name: "inflight test", Warn: w.warn})
			if err != nil || sink == nil {
				t.Fatalf("Open: %v, %v", sink, err)
			}
			runSlow(t, sink)
			began := time.Now()
			if err := sink.Close(); err == nil {
				t.Errorf("Close says nothing of spans that never arrived")
			}
			// Generous: the bound is otlp.FlushBound, and the machine may be loaded.
			if took := time.Since(began); took > 10*otlp.FlushBound {
				t.Errorf("Close took %s", took)
			}
			said := w.all()
			if len(said) != 1 || !strings.Contains(said[0], "otlp: spans to "+endpoint) {
				t.Errorf("said %q, want one warning naming %s", said, endpoint)
			}
		})
	}
}

// The export is on with --otlp or the environment's endpoint, and off
// when the environment turns it off.
func TestEnabled(t *testing.T) {
	t.Setenv(otlp.EnvEndpoint, "")
	t.Setenv(otlp.EnvTracesEndpoint, "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	if otlp.Enabled("") {
		t.Error("on with nothing asking for it")
	}
	if !otlp.Enabled("http://127.0.0.1:4318") {
		t.Error("off with --otlp")
	}
	t.Setenv(otlp.EnvTracesEndpoint, "http://127.0.0.1:4318/v1/traces")
	if !otlp.Enabled("") {
		t.Error("off with " + otlp.EnvTracesEndpoint)
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if otlp.Enabled("http://127.0.0.1:4318") {
		t.Error("on with OTEL_TRACES_EXPORTER=none")
	}
	if s, err := otlp.Open(otlp.Options{Endpoint: "http://127.0.0.1:4318"}); s != nil || err != nil {
		t.Errorf("Open while off: %v, %v", s, err)
	}
	for _, bad := range []string{"127.0.0.1:4318", "ftp://x", "http://"} {
		if otlp.CheckEndpoint(bad) == nil {
			t.Errorf("--otlp %q taken", bad)
		}
	}
}
