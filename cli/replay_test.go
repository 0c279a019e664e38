package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/internal/testkit/tracerun"
	"inflight/ui"
)

// floodTraceFile writes a recorded run (tracerun.Flood, of about lines
// lines) to a file last written at mtime.
func floodTraceFile(t *testing.T, lines int, mtime time.Time) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := tracerun.Flood(&buf, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), lines); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

// TestReplayPipedOrTextPrintsTheTable: not on a terminal, or with
// --text, replay prints the table as it always has.
func TestReplayPipedOrTextPrintsTheTable(t *testing.T) {
	path, _ := floodTraceFile(t, 200, time.Now())
	code, plain, stderr := inflight(t, "replay", path)
	if code != 0 || !strings.Contains(plain, "request 2: tools/call flood: cancelled") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, plain)
	}
	code, text, _ := inflight(t, "replay", "--text", path)
	if code != 0 || text != plain {
		t.Errorf("--text: exit %d, and the table differs:\n%s", code, text)
	}
}

// TestReplayViewOpensTheRun: on a terminal, replay opens the interactive
// view at the end of the run, placed in time by the file's last write,
// with the scrubber; q ends it with 0.
func TestReplayViewOpensTheRun(t *testing.T) {
	mtime := time.Date(2027, 3, 4, 10, 0, 0, 0, time.Local)
	path, _ := floodTraceFile(t, 500, mtime)
	var seen string
	var model *ui.Model
	f := &replayFlags{timeout: time.Minute, maxTimeout: 10 * time.Minute, lateWindow: 5 * time.Second, resetOnProgress: true,
		run: func(ctx context.Context, m *ui.Model) error {
			m.Init()
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
			seen, model = ansi.Strip(m.View().Content), m
			return nil
		}}
	var stderr bytes.Buffer
	c := &cli{stdout: &bytes.Buffer{}, stderr: &stderr}
	if code := c.replayView(context.Background(), path, f); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"inflight · replay /", "⏸", "1× paused", "tools/list", "flood", "⊗ cancelled"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the view lacks %q:\n%s", want, seen)
		}
	}
	// The run's last line is where the file's last write put it.
	tr := model.Tracker()
	r := tr.At(tr.Len() - 1)
	if r.Ended.After(mtime) || mtime.Sub(r.Ended) > 11*time.Second {
		t.Errorf("the run ends at %v, the file was last written at %v", r.Ended, mtime)
	}
}

// TestReplayViewRefusesWhatIsNoTrace: a file that holds no trace record
// is refused, saying so, with exit 2; a cut one opens.
func TestReplayViewRefusesWhatIsNoTrace(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	_ = os.WriteFile(notes, []byte("shopping list\nmilk\n"), 0o600)
	var stderr bytes.Buffer
	c := &cli{stdout: &bytes.Buffer{}, stderr: &stderr}
	f := &replayFlags{run: func(context.Context, *ui.Model) error { t.Error("the view opened"); return nil }}
	if code := c.replayView(context.Background(), notes, f); code != 2 || !strings.Contains(stderr.String(), "is not an inflight trace") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := c.replayView(context.Background(), filepath.Join(dir, "missing.jsonl"), f); code != 2 || stderr.Len() == 0 {
		t.Errorf("a missing file: exit %d: %s", code, stderr.String())
	}
	path, data := floodTraceFile(t, 100, time.Now())
	_ = os.WriteFile(path, data[:len(data)-20], 0o600)
	opened := false
	f.run = func(ctx context.Context, m *ui.Model) error {
		m.Init()
		m.Update(tea.WindowSizeMsg{Width: 200, Height: 30})
		opened = strings.Contains(ansi.Strip(m.View().Content), "is not a trace record, skipped")
		return nil
	}
	if code := c.replayView(context.Background(), path, f); code != 0 || !opened {
		t.Errorf("a cut trace: exit %d, said where it broke %v", code, opened)
	}
}
