package floodpeer_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/floodpeer"
	"inflight/internal/testkit/testbin"
)

// EnvCount sets how many notifications BenchmarkCallEndToEnd floods with;
// a quick run uses fewer: FLOODPEER_N=100000.
const EnvCount = "FLOODPEER_N"

// floodCount is the million unless EnvCount says otherwise.
func floodCount(b *testing.B) int {
	n := 1_000_000
	if s := os.Getenv(EnvCount); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("%s=%q: want a positive count", EnvCount, s)
		}
		n = v
	}
	return n
}

// BenchmarkCallEndToEnd is issue 9's speed target: `inflight call` against
// the flood peer, process start to exit, beside the minimal client
// (minimal/: read, json.Valid, check the token, count) against the same
// peer in the same run. Each op runs the minimal client once, then
// `inflight call --json` once and `inflight call` (the plain report on a
// pipe) once; it reports ns per notification of each and the ratios. The
// target: call ≤ 1.5× minimal.
//
//	go test -run '^$' -bench CallEndToEnd -benchtime 3x ./internal/testkit/floodpeer/
//	FLOODPEER_N=100000 go test -run '^$' -bench CallEndToEnd -benchtime 3x ./internal/testkit/floodpeer/
//
// Baseline, 2026-12-01, 2 shared vCPUs (Go 1.26), 1 000 000 notifications,
// -benchtime 3x, two runs: minimal 452-467 ns/notification (0.46 s);
// call --json 1 272-1 405 ns (1.3-1.4 s) → 2.8-3.0×; plain call
// 1 245-1 275 ns → 2.7-2.8×. The target (≤ 1.5×) is not met. The ratio
// needs a quiet machine: with a test running beside it the minimal client
// (two single-threaded processes) slowed to 1 459 ns and the ratio fell to
// 1.0-1.1×, which proves nothing. The 6.6 s vs 1.7 s came from
// another machine or build; the ratio is what to hold. With --trace the
// run takes ~13 s (a 175 MB trace).
//
// The profile (profile_test.go, BenchmarkCallInProcess) puts the time in
// the client's stdout reader, on the critical path, not in the headless
// loop: see the figures there.
//
// After the changes that profile led to, 2026-12-01, same machine, base
// and new builds interleaved, load average 1.6-4.1 from other work (no
// quieter window came): minimal 480-502 ns; call --json 534-721 ns →
// 1.11-1.44×; plain call 593-663 ns → 1.24-1.35×. The build before them,
// in the same series: call --json 1 793-2 195 ns → 3.2-4.3×.
func BenchmarkCallEndToEnd(b *testing.B) {
	if testing.Short() {
		b.Skip("floods a million notifications through real processes; not in -short")
	}
	n := floodCount(b)
	inflight := testbin.Build(b, "inflight")
	peer := testbin.Build(b, "inflight/internal/testkit/floodpeer/peer")
	minimal := testbin.Build(b, "inflight/internal/testkit/floodpeer/minimal")
	args := `{"count":` + strconv.Itoa(n) + `}`
	callArgs := []string{"call", "--tool", floodpeer.Tool, "--args", args}

	var tMin, tJSON, tPlain time.Duration
	for b.Loop() {
		tMin += run(b, exec.Command(minimal, "-n", strconv.Itoa(n), "--", peer), func(out []byte) {
			if strings.TrimSpace(string(out)) != strconv.Itoa(n) {
				b.Fatalf("minimal printed %q, want %d", out, n)
			}
		})
		tJSON += run(b, exec.Command(inflight, append(callArgs, "--json", "--", peer)...), func(out []byte) {
			checkReport(b, out, n)
		})
		tPlain += run(b, exec.Command(inflight, append(callArgs, "--", peer)...), func(out []byte) {
			if !bytes.Contains(out, []byte("progress    "+strconv.Itoa(n)+" notifications")) {
				b.Fatalf("inflight call's report does not count %d notifications:\n%s", n, out)
			}
		})
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(n) }
	b.ReportMetric(per(tMin), "minimal-ns/notification")
	b.ReportMetric(per(tJSON), "call-json-ns/notification")
	b.ReportMetric(per(tPlain), "call-ns/notification")
	b.ReportMetric(float64(tJSON)/float64(tMin), "call-json/minimal")
	b.ReportMetric(float64(tPlain)/float64(tMin), "call/minimal")
	b.ReportMetric(0, "ns/op") // three processes per op; the per-notification figures are the result
}

// run times cmd from its start to its exit and hands its stdout to check.
func run(b *testing.B, cmd *exec.Cmd, check func([]byte)) time.Duration {
	b.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\nstderr:\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	check(stdout.Bytes())
	return took
}

// checkReport fails b unless the --json report is a completed call that
// counted n notifications.
func checkReport(b *testing.B, out []byte, n int) {
	b.Helper()
	var rep struct {
		State    string `json:"state"`
		Progress struct {
			Count int `json:"count"`
		} `json:"progress"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.State != "completed" || rep.Progress.Count != n {
		b.Fatalf("inflight call --json: state %q, %d notifications (want completed, %d), err %v:\n%.2000s",
			rep.State, rep.Progress.Count, n, err, out)
	}
}

// BenchmarkFloodPeer: what the peer itself costs per notification, into
// io.Discard and through a real pipe drained by a reader that does nothing
// else, so the end-to-end figures can be seen to be the client's.
//
//	go test -run '^$' -bench FloodPeer ./internal/testkit/floodpeer/
func BenchmarkFloodPeer(b *testing.B) {
	b.Run("discard", func(b *testing.B) {
		b.SetBytes(110)
		if err := floodpeer.Flood(io.Discard, []byte("1"), b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("pipe", func(b *testing.B) {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		drained := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, r)
			drained <- err
		}()
		b.SetBytes(110)
		err = floodpeer.Flood(w, []byte("1"), b.N)
		_ = w.Close()
		if derr := <-drained; err == nil {
			err = derr
		}
		_ = r.Close()
		if err != nil {
			b.Fatal(err)
		}
	})
}
