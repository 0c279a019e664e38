package replay

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"inflight/internal/testkit/tracerun"
)

// BenchmarkReplayText1M is the text report of the million-line trace that
// source's BenchmarkReplayOpen1M opens for the TUI (tracerun.Flood): the
// same file, read and printed.
func BenchmarkReplayText1M(b *testing.B) {
	path := filepath.Join(b.TempDir(), "flood.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := tracerun.Flood(f, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), 1_000_000); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.ResetTimer()
	for b.Loop() {
		if code := File(path, Options{}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
