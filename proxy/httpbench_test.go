package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
)

// The HTTP reverse proxy's benchmarks, in the manner of bench_test.go: the
// same upstream three ways in the same run, a request of each in turn —
// straight to it, through the floor (net/http/httputil.ReverseProxy with
// immediate flushing: what any Go reverse proxy hop costs), and through
// inflight's proxy (RunHTTP, recording, no trace) — reported side by
// side and as ratios, never asserted.
//
//	go test -run '^$' -bench 'HTTPProxy' -benchtime 3s ./proxy
//
// The upstream is a raw Go handler that costs next to nothing, so what is
// measured is the hop.

// benchUpstream answers every POST at once: with ?sse, an SSE stream of
// one event (the answer); with ?flood=N, an SSE stream of N progress
// notifications and then the answer, in writes of 32 KiB; else
// application/json.
func benchUpstream(b testing.TB) string {
	b.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := []byte("1")
		if i := bytes.Index(body, []byte(`"id":`)); i >= 0 {
			rest := body[i+5:]
			if j := bytes.IndexAny(rest, ",}"); j > 0 {
				id = rest[:j]
			}
		}
		// The progress token is the request's ID, as the SDKs' clients
		// make it.
		answer := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
		q := r.URL.Query()
		switch {
		case q.Has("flood"):
			// Built by hand into 32 KiB writes: fmt here cost the upstream
			// a quarter of the machine, which the hop then shared.
			n, _ := strconv.Atoi(q.Get("flood"))
			w.Header().Set("Content-Type", "text/event-stream")
			buf := make([]byte, 0, 40<<10)
			for i := 1; i <= n; i++ {
				buf = append(buf, `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
				buf = append(buf, id...)
				buf = append(buf, `,"progress":`...)
				buf = strconv.AppendInt(buf, int64(i), 10)
				buf = append(buf, "}}\n\n"...)
				if len(buf) >= 32<<10 {
					if _, err := w.Write(buf); err != nil {
						return
					}
					buf = buf[:0]
				}
			}
			buf = append(append(append(buf, "data: "...), answer...), "\n\n"...)
			_, _ = w.Write(buf)
		case q.Has("sse"):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", answer)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(answer)
		}
	})
	return serveBench(b, h)
}

func serveBench(b testing.TB, h http.Handler) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/mcp"
}

// floorProxy is httputil's reverse proxy in front of upstream.
func floorProxy(b testing.TB, upstream string) string {
	b.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		b.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // flush after every write, as inflight's proxy does an SSE stream
	tp := http.DefaultTransport.(*http.Transport).Clone()
	tp.Proxy = nil
	tp.DisableCompression = true
	rp.Transport = tp
	return serveBench(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As inflight's proxy does (see TestHTTPProxyStreamOutlivesTheHostsBody):
		// without it, one flood in a few was cut through this hop too.
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
}

// inflightProxy is RunHTTP in front of upstream; recorded counts the
// progress notifications its recorder applied, flagged the violations
// its tracker raised (none, against this upstream and host).
func inflightProxy(b testing.TB, upstream string, recorded, flagged *atomic.Int64, readOnly bool) string {
	b.Helper()
	stderr := &syncBuffer{}
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("the proxy said:\n%s", stderr.String())
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := RunHTTP(ctx, l, upstream, Options{Name: "bench", Stderr: stderr, ShutdownWait: 100 * time.Millisecond, ReadOnly: readOnly,
			OnEvent: func(ev event.Event, changes []session.Change, _ *session.Tracker) {
				if ev.Progress != nil {
					recorded.Add(1)
				}
				for _, ch := range changes {
					if ch.Kind == session.ChangeViolation {
						flagged.Add(1)
					}
				}
			}})
		if err != nil {
			b.Error(err)
		}
	}()
	b.Cleanup(func() { cancel(); <-done })
	return "http://" + l.Addr().String() + "/mcp"
}

// benchHost is a host's HTTP client: one keep-alive connection per
// endpoint.
func benchHost(b testing.TB) *http.Client {
	tp := http.DefaultTransport.(*http.Transport).Clone()
	tp.Proxy = nil
	tp.DisableCompression = true
	b.Cleanup(tp.CloseIdleConnections)
	return &http.Client{Transport: tp}
}

// benchPost sends one request as a legacy host would and reads the answer
// whole; it returns how long that took.
func benchPost(b *testing.B, c *http.Client, url string, id int) time.Duration {
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "bench")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil || !bytes.Contains(got, []byte(`"result"`)) {
		b.Fatalf("%s: %q %v", url, got, err)
	}
	return d
}

// BenchmarkHTTPProxyLatencyJSON: one POST and its application/json
// answer at a time, in turn direct, through the floor, and through the
// proxy. A round trip is two messages (the host's, the server's), so the
// proxy's cost per message is half the difference of the medians.
func BenchmarkHTTPProxyLatencyJSON(b *testing.B) { httpLatency(b, "") }

// BenchmarkHTTPProxyLatencySSE is the same with the answer as an SSE
// stream of one event.
func BenchmarkHTTPProxyLatencySSE(b *testing.B) { httpLatency(b, "?sse") }

func httpLatency(b *testing.B, query string) {
	up := benchUpstream(b)
	var recorded, flagged atomic.Int64
	var roRecorded, roFlagged atomic.Int64
	// The default proxy follows every host request (for --rule and the
	// attach keys); --read-only is the plain copy.
	urls := []string{up + query, floorProxy(b, up) + query, inflightProxy(b, up, &recorded, &flagged, false) + query,
		inflightProxy(b, up, &roRecorded, &roFlagged, true) + query}
	c := benchHost(b)
	for i := range 200 {
		for _, u := range urls {
			benchPost(b, c, u, i)
		}
	}
	ds := make([][]time.Duration, len(urls))
	id := 1000
	for b.Loop() {
		id++
		for i, u := range urls {
			ds[i] = append(ds[i], benchPost(b, c, u, id))
		}
	}
	d50, f50, p50v, r50 := p50(ds[0]), p50(ds[1]), p50(ds[2]), p50(ds[3])
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(d50), "direct-p50-µs")
	b.ReportMetric(us(f50), "floor-p50-µs")
	b.ReportMetric(us(p50v), "proxy-p50-µs")
	b.ReportMetric(us(p50v-d50)/2, "added-µs/msg")
	b.ReportMetric(us(f50-d50)/2, "floor-added-µs/msg")
	b.ReportMetric(float64(p50v)/float64(d50), "proxy/direct")
	b.ReportMetric(float64(p50v)/float64(f50), "proxy/floor")
	b.ReportMetric(us(r50-d50)/2, "readonly-added-µs/msg")
	b.ReportMetric(float64(r50)/float64(f50), "readonly/floor")
	b.ReportMetric(float64(flagged.Load()+roFlagged.Load()), "flags")
	b.ReportMetric(0, "ns/op") // an op is three round trips; the figures above are what counts
}

// BenchmarkHTTPProxyProgressSSE: one POST whose SSE answer is a flood of
// progress notifications and then the result, read by the host event by
// event; each op is one flood direct, one through the floor, one through
// the proxy (which records them, skipping what its recorder cannot keep
// up with).
func BenchmarkHTTPProxyProgressSSE(b *testing.B) {
	const n = 100000
	up := benchUpstream(b)
	var recorded, flagged atomic.Int64
	q := "?flood=" + strconv.Itoa(n)
	var roRecorded, roFlagged atomic.Int64
	urls := []string{up + q, floorProxy(b, up) + q, inflightProxy(b, up, &recorded, &flagged, false) + q,
		inflightProxy(b, up, &roRecorded, &roFlagged, true) + q}
	c := benchHost(b)
	names := []string{"direct", "floor", "proxy", "read-only proxy"}
	flood := func(which, id int) time.Duration {
		u := urls[which]
		req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(fmt.Appendf(nil,
			`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flood","_meta":{"progressToken":%d}}}`, id, id)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "bench")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReaderSize(resp.Body, 64<<10)
		events := 0
		for {
			l, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatalf("%s (%s): after %d events: %v", names[which], u, events, err)
			}
			if bytes.HasPrefix(l, []byte("data: ")) {
				if events++; events == n+1 {
					if !bytes.Contains(l, []byte(`"result"`)) {
						b.Fatalf("event %d is not the answer: %q", events, l)
					}
					break
				}
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	ts := make([]time.Duration, len(urls))
	floods := 0
	for b.Loop() {
		floods++
		for i := range urls {
			ts[i] += flood(i, floods)
		}
	}
	rate := func(t time.Duration) float64 { return float64(n*floods) / t.Seconds() }
	b.ReportMetric(rate(ts[0]), "direct-msgs/s")
	b.ReportMetric(rate(ts[1]), "floor-msgs/s")
	b.ReportMetric(rate(ts[2]), "proxy-msgs/s")
	b.ReportMetric(rate(ts[2])/rate(ts[0]), "proxy/direct")
	b.ReportMetric(rate(ts[2])/rate(ts[1]), "proxy/floor")
	b.ReportMetric(rate(ts[3]), "readonly-msgs/s")
	b.ReportMetric(rate(ts[3])/rate(ts[0]), "readonly/direct")
	b.ReportMetric(float64(recorded.Load())/float64(n*floods), "recorded-fraction")
	b.ReportMetric(float64(flagged.Load()+roFlagged.Load()), "flags")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkHTTPProxyTokenChurn: a host that sends a new bearer token (and
// Idempotency-Key) on every ping. The proxy masks each while it is in use,
// so what a request costs must not grow with the tokens seen before it: the
// first and the last tenth of the run are reported side by side and as a
// ratio, never asserted.
//
//	go test ./proxy/ -run '^$' -bench TokenChurn -benchtime 20000x
func BenchmarkHTTPProxyTokenChurn(b *testing.B) {
	up := benchUpstream(b)
	var recorded, flagged atomic.Int64
	url := inflightProxy(b, up, &recorded, &flagged, false)
	c := benchHost(b)
	tenth := max(b.N/10, 1)
	var first, last time.Duration
	b.ResetTimer()
	for i := range b.N {
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", "bench")
		req.Header.Set("Authorization", fmt.Sprintf("Bearer eyJhbGciOiJIUzI1NiJ9.churn-%09d.signature", i))
		req.Header.Set("Idempotency-Key", fmt.Sprintf("idem-%09d-0000-0000", i))
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case i < tenth:
			first += d
		case i >= b.N-tenth:
			last += d
		}
	}
	b.ReportMetric(float64(first.Microseconds())/float64(tenth), "µs/req-first-tenth")
	b.ReportMetric(float64(last.Microseconds())/float64(tenth), "µs/req-last-tenth")
	b.ReportMetric(float64(last)/float64(first), "last/first")
}
