package look

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A long line wraps at its spaces, never inside a word that fits a line;
// a word wider than the line is cut where it must be. No line is wider
// than asked.
func TestWrapLinesAtWords(t *testing.T) {
	text := `task_status_after_terminal  task "t-1" said "working" (poll) after its terminal status "completed"`
	lines := WrapLines(text, 40)
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("a line is %d cells wide: %q", w, l)
		}
	}
	words := strings.Fields(text)
	var got []string
	for _, l := range lines {
		got = append(got, strings.Fields(l)...)
	}
	if strings.Join(got, " ") != strings.Join(words, " ") {
		t.Errorf("words were cut:\n%s", strings.Join(lines, "\n"))
	}
	long := strings.Repeat("x", 95)
	lines = WrapLines("  "+long, 40)
	if len(lines) != 3 || strings.TrimSpace(strings.Join(lines, "")) != long {
		t.Errorf("a word wider than the line: %q", lines)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("a line is %d cells wide: %q", w, l)
		}
	}
}
