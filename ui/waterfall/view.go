package waterfall

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// chromeLines are the lines around the rows: the title, the axis and the
// legend.
const chromeLines = 3

// geometry splits width between the label column (the request's state,
// ID and label) and the bar's cells, a space between them.
func geometry(width int) (labelW, cells int) {
	labelW = min(max(width*3/10, 22), 40)
	return labelW, max(10, width-labelW-1)
}

// cells is the bar's width at the screen's width as Layout had it (80
// before any).
func (m Model) cells() int {
	w := m.width
	if w <= 0 {
		w = 80
	}
	_, c := geometry(w)
	return c
}

// summaryHeight is the lines the summary takes under the rows: its
// heading, column names and a line per method, within half the screen.
func summaryHeight(height, methods int, shown bool) int {
	if !shown {
		return 0
	}
	return min(max(methods, 1)+2, max(3, (height-chromeLines)/2))
}

// bodyRows is how many rows are drawn at the screen's height as Layout
// had it, with methods lines of summary.
func (m Model) bodyRows(methods int) int {
	h := m.height
	if h <= 0 {
		h = 24
	}
	return max(1, h-chromeLines-summaryHeight(h, methods, m.summary))
}

// frame is what one View draws from.
type frame struct {
	env    screen.Env
	t      *session.Tracker
	rows   *rowIndex
	a      axis
	ticks  []tick
	labelW int
	idW    int
	width  int
	method bool
	pens   *pens
	bar    *bar
	trails *trails
}

// View draws the title, the axis, the rows in sight, the summary when
// shown and the legend, in width × height. It changes nothing: what
// Layout has not built for the tracker as it is now, it builds for
// itself.
func (m Model) View(env screen.Env, width, height int) string {
	t := env.Tracker
	rows := m.rows
	if rows.key != keyOf(t) {
		rows = buildRows(t)
	}
	stats := m.stats.stats
	if m.summary && m.stats.key != statsKeyOf(t) {
		stats = Summary(t)
	}
	labelW, cells := geometry(width)
	f := &frame{env: env, t: t, rows: &rows, labelW: labelW, width: width, method: labelW >= 34, trails: m.trails}
	f.a = m.axis.place(t, env.Now, cells)
	f.ticks = f.a.ticks()
	f.pens = pensFor(m.pens, env.Styles)
	f.bar = newBar(f.a, env.Now)

	sumH := summaryHeight(height, len(stats), m.summary)
	body := max(0, height-chromeLines-sumH)
	n := rows.len(t)
	pos, ok := rows.posOf(t, m.selected)
	if !ok || m.follow {
		pos, ok = rows.newest(t)
	}
	offset := window(m.offset, pos, n, body)
	last := min(n, offset+body)
	f.idW = f.idWidth(offset, last)

	lines := make([]string, 0, height)
	lines = append(lines, f.title(m.axis.mode, offset, n-last), f.header())
	if n == 0 {
		lines = append(lines, env.Styles.Dim.Render(look.Fit("  no requests yet", width)))
	}
	var b strings.Builder
	for p := offset; p < last; p++ {
		b.Reset()
		f.row(&b, rows.at(p), ok && p == pos)
		lines = append(lines, b.String())
	}
	for len(lines) < height-sumH-1 {
		lines = append(lines, "")
	}
	if sumH > 0 {
		lines = append(lines, summaryLines(env.Styles, env.Line, stats, width, sumH)...)
	}
	lines = append(lines, f.legend())
	if len(lines) > height {
		lines = lines[:max(0, height)]
	}
	return strings.Join(lines, "\n")
}

// idWidth is the widest ID among the rows drawn (at least 2 cells, at
// most a third of the label column).
func (f *frame) idWidth(from, to int) int {
	w := 2
	for p := from; p < to; p++ {
		if row := f.rows.at(p); row.srv == nil {
			w = max(w, utf8.RuneCountInString(f.t.At(row.idx).ID.String()))
		}
	}
	return min(w, f.labelW/3)
}

// title names the screen, what a cell stands for, how the axis is placed
// and how many rows lie above and below those drawn.
func (f *frame) title(mode axisMode, above, below int) string {
	st := f.env.Styles
	where := "the whole run"
	switch mode {
	case followNow:
		where = "following now"
	case panned:
		where = "from " + tickLabel(f.a.start.Sub(f.a.origin))
	}
	left := st.Title.Render("waterfall") + st.Dim.Render(fmt.Sprintf(" · %d %s · a cell is %s · %s",
		f.rows.requests, look.CountNoun(f.rows.requests, "request", "requests"), tickLabel(f.a.per), where))
	var ind []string
	if above > 0 {
		ind = append(ind, fmt.Sprintf("↑ %d more", above))
	}
	if below > 0 {
		ind = append(ind, fmt.Sprintf("%d more ↓", below))
	}
	if len(ind) == 0 {
		return look.Fit(left, f.width)
	}
	right := strings.Join(ind, " · ")
	w := lipgloss.Width(right)
	return look.Fit(left, max(0, f.width-w-1)) + " " + st.Cursor.Render(right)
}

