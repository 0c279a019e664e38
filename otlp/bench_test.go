package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"inflight/event"
	"inflight/internal/testkit/floodpeer"
	"inflight/internal/testkit/testbin"
	"inflight/otlp"
	"inflight/session"
	"inflight/wire"
)

// BenchmarkCallFloodOTLP is what --otlp costs the flood path: `inflight
// call` against the flood peer, process start to exit, with the export on
// (to a stand-in collector on 127.0.0.1 that takes every batch) and off,
// interleaved in the same run. It reports ns per notification of each,
// wall and CPU, and their ratios; the bound is 1.10.
//
//	go test -run '^$' -bench CallFloodOTLP -benchtime 5x ./otlp/
//	FLOODPEER_N=1000000 go test -run '^$' -bench CallFloodOTLP -benchtime 3x ./otlp/
func BenchmarkCallFloodOTLP(b *testing.B) {
	if testing.Short() {
		b.Skip("floods notifications through real processes; not in -short")
	}
	n := 200_000
	if s := os.Getenv("FLOODPEER_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("FLOODPEER_N=%q: want a positive count", s)
		}
		n = v
	}
	var batches atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		batches.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	inflight := testbin.Build(b, "inflight")
	peer := testbin.Build(b, "inflight/internal/testkit/floodpeer/peer")
	args := []string{"call", "--tool", floodpeer.Tool, "--args", `{"count":` + strconv.Itoa(n) + `}`}
	var off, on, offCPU, onCPU time.Duration
	for b.Loop() {
		wall, cpu := timed(b, inflight, append(args, "--", peer), n)
		off, offCPU = off+wall, offCPU+cpu
		wall, cpu = timed(b, inflight, append(args, "--otlp", collector.URL, "--", peer), n)
		on, onCPU = on+wall, onCPU+cpu
	}
	if batches.Load() == 0 {
		b.Fatal("no span reached the stand-in collector")
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(n) }
	b.ReportMetric(per(off), "off-ns/notification")
	b.ReportMetric(per(on), "otlp-ns/notification")
	b.ReportMetric(float64(on)/float64(off), "otlp/off")
	b.ReportMetric(per(offCPU), "off-cpu-ns/notification")
	b.ReportMetric(per(onCPU), "otlp-cpu-ns/notification")
	b.ReportMetric(float64(onCPU)/float64(offCPU), "otlp/off-cpu")
	b.ReportMetric(0, "ns/op")
}

// timed runs inflight with args to its exit, checks that it counted n
// notifications, and returns how long it took and the CPU time it (and
// the peer it ran) used: on a machine others load, the CPU time is the
// steadier figure.
func timed(b *testing.B, inflight string, args []string, n int) (wall, cpu time.Duration) {
	b.Helper()
	cmd := exec.Command(inflight, args...)
	cmd.Env = otelFree()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "progress    "+strconv.Itoa(n)+" notifications") {
		b.Fatalf("inflight call did not count %d notifications:\n%s", n, stdout.String())
	}
	if stderr.Len() > 0 {
		b.Fatalf("inflight call said on stderr:\n%s", stderr.String())
	}
	return took, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// BenchmarkSinkProgress is the sink's share of one progress notification
// on the flood path, in process: the tracker applying it alone (off), and
// the tracker then the sink (otlp), on the provider Open uses with an
// exporter that discards.
//
//	go test -run '^$' -bench SinkProgress ./otlp/
func BenchmarkSinkProgress(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "otlp"
		}
		b.Run(name, func(b *testing.B) {
			tr := session.NewTracker(session.DefaultConfig())
			now := time.Now()
			r := tr.Begin("tools/call", json.RawMessage(`{"name":"flood"}`), session.RequestOptions{}, now)
			var sink *otlp.Sink
			if on {
				tp := otlp.NewProvider(discard{})
				defer tp.Shutdown(context.Background())
				sink = otlp.NewSink(tp.Tracer("bench"), otlp.Options{Name: "bench"})
				defer sink.Close()
			}
			var raw []byte
			i := 0
			for b.Loop() {
				i++
				// Each notification goes further than the last, as a
				// well-behaved server's do (the same value again is a
				// violation, which would measure the violation's path).
				raw = append(raw[:0], `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":`...)
				raw = append(strconv.AppendInt(raw, int64(i), 10), `}}`...)
				m, p, err := wire.DecodeLine(raw)
				if err != nil {
					b.Fatal(err)
				}
				ev := event.Event{Kind: event.Received, Time: now.Add(time.Duration(i) * time.Microsecond), Raw: raw, Msg: m, Progress: p}
				changes := tr.Apply(ev)
				sink.Applied(tr, &ev, changes)
			}
			if n := tr.Violations().Len(); n > 0 {
				b.Fatalf("%d violations: the bench measures a server that breaks a rule", n)
			}
			if r.Progress.Count != i {
				b.Fatalf("%d progress applied, want %d", r.Progress.Count, i)
			}
		})
	}
}

// discard is an exporter that takes every span and keeps none.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
