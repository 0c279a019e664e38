package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
)

// The benchmarks run the same server two ways in the same run — spoken to
// directly over its pipes, and through the proxy — and report both, and
// their difference or ratio, rather than asserting a time (the machine is
// shared; a ratio taken side by side survives that, a threshold does not).
//
//	go test -run '^$' -bench 'Stdio|Progress' -benchtime 3s ./proxy

// benchConn is a host's end of a connection: lines to write, lines to read.
type benchConn struct {
	w     io.Writer
	r     *bufio.Reader
	close func()
}

// direct starts a helper and speaks to it over its own pipes.
func direct(b *testing.B, name string, env ...string) *benchConn {
	exe, henv := helperB(b, name, env...)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), henv...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &benchConn{w: in, r: bufio.NewReaderSize(out, 64<<10), close: func() { in.Close(); _ = cmd.Wait() }}
}

// proxied starts a helper behind the proxy (recording, no trace).
func proxied(b *testing.B, name string, opts Options, env ...string) *benchConn {
	exe, henv := helperB(b, name, env...)
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		opts.Env = henv
		if _, err := Run(context.Background(), Host{In: inR, Out: outW}, exe, nil, opts); err != nil {
			b.Error(err)
		}
		outW.Close()
	}()
	return &benchConn{w: inW, r: bufio.NewReaderSize(outR, 64<<10), close: func() {
		inW.Close()
		<-done
		inR.Close()
		outR.Close()
	}}
}

func helperB(b *testing.B, name string, env ...string) (string, []string) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return exe, append([]string{"INFLIGHT_PROXY_HELPER=" + name}, env...)
}

// roundTrip sends one request and reads its answer.
func (c *benchConn) roundTrip(b *testing.B, id int) time.Duration {
	req := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", id)
	start := time.Now()
	if _, err := c.w.Write(req); err != nil {
		b.Fatal(err)
	}
	if _, err := c.r.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

func p50(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkStdioLatency: one request and its answer at a time, alternately
// straight to the server and through the proxy. A round trip is two
// messages, so the proxy's cost per message is half the difference of the
// medians.
func BenchmarkStdioLatency(b *testing.B) { stdioLatency(b, Options{}) }

func stdioLatency(b *testing.B, opts Options) {
	d := direct(b, "pong")
	defer d.close()
	p := proxied(b, "pong", opts)
	defer p.close()
	for i := range 200 {
		d.roundTrip(b, i)
		p.roundTrip(b, i)
	}
	var dd, pd []time.Duration
	id := 1000
	for b.Loop() {
		id++
		dd = append(dd, d.roundTrip(b, id))
		pd = append(pd, p.roundTrip(b, id))
	}
	d50, pp50 := p50(dd), p50(pd)
	b.ReportMetric(float64(d50.Nanoseconds())/1e3, "direct-p50-µs")
	b.ReportMetric(float64(pp50.Nanoseconds())/1e3, "proxy-p50-µs")
	b.ReportMetric(float64((pp50-d50).Nanoseconds())/2e3, "added-µs/msg")
	b.ReportMetric(float64(pp50)/float64(d50), "proxy/direct")
	b.ReportMetric(0, "ns/op") // the op is two round trips; the figures above are what counts
}

// BenchmarkProgressThroughput: the server answers each request with a
// flood of progress notifications and then the result; each op is one
// flood straight from the server and one through the proxy (which records
// them, skipping what its recorder cannot keep up with).
func BenchmarkProgressThroughput(b *testing.B) { progressThroughput(b, nil) }

// BenchmarkProgressThroughputRuleWatching is the same flood with a --rule
// on the call (a delay of its answer by 1ms): while the answer is awaited
// the server's output goes through the gate a line at a time, each line
// decoded to see whether it is the answer.
func BenchmarkProgressThroughputRuleWatching(b *testing.B) {
	r, err := ParseRule("tools/call flood: delay 1ms")
	if err != nil {
		b.Fatal(err)
	}
	progressThroughput(b, []Rule{r})
}

func progressThroughput(b *testing.B, rules []Rule) {
	progressThroughputWith(b, Options{Rules: rules})
}

// progressThroughputWith is the flood through a proxy of opts.
func progressThroughputWith(b *testing.B, opts Options) {
	const n = 100000
	env := fmt.Sprintf("N=%d", n)
	d := direct(b, "progress-flood", env)
	defer d.close()
	var recorded atomic.Int64
	opts.OnEvent = func(ev event.Event, _ []session.Change, _ *session.Tracker) {
		if ev.Progress != nil {
			recorded.Add(1)
		}
	}
	p := proxied(b, "progress-flood", opts, env)
	defer p.close()
	flood := func(c *benchConn, id int) time.Duration {
		req := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flood","_meta":{"progressToken":1}}}`+"\n", id)
		start := time.Now()
		if _, err := c.w.Write(req); err != nil {
			b.Fatal(err)
		}
		for i := 0; i <= n; i++ {
			l, err := c.r.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if i == n && !bytes.Contains(l, []byte(`"result"`)) {
				b.Fatalf("line %d is not the answer: %q", i, l)
			}
		}
		return time.Since(start)
	}
	var dt, pt time.Duration
	floods := 0
	for b.Loop() {
		floods++
		dt += flood(d, floods)
		pt += flood(p, floods)
	}
	rate := func(t time.Duration) float64 { return float64(n*floods) / t.Seconds() }
	b.ReportMetric(rate(dt), "direct-msgs/s")
	b.ReportMetric(rate(pt), "proxy-msgs/s")
	b.ReportMetric(rate(pt)/rate(dt), "proxy/direct")
	b.ReportMetric(float64(recorded.Load())/float64(n*floods), "recorded-fraction")
	b.ReportMetric(0, "ns/op")
}