// header is the label column's heading and the axis's labels, each at its
// cell (the rows draw a faint line under each).
func (f *frame) header() string {
	st := f.env.Styles
	head := look.Fit("    "+look.FitLeft("ID", f.idW)+" REQUEST", f.labelW)
	axis := []rune(strings.Repeat(" ", f.a.cells))
	next := 0
	for _, t := range f.ticks {
		lbl := []rune(t.label)
		c := t.col
		if c+len(lbl) > f.a.cells {
			// The last label ends on its tick rather than go.
			c = f.a.cells - len(lbl)
		}
		if c < next || c < 0 {
			continue
		}
		copy(axis[c:], lbl)
		next = c + len(lbl) + 1
	}
	return st.ColumnHeader.Render(head) + " " + st.Dim.Render(string(axis))
}

// row draws one row into b: its label and its bar, highlighted whole when
// selected.
func (f *frame) row(b *strings.Builder, rw row, selected bool) {
	st := f.env.Styles
	f.bar.reset(f.ticks)
	var label string
	if rw.srv != nil {
		label = "      " + f.pens.paint(penQuestion, "↘") + " " + look.Fit(look.QuestionText(rw.srv.Method, rw.srv.Params, f.env.Line), f.labelW-8)
		f.bar.question(rw.srv)
	} else {
		r := f.t.At(rw.idx)
		label = f.requestLabel(r, selected)
		f.bar.request(r, f.trails.of(r.ID), f.pens)
	}
	var line strings.Builder
	line.Grow(len(label) + 4*f.a.cells + 64)
	line.WriteString(label)
	line.WriteByte(' ')
	f.bar.render(f.pens, &line)
	if selected {
		b.WriteString(st.Highlight(line.String()))
		return
	}
	b.WriteString(line.String())
}

// requestLabel is a request's label column: the selection's mark, its
// state's icon, its ID and what it is about (a host's request marked ⇄),
// in labelW cells.
func (f *frame) requestLabel(r *session.Request, selected bool) string {
	marker := "  "
	if selected {
		marker = f.pens.paint(penCursor, "▌") + " "
	}
	id := f.env.Line(r.ID.String())
	if n := utf8.RuneCountInString(id); n > f.idW {
		id = "…" + string([]rune(id)[n-f.idW+1:])
	}
	host := ""
	if r.ByHost {
		host = "⇄ "
	}
	text := look.FitLeft(id, f.idW) + " " + host + look.RequestLabel(r, f.method, f.env.Line)
	return marker + f.pens.paint(f.pens.state(r.State), look.StateLookOf(r.State).Icon) + " " + fitPlain(text, f.labelW-4)
}

// fitPlain is look.Fit for text without styling, quicker for the ASCII
// most labels are.
func fitPlain(s string, w int) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] < ' ' {
			return look.Fit(s, w)
		}
	}
	if len(s) > w {
		return s[:max(0, w-1)] + "…"
	}
	return s + strings.Repeat(" ", w-len(s))
}

// legendItems say what the bars' glyphs mean, most needed first.
var legendItems = []struct {
	glyph rune
	pen   uint8
	word  string
}{
	{fillRun, penProgress, "sent"}, {fillWindow, penWindow, "late window"}, {markCancel, penCancel, "cancel"},
	{markLateResp, penFlag, "late response"}, {markLate, penFlag, "late"}, {markCrossed, penCrossed, "crossed"},
	{markDeadline, penDeadline, "timeout"}, {markProgress, penProgress, "progress"}, {fillTask, penProgress, "task"},
	{markPoll, penDim, "poll"}, {markAsked, penQuestion, "question"}, {markEnd, penDim, "end"}, {markNow, penProgress, "now"},
}

// legend is as many of the legend's items as the width holds, two
// spaces apart, or one when that shows more of them.
func (f *frame) legend() string {
	sep := "  "
	if f.legendFits("  ") < len(legendItems) && f.legendFits(" ") > f.legendFits("  ") {
		sep = " "
	}
	var b strings.Builder
	for i, it := range legendItems[:f.legendFits(sep)] {
		if i > 0 {
			b.WriteString(sep)
		}
		p := f.pens.list[it.pen]
		b.WriteString(p.on + string(it.glyph) + p.off + " " + f.pens.paint(penDim, it.word))
	}
	return b.String()
}

// legendFits is how many of the legend's items fit the width, sep apart.
func (f *frame) legendFits(sep string) int {
	used := 0
	for i, it := range legendItems {
		w := 2 + utf8.RuneCountInString(it.word)
		if i > 0 {
			w += len(sep)
		}
		if used+w > f.width {
			return i
		}
		used += w
	}
	return len(legendItems)
}
