package list

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/ui/look"
)

// columns is the list layout for one width: columns are dropped, not
// wrapped, as the terminal narrows.
type columns struct {
	id, request, state, elapsed, timeout, detail int
	method                                       bool // show the method next to the target
}

// minOutcome is the least the PROGRESS / OUTCOME column keeps before the
// REQUEST column may grow: it is where the cancel and the late flags are
// told.
//
// Below 100 columns it keeps less (29 cells at 80), so that the REQUEST
// column shows 16 cells of a long tool name: at 10, rows of different
// tools read the same ("simulate-…", "trigger-l…"). The outcome's parts
// are laid out by priority (buildCell), so a narrower column loses the
// words that matter least first.
func minOutcome(width int) int {
	if width < 100 {
		return max(29, width*2/5-3)
	}
	return max(35, width*2/5)
}

// maxRequestColumn bounds the REQUEST column on wide terminals.
const maxRequestColumn = 48

// maxIDColumn bounds the ID column: 12 cells, room for a string ID such as
// "inflight-12" (as inflight call and many SDKs send them) beside the
// outcome; 8 below 100 columns, where the outcome needs the room. A longer
// ID is cut from the left (idCell), keeping the tail that tells IDs apart.
func maxIDColumn(width int) int {
	if width < 100 {
		return 8
	}
	return 12
}

// idCell is a request's ID in a column w cells wide: whole when it fits,
// else its tail after "…" (…ight-12"), since IDs of one sender differ at
// their end.
func idCell(id string, w int) string {
	if n := lipgloss.Width(id); n > w {
		id = ansi.TruncateLeft(id, n-w+1, "…")
	}
	return look.FitLeft(id, w)
}

// layoutColumns lays the list out in width cells for IDs of idWidth
// cells (within maxIDColumn) and request labels of up to labelW cells.
func layoutColumns(width, idWidth, labelW int) columns {
	c := columns{id: min(max(idWidth, 2), maxIDColumn(width)), state: 12, elapsed: 7, timeout: 9, method: width >= 140}
	if width < 100 {
		c.timeout = 7
	}
	// The REQUEST column is as wide as its labels, within what the
	// outcome column leaves it.
	other := 2 + c.id + 1 + 1 + c.state + 1 + c.elapsed + 1 + c.timeout + 1
	c.request = min(max(labelW, 10), max(10, width-other-minOutcome(width)), maxRequestColumn)
	fixed := func() int {
		n := 2 + c.id + 1 + c.request + 1 + c.state + 1
		if c.elapsed > 0 {
			n += c.elapsed + 1
		}
		if c.timeout > 0 {
			n += c.timeout + 1
		}
		return n
	}
	// Drop columns rather than wrap, least useful first.
	if width-fixed() < 24 {
		c.elapsed = 0
	}
	if width-fixed() < 20 {
		c.request = 10
	}
	if width-fixed() < 16 {
		c.timeout = 0
	}
	c.detail = max(0, width-fixed())
	return c
}

// hostMarked is c for a view on a proxy, whose labels begin with the
// host's mark (⇄ and a space): the REQUEST column's floor keeps ten cells
// of the label itself, so that "⇄ initialize" is not cut to "⇄ initial…",
// taken from the outcome column while that keeps 24 cells.
func (c columns) hostMarked(labelW int) columns {
	const mark = 2
	want := min(max(labelW, 10), 10+mark)
	if grow := want - c.request; grow > 0 && c.detail-grow >= 24 {
		c.request += grow
		c.detail -= grow
	}
	return c
}

// columnHeader names the columns and, at its right end, says how many rows
// are hidden above and below the window ("↑ 4 more · 13 more ↓").
func (p painter) columnHeader(c columns, above, below int) string {
	return p.columnHeaderAfter("", c, above, below)
}

// columnHeaderAfter is columnHeader with lead (a merged list's SERVER)
// before the ID.
func (p painter) columnHeaderAfter(lead string, c columns, above, below int) string {
	parts := []string{"  " + lead + look.FitLeft("ID", c.id), look.Fit("REQUEST", c.request), look.Fit("STATE", c.state)}
	if c.elapsed > 0 {
		parts = append(parts, look.FitLeft("ELAPSED", c.elapsed))
	}
	if c.timeout > 0 {
		parts = append(parts, look.FitLeft("TIMEOUT", c.timeout))
	}
	if c.detail > 0 {
		parts = append(parts, look.Fit("PROGRESS / OUTCOME", c.detail))
	}
	ind := scrollIndicator(above, below)
	if ind == "" {
		return p.st.ColumnHeader.Render(look.Fit(strings.Join(parts, " "), p.width))
	}
	w := lipgloss.Width(ind)
	names := strings.TrimRight(strings.Join(parts, " "), " ")
	return p.st.ColumnHeader.Render(look.Fit(names, max(0, p.width-w-1))) + " " + p.st.Cursor.Render(ind)
}

// scrollIndicator says how many rows the window hides above and below.
func scrollIndicator(above, below int) string {
	var parts []string
	if above > 0 {
		parts = append(parts, fmt.Sprintf("↑ %d more", above))
	}
	if below > 0 {
		parts = append(parts, fmt.Sprintf("%d more ↓", below))
	}
	return strings.Join(parts, " · ")
}
