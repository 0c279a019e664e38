package sdkpeer_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/sdkpeer"
)

// What a client must know to judge "crossed in flight" (issue 9): a go-sdk
// or mcp-go server cancelled at step 1 of 6 answers "context canceled"
// after it has read the cancel — its own log says so, with a time between
// the cancel's write and the answer's arrival — and that answer comes back
// about one round trip after the cancel was written, because it IS a round
// trip: the cancel goes over, the server reacts, the answer comes back.
//
// Measured with raw JSON-RPC on loopback stdio, 2 shared vCPUs under load
// (load average 3-4), 2026-12-01, -benchtime 2000x (BenchmarkRoundTrip,
// BenchmarkCancelToAnswer; min / p50 / p99 in µs; a run at 1000x on a
// quieter machine gave the same minima and p50s within 20 µs):
//
//	round trip, after the session is open   gosdk           mcpgo
//	  legacy ping                           15 /  53 / 329   22 / 51 / 159
//	  modern ping with _meta (-32601)       24 /  64 / 341   35 / 71 / 166
//	  modern bare ping (no _meta, {})       16 /  57 / 348   20 / 59 / 151
//	  modern server/discover                31 /  86 / 368   40 / 77 / 210
//	cancel written → answer read
//	  legacy                                27 /  74 / 380   19 / 62 / 156
//	  modern                                29 /  68 / 378   19 / 57 / 164
//
// The lesson for the definition: a reaction to a cancel is as quick as the
// quickest ping. On go-sdk it never beat the quickest of 200 round trips on
// its connection (0 of 800 cancels); on mcp-go, which cancels from its read
// loop and answers from a worker already waiting on the context, 0-3 % of
// cancels (up to 6 of 200) were answered 0.1-1.3 µs sooner than the quickest
// of 200 round trips on the same connection. So "answer within the minimum
// round trip after the cancel" does not prove crossing: it rules out a
// reaction only with a margin. What is certain is the order the server's
// own log gives, and that no reaction can beat the pipe's two transits,
// which are less than a round trip; this test asserts half the quickest
// round trip as that bound, and logs how many answers fell under the whole.
func TestCancelledAnswerIsAReaction(t *testing.T) {
	const (
		pings  = 20 // per probe; the quickest is the bound
		trials = 3  // cancels per connection
	)
	for _, name := range sdkpeer.Names {
		for _, era := range eras {
			t.Run(name+"/"+era, func(t *testing.T) {
				c := startPeer(t, name, era)
				rtt := c.minRoundTrip(pings)
				under := 0
				for i := range trials {
					tr := c.cancelAtFirstStep()
					if !strings.Contains(string(tr.answer.raw), "context canceled") {
						t.Errorf("trial %d: the answer is not the context's error: %s", i, tr.answer.raw)
					}
					// The server saw the cancel after it was written and
					// before its answer arrived: the answer is a reaction.
					// (Its log has microseconds; the cancel's time is
					// truncated to match.)
					var seen time.Time
					waitFor(t, func() (ok bool) { seen, ok = sdkpeer.CancelSeenAt(c.stderr.String(), tr.id); return ok },
						"the peer to log the cancel of %s", tr.id)
					if seen.Before(tr.written.Truncate(time.Microsecond)) || seen.After(tr.answer.at) {
						t.Errorf("trial %d: the peer saw the cancel at %s, outside [written %s, answer read %s]", i,
							seen.Format(stamp), tr.written.UTC().Format(stamp), tr.answer.at.UTC().Format(stamp))
					}
					// A reaction needs the cancel to go over and the answer
					// to come back: two transits of the pipe, which are
					// less than a round trip but not less than half the
					// quickest one (a ping adds only its own handling).
					// Scheduling can only make an answer later. Whether it
					// beat the whole quickest round trip is logged, not
					// asserted: on mcp-go it sometimes does, by a hair.
					if tr.delay < rtt/2 {
						t.Errorf("trial %d: %v, sooner than half the quickest round trip %v", i, tr, rtt)
					}
					if tr.delay < rtt {
						under++
					}
					t.Logf("trial %d: quickest round trip %.1f µs; %v", i, float64(rtt)/1e3, tr)
				}
				if under > 0 {
					t.Logf("%d of %d answers came sooner than the quickest round trip (%.1f µs), though each was a reaction",
						under, trials, float64(rtt)/1e3)
				}
			})
		}
	}
}

// stamp shows a time to the microsecond.
const stamp = "15:04:05.000000"

// waitFor polls cond for up to waitLimit.
func waitFor(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+format, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkRoundTrip: the loopback round trip of a plain request to a real
// SDK server over stdio, from the start of the write to the reading of the
// answer; one probe per op, after the session is open (so the server's
// start-up is not in it).
//
//	go test -run '^$' -bench RoundTrip -benchtime 2000x ./internal/testkit/sdkpeer/
//
// The figures are in the table above TestCancelledAnswerIsAReaction.
func BenchmarkRoundTrip(b *testing.B) {
	for _, name := range sdkpeer.Names {
		for _, era := range eras {
			c := startPeer(b, name, era)
			probes := c.probes()
			kinds := make([]string, 0, len(probes))
			for k := range probes {
				kinds = append(kinds, k)
			}
			slices.Sort(kinds)
			for _, kind := range kinds {
				p := probes[kind]
				b.Run(name+"/"+era+"/"+kind, func(b *testing.B) {
					var samples []time.Duration
					for b.Loop() {
						samples = append(samples, c.roundTrip(p[0], p[1]))
					}
					reportLatency(b, samples)
				})
			}
		}
	}
}

// BenchmarkCancelToAnswer: how soon after notifications/cancelled a real
// SDK server's answer ("context canceled") arrives, from the start of the
// cancel's write to the reading of the answer; one slow call cancelled at
// step 1 of 6 per op, on one connection.
//
//	go test -run '^$' -bench CancelToAnswer -benchtime 500x ./internal/testkit/sdkpeer/
func BenchmarkCancelToAnswer(b *testing.B) {
	for _, name := range sdkpeer.Names {
		for _, era := range eras {
			b.Run(name+"/"+era, func(b *testing.B) {
				c := startPeer(b, name, era)
				var samples []time.Duration
				for b.Loop() {
					samples = append(samples, c.cancelAtFirstStep().delay)
				}
				reportLatency(b, samples)
			})
		}
	}
}

// reportLatency reports the p50 and p99 of samples in µs, and the quickest.
func reportLatency(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(q float64) time.Duration { return samples[min(len(samples)-1, int(q*float64(len(samples))))] }
	b.ReportMetric(float64(samples[0])/1e3, "min-µs")
	b.ReportMetric(float64(at(0.50))/1e3, "p50-µs")
	b.ReportMetric(float64(at(0.99))/1e3, "p99-µs")
	b.ReportMetric(0, "ns/op") // the per-op time includes the test's own waits; the percentiles are the figures
}
