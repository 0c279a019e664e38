package waterfall

import (
	"strings"
	"testing"
	"time"

	"inflight/session"
	"inflight/wire"
)

// tenThousand is a run of 10 000 requests over 100 seconds, one every
// 10ms, each answered 50 to 500ms later after a progress, but every
// hundredth cancelled with a late answer and the last 20 in flight.
func tenThousand(tb testing.TB) *run {
	r := newRun(tb, session.DefaultConfig())
	const n = 10_000
	for i := range n {
		ms := i * 10
		req := r.call(ms, "echo", session.RequestOptions{})
		r.progress(ms+5, req, 1)
		switch {
		case i >= n-20:
		case i%100 == 0:
			r.cancel(ms+6, req, true)
			r.done(ms+400, req)
		default:
			r.done(ms+50+(i%10)*50, req)
		}
	}
	r.now = at(n*10 + 100)
	if r.tr.Len() != n {
		tb.Fatalf("%d requests kept, want %d", r.tr.Len(), n)
	}
	return r
}

// BenchmarkWaterfallView10k draws the waterfall of 10 000 requests at
// 120×35, the selection in the middle of the run: View draws the rows in
// sight, never the history.
func BenchmarkWaterfallView10k(b *testing.B) {
	r := tenThousand(b)
	m := New(wire.IntID(5000)).Layout(r.env(), 120, 35)
	env := r.env()
	if v := m.View(env, 120, 35); !strings.Contains(v, "5000 tools/call echo") {
		b.Fatalf("the selection is not drawn:\n%s", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View(env, 120, 35)
	}
}

// BenchmarkWaterfallLayout10k is Layout's cost once the 10 000 are known
// (the root calls it after every update).
func BenchmarkWaterfallLayout10k(b *testing.B) {
	r := tenThousand(b)
	m := New(wire.IntID(5000)).Layout(r.env(), 120, 35)
	env := r.env()
	b.ReportAllocs()
	for b.Loop() {
		m = m.Layout(env, 120, 35)
	}
}

// TestViewCostIsOfTheRowsInSight: drawing 10 000 requests costs about
// what drawing 100 does (within a generous factor, for a noisy machine).
func TestViewCostIsOfTheRowsInSight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10 000 requests")
	}
	cost := func(r *run) time.Duration {
		m := New(wire.ID{}).Layout(r.env(), 120, 35)
		env := r.env()
		best := time.Hour
		for range 5 {
			start := time.Now()
			for range 20 {
				_ = m.View(env, 120, 35)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small := newRun(t, session.DefaultConfig())
	for i := range 100 {
		req := small.call(i*10, "echo", session.RequestOptions{})
		small.done(i*10+50, req)
	}
	big := cost(tenThousand(t))
	if base := cost(small); big > 10*base {
		t.Errorf("View of 10 000 requests took %v, of 100 %v: it walks the history", big, base)
	}
}
