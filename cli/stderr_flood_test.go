package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/hostile"
	"inflight/trace"
)

// A server that writes StderrFloodLines lines to stderr: `call --trace`
// keeps the first lines, a note saying how many were left out and the
// last ones (issue 14: a server that wrote 2 GB to stderr made a 2.26 GB
// trace that replay could not read), and replay reads it.
func TestTraceBoundsAStderrFlood(t *testing.T) {
	exe, env, err := hostile.Command(hostile.StderrFlood, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	args := []string{"call", "--tool", hostile.ToolName, "--json", "--trace", path}
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	start := time.Now()
	code, _, stderr := inflight(t, append(args, "--", exe)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("the call took %s", time.Since(start).Round(time.Millisecond))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, bad, err := trace.ReadAll(bytes.NewReader(data))
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	kept, dropped := 0, 0
	for _, r := range recs {
		switch {
		case r.Event == trace.EventStderr:
			kept++
		case r.Event == trace.EventNote && r.Dropped > 0:
			dropped += r.Dropped
		}
	}
	// The peer's own "started" and "exiting" lines come beside the flood.
	if kept > trace.StderrHeadLines+3*trace.StderrTailLines || kept+dropped < hostile.StderrFloodLines {
		t.Errorf("%d stderr lines kept and %d counted as left out, for %d written", kept, dropped, hostile.StderrFloodLines)
	}
	t.Logf("the trace: %d bytes, %d stderr lines kept, %d counted as left out", len(data), kept, dropped)
	if len(data) > 1<<20 {
		t.Errorf("the trace is %d bytes", len(data))
	}
	s := string(data)
	for _, want := range []string{"stderr flood line 1 of", fmt.Sprintf("stderr flood line %d of", hostile.StderrFloodLines), "left out here"} {
		if !strings.Contains(s, want) {
			t.Errorf("the trace lacks %q", want)
		}
	}
	code, out, rerr := inflight(t, "replay", path)
	if code != 0 || !strings.Contains(out, "left out here") || !strings.Contains(out, "more stderr lines") {
		t.Errorf("replay exit %d: %s\n%s", code, rerr, out)
	}
}
