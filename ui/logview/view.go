package logview

import (
	"fmt"
	"strings"

	"inflight/ui/look"
	"inflight/ui/screen"
)

// viewLog renders the protocol log: every message in and out with its time,
// direction, method and ID; violations stand out, late traffic is flagged
// and crossed traffic marked, as the tracker judged them. Only visible
// lines are rendered.
func (m *Model) viewLog(env screen.Env, width, height int) string {
	st := env.Styles
	lg := env.Tracker.Log()
	rows := height - 2
	it := m.items(env)
	from := m.start(it)
	to := min(it.n, from+rows)
	first := lg.Total() - int64(lg.Len())
	var b strings.Builder
	b.WriteString(st.ColumnHeader.Render(look.Fit(m.title(env, it, from, to), width)))
	b.WriteByte('\n')
	// The ID column is as wide as the widest ID on screen (within bounds),
	// so internal IDs and large ones are not cut to "i… ".
	whatW, idW := logColumns(width)
	for i := from; i < to; i++ {
		idW = max(idW, min(10, len(logID(lg.At(int(it.abs(i)-first)).ID))))
	}
	if m.filter.Focused() || m.filter.Value() != "" {
		b.WriteString(look.Fit(m.filter.View(), width))
	} else {
		head := "  TIME          DIR    " + look.Fit("WHAT", whatW) + " " + look.FitLeft("ID", idW) + "  MESSAGE"
		b.WriteString(st.Dim.Render(look.Fit(head, width)))
	}
	sel := m.selected(it)
	for i := from; i < to; i++ {
		b.WriteByte('\n')
		line := logLine(env, lg.At(int(it.abs(i)-first)), width, whatW, idW)
		if i == sel && !m.follow {
			// The selection shows once the user moves; following, the
			// newest row is selected without a mark.
			line = st.Cursor.Render("▌") + strings.TrimPrefix(line, " ")
		}
		b.WriteString(line)
	}
	for i := to - from; i < rows; i++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// title is the log's title line: how many entries it holds and dropped,
// what the filter matches, and which rows show once scrolled back.
func (m *Model) title(env screen.Env, it items, from, to int) string {
	lg := env.Tracker.Log()
	title := fmt.Sprintf("PROTOCOL LOG · %d entries", lg.Len())
	if dropped := lg.Total() - int64(lg.Len()); dropped > 0 {
		title += fmt.Sprintf(" (oldest %d dropped)", dropped)
	}
	if m.filter.Value() != "" {
		title += fmt.Sprintf(" · %d %s", it.n, look.CountNoun(it.n, "match", "matches"))
	}
	if !m.follow && it.n > 0 {
		title += fmt.Sprintf(" · showing %d–%d of %d (G: newest)", from+1, to, it.n)
	}
	return title
}
