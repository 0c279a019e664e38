package source

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"inflight/internal/testkit/tracerun"
	"inflight/session"
)

// floodFile is a trace of a million lines (tracerun.Flood), written once
// into a temporary file.
func floodFile(b *testing.B) (*os.File, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "flood.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := tracerun.Flood(f, t0, 1_000_000); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	return f, st.Size()
}

// peakHeap samples the live heap every few milliseconds until stop, and
// returns the largest it saw.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var peak uint64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// BenchmarkReplayOpen1M opens a million-line trace (a recorded flood) and
// reports the peak heap while it did.
func BenchmarkReplayOpen1M(b *testing.B) {
	f, size := floodFile(b)
	defer f.Close()
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
		stop := peakHeap()
		cpu := cpuTime()
		rp, err := OpenReplay(f, size, ReplayOptions{Start: t0, Tracker: session.DefaultConfig()})
		cpu = cpuTime() - cpu
		peak := stop()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(rp.Len()), "items")
		b.ReportMetric(float64(len(rp.checks)), "checkpoints")
	}
}

// BenchmarkReplaySeek1M jumps to moments all over a million-line trace,
// each far from the last (the slowest case: back to a checkpoint and a
// whole spacing read again), and to its flags.
func BenchmarkReplaySeek1M(b *testing.B) {
	f, size := floodFile(b)
	defer f.Close()
	rp, err := OpenReplay(f, size, ReplayOptions{Start: t0, Tracker: session.DefaultConfig()})
	if err != nil {
		b.Fatal(err)
	}
	span := rp.End().Sub(rp.Start())
	i := 0
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		// Golden-ratio steps cover the run evenly, back and forth.
		i++
		frac := float64(i) * 0.6180339887498949
		frac -= float64(int(frac))
		began := time.Now()
		rp.SeekTime(rp.Start().Add(time.Duration(frac * float64(span))))
		took = append(took, time.Since(began))
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
	b.ReportMetric(ms(took[len(took)-1]), "worst-ms")
}
