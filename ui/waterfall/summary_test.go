package waterfall

import (
	"strings"
	"testing"
	"time"

	"inflight/session"
	"inflight/wire"
)

// Percentile is the nearest rank: the value at rank ⌈p·n/100⌉.
func TestPercentileNearestRank(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	for _, c := range []struct {
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 95, 7 * time.Millisecond},
		{ms(1, 2), 50, 1 * time.Millisecond},          // rank 1
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},    // rank 2
		{ms(1, 2, 3, 4), 95, 4 * time.Millisecond},    // rank ⌈3.8⌉ = 4
		{ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond}, // rank ⌈2.5⌉ = 3
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 95, 19 * time.Millisecond}, // rank 19
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 100, 20 * time.Millisecond},
	} {
		if got := Percentile(c.sorted, c.p); got != c.want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", c.sorted, c.p, got, c.want)
		}
	}
}

// The summary of a known run: tools/call answered 20 times in 100ms …
// 2s (in an order that is not theirs), cancelled twice (one flagged late,
// one whose response crossed the cancel: not late), timed out once, and
// one in flight; prompts/get answered in 300, 100 and 200 ms. Only the
// answered have a latency; the others are counted.
func TestSummaryOfAKnownRun(t *testing.T) {
	r := newRun(t, session.Config{LateWindow: time.Second})
	start := 0
	for _, n := range []int{7, 3, 20, 1, 12, 5, 18, 9, 14, 2, 16, 11, 4, 19, 8, 13, 6, 17, 10, 15} {
		req := r.call(start, "echo", session.RequestOptions{})
		r.done(start+n*100, req)
		start += 10
	}
	for _, d := range []int{300, 100, 200} {
		req := r.begin(start, wire.MethodPromptsGet, `{"name":"greet"}`, session.RequestOptions{})
		r.answer(start+d, req, `{"messages":[]}`)
		start += 10
	}
	start = 3000
	late := r.call(start, "stubborn", session.RequestOptions{})
	r.cancel(start+100, late, true)
	r.done(start+900, late) // long after the signal left: late
	crossed := r.call(start, "race", session.RequestOptions{})
	r.cancel(start+200, crossed, false)
	r.done(start+210, crossed) // before the signal left: crossed
	r.cancelSent(start+220, crossed)
	r.call(start, "silent", session.RequestOptions{Timeout: time.Second})
	r.tick(start + 1000)
	r.tick(start + 2000)
	r.call(start+2100, "running", session.RequestOptions{})

	got := Summary(r.tr)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	want := []MethodStats{
		{Method: wire.MethodPromptsGet, Count: 3, Answered: 3, P50: ms(200), P95: ms(300), Max: ms(300)},
		// 24 calls, 20 answered: p50 is rank 10 (1s), p95 rank 19 (1.9s).
		{Method: wire.MethodToolsCall, Count: 24, Answered: 20, P50: ms(1000), P95: ms(1900), Max: ms(2000), Cancelled: 2, TimedOut: 1, Late: 1},
		// 23 answered: p50 rank 12 of 100ms…2s and 100, 200, 300ms is
		// 900ms; p95 rank ⌈21.85⌉ = 22, 1.9s.
		{All: true, Count: 27, Answered: 23, P50: ms(900), P95: ms(1900), Max: ms(2000), Cancelled: 2, TimedOut: 1, Late: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("Summary = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	m := New(wire.ID{})
	m, _ = r.press(m, 120, 35, "S")
	_, view := r.screenOf(m, 120, 35)
	if got := summaryLine(t, view, "tools/call"); got != "tools/call 24 1.0s 1.9s 2.0s 2 1 1" {
		t.Errorf("the tools/call line reads %q", got)
	}
	if got := summaryLine(t, view, "prompts/get"); got != "prompts/get 3 0.2s 0.3s 0.3s · · ·" {
		t.Errorf("the prompts/get line reads %q", got)
	}
	if !strings.Contains(view, "all methods") {
		t.Errorf("no line for all methods:\n%s", view)
	}
}

// A method none of whose requests was answered has no latency, and says
// so.
func TestSummaryWithoutAnswers(t *testing.T) {
	r := newRun(t, session.Config{})
	r.call(0, "slow", session.RequestOptions{})
	got := Summary(r.tr)
	if len(got) != 1 || got[0].Count != 1 || got[0].Answered != 0 || got[0].P50 != 0 || got[0].Max != 0 {
		t.Fatalf("Summary = %+v", got)
	}
	m := New(wire.ID{})
	m, _ = r.press(m, 80, 24, "S")
	_, view := r.screenOf(m, 80, 24)
	if got := summaryLine(t, view, "tools/call"); got != "tools/call 1 — — — · · ·" {
		t.Errorf("the line reads %q", got)
	}
}

// summaryLine is the summary's line of method, its cells one space apart.
func summaryLine(t *testing.T, view, method string) string {
	t.Helper()
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(l, "  "+method+" ") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	t.Fatalf("no summary line of %s in\n%s", method, view)
	return ""
}
