package waterfall

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"inflight/session"
	"inflight/ui/look"
)

// MethodStats is the latency of one method over the requests history
// keeps (a task's own requests left out: they are its task's).
type MethodStats struct {
	// Method is the method; All marks instead the line that sums every
	// method (Method is then "").
	Method string
	All    bool
	// Count is how many requests of the method there are, in flight
	// included; Answered how many of them the server answered in time
	// (completed, failed, input required), the ones latency is taken of.
	Count, Answered int
	// P50, P95 and Max are the latency of the answered ones, from when
	// each was created to its answer (its elapsed time). A percentile is
	// the nearest rank: the smallest latency that at least that share of
	// them took no longer than (no interpolation). Zero when none was
	// answered.
	P50, P95, Max time.Duration
	// Cancelled counts the requests cancelled for any reason but a
	// timeout (by the user, the host, a shutdown), whatever came of it;
	// TimedOut those a timeout cancelled or ended.
	Cancelled, TimedOut int
	// Late counts the requests with late traffic flagged: a response or
	// progress after the cancel that did not cross it in flight.
	Late int
}

// Summary is the latency of each method of t's requests, by method name;
// with requests of more than one method, a last line (All) sums them. It only reads the tracker, so a live run and a replay alike.
func Summary(t *session.Tracker) []MethodStats {
	type acc struct {
		s    MethodStats
		lats []time.Duration
	}
	by := map[string]*acc{}
	all := &acc{s: MethodStats{All: true}}
	for i := 0; i < t.Len(); i++ {
		r := t.At(i)
		if r.Role != session.RoleNone {
			continue
		}
		a := by[r.Method]
		if a == nil {
			a = &acc{s: MethodStats{Method: r.Method}}
			by[r.Method] = a
		}
		for _, a := range []*acc{a, all} {
			a.s.count(r)
			if answered(r) {
				a.lats = append(a.lats, r.Elapsed(r.Ended))
			}
		}
	}
	out := make([]MethodStats, 0, len(by)+1)
	for _, a := range by {
		a.s.latencies(a.lats)
		out = append(out, a.s)
	}
	slices.SortFunc(out, func(a, b MethodStats) int { return strings.Compare(a.Method, b.Method) })
	if len(out) > 1 {
		all.s.latencies(all.lats)
		out = append(out, all.s)
	}
	return out
}

// answered reports whether r has a latency: the server answered it in
// time. A cancelled or timed-out request's time measures the cancel, and
// one in flight has no answer yet.
func answered(r *session.Request) bool {
	switch r.State {
	case session.StateCompleted, session.StateFailed, session.StateInputRequired:
		return !r.Ended.IsZero()
	}
	return false
}

// count adds r to the counts.
func (s *MethodStats) count(r *session.Request) {
	s.Count++
	timedOut := r.State == session.StateTimedOut
	if c := r.Cancel; c != nil {
		if c.Cause == session.CauseTimeout {
			timedOut = true
		} else {
			s.Cancelled++
		}
	}
	if timedOut {
		s.TimedOut++
	}
	l := &r.Late
	if l.Response && !l.Crossed || l.ProgressAfterCancel > 0 || l.NotificationsAfterCancel > 0 {
		s.Late++
	}
}

// latencies sets the percentiles of lats (which it sorts).
func (s *MethodStats) latencies(lats []time.Duration) {
	s.Answered = len(lats)
	if len(lats) == 0 {
		return
	}
	slices.Sort(lats)
	s.P50, s.P95, s.Max = Percentile(lats, 50), Percentile(lats, 95), lats[len(lats)-1]
}

// Percentile is the p-th percentile (0 < p ≤ 100) of sorted by the
// nearest rank: the value at rank ⌈p·n/100⌉ (1-based), the smallest that
// at least p% of the values are at most. Zero for no values.
func Percentile(sorted []time.Duration, p int) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100
	return sorted[min(max(rank, 1), n)-1]
}

// statsCache is the summary as Layout last computed it, and what it was
// computed from: the history and the tracker's counts, which change with
// every request's fate, cancel, flag and eviction.
type statsCache struct {
	key   statsKey
	stats []MethodStats
}

type statsKey struct {
	t      *session.Tracker
	n      int
	counts session.Counts
}

func statsKeyOf(t *session.Tracker) statsKey {
	return statsKey{t: t, n: t.Len(), counts: t.Counts()}
}

// summaryColumns are the summary's columns after the method's, each with
// its heading (a glyph with the words, never colour alone) and width.
var summaryColumns = []struct {
	head  string
	width int
}{{"N", 5}, {"P50", 7}, {"P95", 7}, {"MAX", 7}, {"⊗ CANCEL", 8}, {"◷ TIMEOUT", 9}, {"⚑ LATE", 6}}

// summaryLines draws stats as a table in width cells, under a line that
// says what it measures; at most height lines (the last methods go
// first, the "all" line is kept). line makes a method safe for the
// terminal (a host's request names its own).
func summaryLines(st look.Styles, line func(string) string, stats []MethodStats, width, height int) []string {
	fixed := 0
	for _, c := range summaryColumns {
		fixed += c.width + 1
	}
	methodW := max(8, width-2-fixed)
	heads := []string{look.Fit("METHOD", methodW)}
	for _, c := range summaryColumns {
		heads = append(heads, look.FitLeft(c.head, c.width))
	}
	lines := []string{
		look.Fit(st.Title.Render("latency per method")+st.Dim.Render(" · created → answer, answered in time · p50/p95 nearest rank"), width),
		st.ColumnHeader.Render(look.Fit("  "+strings.Join(heads, " "), width)),
	}
	if len(stats) == 0 {
		return append(lines, st.Dim.Render(look.Fit("  no requests yet", width)))
	}
	rows := stats
	if room := height - len(lines); room < len(rows) {
		rows = rows[:0:0]
		if room > 1 {
			rows = append(rows, stats[:room-1]...)
		}
		if room > 0 {
			rows = append(rows, stats[len(stats)-1])
		}
	}
	for _, s := range rows {
		lines = append(lines, look.Fit("  "+summaryRow(st, line, s, methodW), width))
	}
	return lines
}

// summaryRow is one method's line.
func summaryRow(st look.Styles, line func(string) string, s MethodStats, methodW int) string {
	lat := func(d time.Duration) string {
		if s.Answered == 0 {
			return "—"
		}
		return look.Dur(d)
	}
	count := func(n int, style func(...string) string) string {
		if n == 0 {
			return st.Dim.Render("·")
		}
		return style(fmt.Sprint(n))
	}
	method := line(s.Method)
	if s.All {
		method = st.Bold.Render("all methods")
	}
	cells := []string{look.Fit(method, methodW), fmt.Sprint(s.Count), lat(s.P50), lat(s.P95), lat(s.Max),
		count(s.Cancelled, st.Cancelled.Render), count(s.TimedOut, st.TimedOut.Render), count(s.Late, st.Flag.Render)}
	out := cells[0]
	for i, c := range cells[1:] {
		out += " " + look.FitLeft(c, summaryColumns[i].width)
	}
	return out
}
