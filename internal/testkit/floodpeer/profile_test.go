//go:build floodprofile

package floodpeer_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"inflight/call"
	"inflight/internal/testkit/floodpeer"
	"inflight/internal/testkit/testbin"
	"inflight/runner"
	"inflight/target"
)

// BenchmarkCallInProcess runs what `inflight call --tool flood` runs
// (call.Run, the headless path) inside the test binary against the real
// peer process, so that -cpuprofile sees the client's side only. Its cases:
// json (--json, no live output), live (the plain report, progress lines at
// most ten a second, as on a pipe) and trace (--json --trace FILE). It sits
// behind a build tag because call.Run may still move (issue 9 split check/
// into runner/ and call/): the default build must not break when it does;
// retarget the one call below then.
//
//	go test -tags floodprofile -run '^$' -bench 'CallInProcess/json' -benchtime 3x \
//	    -cpuprofile /tmp/call.cpu -o /tmp/floodpeer.test ./internal/testkit/floodpeer/
//	go tool pprof -top -cum /tmp/floodpeer.test /tmp/call.cpu
//
// What the profile said, 2026-12-01 (1 000 000 notifications, 3 runs;
// in process 1 292 ns/notification, as the real binary's 1 270-1 400):
// the time is NOT above the engine. Two goroutines share the work on two
// cores; the client's stdout reader is busy the whole run and sets the
// pace, the headless loop idles most of it. Share of CPU samples, json:
//
//	76 %  client.(*stdioTransport).readStdout, the reader (critical path)
//	        33 %  wire.Decode: json.Valid of the line 22 %, envelope scan 7 %
//	        28 %  wire.DecodeProgress: json.Valid of the params AGAIN 14 %,
//	              member walk and number parsing 14 %
//	         5 %  emit (channel send, never blocked: the loop keeps up)
//	         4 %  time.Now per line; 2 % line reading
//	16 %  check.(*conn).wait, the headless loop
//	         6.4 % time.Timer Reset + Stop per event
//	         4.5 % apply: Tracker.Apply 3.4 %, callRun.observe 0.8 %
//	               (the run.shown copy 0.6 %)
//	         3.2 % select; 1.3 % time.Now
//	 0 %  traceChanges (returns at once without --trace)
//	 8 %  runtime, GC
//
// live (the plain report, progress lines ≤ 10/s): the same within a point;
// the live line is 0.2 %. trace (--trace, 200 000 notifications, 3.3 µs
// each): trace.(*Writer).Event 54 % — trace.FromEvent 35 % decodes the
// event's message three more times (json.Valid in setMessage, wire.Decode
// in Record.Message, DecodeProgress in messageID) although the event
// carries it decoded, and encoding/json's Encoder 15 % — traceChanges 3 %;
// the loop becomes the critical path.
//
// So for call ≤ 1.5× the minimal client (≈ 690 ns here) the reader must
// lose about half its ~1 300 ns: the second json.Valid is ~250 ns of it.
//
// Profiled again after the split (call.Run), 2026-12-01: 1 780 ns in
// process, json.Valid alone 36 % (1.67 s of checkValid), DecodeProgress 28 %,
// time.Now 6.7 %. What changed, each where the comment says why:
//
//   - wire: one validation per line, by the walk that extracts the members
//     (validObject), and a progress notification's params read in that same
//     walk (DecodeLine), not validated or walked again; integers read
//     without ParseFloat; no allocation for common method names.
//   - client: the line is copied once (the event's Raw, which the message
//     aliases), the clock read once per read() instead of per line.
//   - runner: Wait moves its timer only when the next deadline comes
//     earlier and takes ready events without the four-channel select.
//   - trace: records built from the event's decoded message and written by
//     a hand encoder (a traced line 2.1 µs → 0.25 µs, 8 → 1 allocations).
//
// After, json: 530-580 ns/notification in process. The reader is still the
// critical path (68 %): DecodeLine 41 % (the walk 24 %, reading the
// progress members 9 %, the token 5 %), the channel send 14 % (its lock,
// contended by the loop's receive: one handoff per event is what is left),
// reading lines 7 %, the copy 5 %. The loop is 23 %, the tracker's Apply
// 5 % of it. trace (200 000): 3.3 µs → 0.79 µs per notification; the
// loop is then the critical path, trace.(*Writer).Event 37 %.
func BenchmarkCallInProcess(b *testing.B) {
	n := floodCount(b)
	peer := testbin.Build(b, "inflight/internal/testkit/floodpeer/peer")
	params, err := runner.ToolCallParams(floodpeer.Tool, []byte(`{"count":`+strconv.Itoa(n)+`}`))
	if err != nil {
		b.Fatal(err)
	}
	base := call.Options{Target: target.Target{Command: peer}, Method: "tools/call", Params: params}
	for _, tc := range []struct {
		name string
		opts func(o *call.Options, dir string)
	}{
		{"json", func(o *call.Options, _ string) { o.JSON = true }},
		{"live", func(o *call.Options, _ string) { o.Live = io.Discard }},
		{"trace", func(o *call.Options, dir string) { o.JSON, o.TracePath = true, filepath.Join(dir, "trace.jsonl") }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				var out bytes.Buffer
				o := base
				tc.opts(&o, dir)
				if code := call.Run(context.Background(), o, &out, io.Discard); code != 0 {
					b.Fatalf("call.Run exited %d:\n%s", code, out.String())
				}
				if o.JSON {
					checkReport(b, out.Bytes(), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(n), "ns/notification")
		})
	}
}
