package look

import (
	"bytes"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"inflight/wire"
)

// HorizontalStep is how far ←/→ (and the wheel tilted) scroll a payload
// whose long lines are cut.
const HorizontalStep = 8

// WheelRows is how many rows one notch of the mouse wheel scrolls.
const WheelRows = 3

// PrettyJSON indents JSON for reading and renders it inert through block;
// invalid JSON is shown as it is (sanitised). Indentation is bounded: a
// hostile answer nested thousands deep would otherwise grow quadratically
// on every frame.
func PrettyJSON(raw []byte, block func(string) string) string {
	var out bytes.Buffer
	if err := wire.IndentBounded(&out, raw, "", "  ", 24); err != nil {
		return block(string(raw))
	}
	return block(out.String())
}

// PagerLines is s as the payload views lay it out: wrapped to width, or,
// with the lines cut (chop), as it is for the viewport to cut.
func PagerLines(s string, width int, chop bool) []string {
	if chop {
		return strings.Split(s, "\n")
	}
	return WrapLines(s, width)
}

// WrapLines cuts s into lines of at most width cells. Long errors and long
// JSON strings wrap rather than run off the edge (the cause is usually at
// the end of an error message). The cut is the viewport's own soft wrap,
// done once here: with SoftWrap the viewport measures every line of its
// content on every frame, which for a 1 MB payload took 30–50 ms a frame
// (BenchmarkViewDetail).
func WrapLines(s string, width int) []string {
	lines := strings.Split(s, "\n")
	if width <= 0 {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, line := range lines {
		w := ansi.StringWidth(line)
		if w <= width {
			out = append(out, line)
			continue
		}
		// One pass over the line (cutting it piece by piece rescans it
		// from the start for every piece: quadratic in a long line), at
		// spaces and hyphens: a word cut in two ("complet|ed") reads as
		// two words. A word wider than the line is cut where it must be.
		wrapped := ansi.Wrap(line, width, "")
		if first, _, _ := strings.Cut(wrapped, "\n"); strings.TrimSpace(ansi.Strip(first)) == "" {
			// The line's first word is wider than the line (a long JSON
			// string, say): cut it after its indentation rather than
			// leave the indentation alone on a line.
			wrapped = ansi.Hardwrap(line, width, true)
		}
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// ClipRunes cuts s to n runes, the last an ellipsis when it was longer.
func ClipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
