package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/trace"
	"inflight/ui"
)

// The UI names an export by the second, so two presses of e within one
// second name the same file: the second export gets a numbered name, and
// no export ever overwrites another.
func TestWriteTraceNeverOverwrites(t *testing.T) {
	start := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	snap := ui.Snapshot{Start: start, Entries: []session.LogEntry{
		{Time: start.Add(time.Millisecond), Dir: session.DirIn, Kind: event.Stderr, Text: "hello"},
	}}
	dir := t.TempDir()
	path := filepath.Join(dir, "inflight-trace-20260801-120000.jsonl")
	var want bytes.Buffer
	if err := trace.WriteEntries(&want, snap.Entries, 0, snap.Start, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"inflight-trace-20260801-120000.jsonl", "inflight-trace-20260801-120000-2.jsonl", "inflight-trace-20260801-120000-3.jsonl"} {
		got, err := writeTrace(path, snap, nil)
		if err != nil || got != filepath.Join(dir, name) {
			t.Fatalf("wrote %q (%v), want %s", got, err, name)
		}
		data, err := os.ReadFile(got)
		if err != nil || !bytes.Equal(data, want.Bytes()) {
			t.Errorf("%s holds %q (%v), want %q", name, data, err, want.Bytes())
		}
	}
	// A failure that is not a taken name is reported, not retried.
	if _, err := writeTrace(filepath.Join(dir, "no-such-dir", "t.jsonl"), snap, nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
