package cli

import (
	"errors"
	"inflight/exitcode"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// /dev/null is a character device but no terminal: output sent there (or
// to a file) gets plain progress lines, never a bar redrawn in place.
func TestIsTerminalNotForDevNullOrFiles(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("%s taken for a terminal", os.DevNull)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file taken for a terminal")
	}
}

// A bare number is seconds, as the composer takes it: --timeout 5 is 5s.
func TestDurationFlagTakesSeconds(t *testing.T) {
	var d time.Duration
	f := &durationFlag{p: &d, positive: true}
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "0.25": 250 * time.Millisecond, "90s": 90 * time.Second, "2m": 2 * time.Minute} {
		if err := f.Set(in); err != nil || d != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"soon", "NaN", "Inf", "1e300", "-5", "0"} {
		if err := f.Set(in); err == nil {
			t.Errorf("Set(%q) accepted (%v)", in, d)
		}
	}
}

// The TUI's exit code says how it ended, as call's does: 0 after q, 4
// after Ctrl+C or a signal cancelled what was in flight, 1 on a failure.
func TestTUIExitCode(t *testing.T) {
	for _, c := range []struct {
		err         error
		interrupted bool
		want        int
	}{
		{nil, false, exitcode.Completed},
		{nil, true, exitcode.Cancelled},
		{tea.ErrInterrupted, false, exitcode.Cancelled},
		{errors.New("the terminal went away"), false, 1},
	} {
		if got := tuiExitCode(c.err, c.interrupted); got != c.want {
			t.Errorf("tuiExitCode(%v, %v) = %d, want %d", c.err, c.interrupted, got, c.want)
		}
	}
}
