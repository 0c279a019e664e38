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

	"inflight/call"
	"inflight/check"
	"inflight/exitcode"
	"inflight/internal/testkit/tracerun"
	"inflight/session"
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

// TestReplayViewOfEveryWriter: the traces call, check and the stdio proxy
// write of runs against the demo server open in the interactive replay,
// judged again by the replay's tracker as the run judged them (given the
// run's own timeouts, which a trace does not keep); the proxy's are the
// host's requests.
func TestReplayViewOfEveryWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo server")
	}
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	callTrace, checkTrace, proxyTrace := filepath.Join(dir, "call.jsonl"), filepath.Join(dir, "check.jsonl"), filepath.Join(dir, "proxy.jsonl")
	slow := []string{"--tool", "slow", "--args", `{"seconds":1,"steps":4}`, "--cancel-after", "400ms"}
	if code, _, stderr := inflight(t, append([]string{"call", "--trace", callTrace}, slow...)...); code != exitcode.Cancelled {
		t.Fatalf("call: exit %d: %s", code, stderr)
	}
	if code, _, stderr := inflight(t, "check", "--trace", checkTrace); code != 0 {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	proxied := append([]string{"call"}, slow...)
	proxied = append(proxied, "--", exe, "proxy", "--trace", proxyTrace, "--", exe, "demo-server")
	if code, _, stderr := inflight(t, proxied...); code != exitcode.Cancelled {
		t.Fatalf("call through the proxy: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		path       string
		lateWindow time.Duration
		relayed    bool
	}{
		{callTrace, call.DefaultLateWindow, false},
		{checkTrace, check.DefaultCheckLateWindow, false},
		{proxyTrace, session.DefaultLateWindow, true},
	} {
		var status string
		var requests int
		f := &replayFlags{timeout: time.Minute, maxTimeout: 10 * time.Minute, lateWindow: tc.lateWindow, resetOnProgress: true,
			run: func(ctx context.Context, m *ui.Model) error {
				m.Init()
				m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
				lines := strings.Split(ansi.Strip(m.View().Content), "\n")
				status, requests = lines[len(lines)-2], m.Tracker().Len()
				return nil
			}}
		var stderr bytes.Buffer
		c := &cli{stdout: &bytes.Buffer{}, stderr: &stderr}
		if code := c.replayView(context.Background(), tc.path, f); code != 0 {
			t.Errorf("%s: exit %d: %s", filepath.Base(tc.path), code, stderr.String())
		}
		if strings.Contains(status, "otherwise than the trace") || requests == 0 {
			t.Errorf("%s: %d requests, status %q", filepath.Base(tc.path), requests, status)
		}
	}
}
