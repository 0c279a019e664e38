package look

import (
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Part is one thing the list's last column can say: a late flag, the
// cancel signal and its age, the result. It has one or more wordings,
// longest first, so that a narrow terminal gets a shorter one rather than
// losing it.
type Part struct {
	// variants are the wordings, longest first: plain text, already
	// sanitised (buildCell styles them).
	Variants []string
	Style    lipgloss.Style
	// prio orders who gets the width: 0 first. Parts are still drawn in
	// the order given.
	Prio int
	// cut: the part may be cut short with "…" to fill what room is left
	// (a result text, an error message), never below keep cells (MinCut
	// when 0).
	Cut  bool
	Keep int
}

// Priorities of the last column, most important first (issue 10: the flags,
// then the signal and its age, then words that repeat the STATE column).
const (
	PrioFlag    = iota // ⚑ late traffic, ⚠ violations
	PrioSignal         // the cancel signal and its age, the outcome itself
	PrioWatch          // the late window running out, crossed traffic
	PrioRepeats        // words the STATE or TIMEOUT column already says
	// prioTiming: ages that change every second (a task's last and next
	// poll). They get only what the server's own words leave: the status
	// message says what the task is doing, the poll timing matters less.
	PrioTiming
)

// CellSep separates the parts of a cell.
const CellSep = " · "

// MinCut is the fewest cells a cut part is given: less says nothing.
const MinCut = 8

// BuildCell lays out parts in w cells. Width goes to the parts in priority
// order: first each part that fits gets its shortest wording, then, round
// the parts in priority order, each is given its next longer wording while
// it fits; a part that may be cut then takes what room is left. A
// part that does not fit even at its shortest is left out, except the most
// important one, which is cut to w rather than vanish. Parts that repeat
// other columns (PrioRepeats and later) only get what is left once the
// others have their longest wording. The result is at most w cells wide
// (it is not padded).
func BuildCell(parts []Part, w int) string {
	if w <= 0 || len(parts) == 0 {
		return ""
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return parts[order[a]].Prio < parts[order[b]].Prio })
	split := sort.Search(len(order), func(i int) bool { return parts[order[i]].Prio >= PrioRepeats })

	l := cellLayout{parts: parts, w: w, widths: make([]int, len(parts)), text: make([]string, len(parts))}
	l.fill(order[:split])
	l.fill(order[split:])

	var b strings.Builder
	first := true
	for i, p := range parts {
		if l.widths[i] == 0 {
			continue
		}
		if !first {
			b.WriteString(CellSep)
		}
		first = false
		s := l.text[i]
		if lipgloss.Width(s) > l.widths[i] {
			s = ansi.Truncate(s, l.widths[i], "…")
		}
		b.WriteString(p.Style.Render(s))
	}
	return b.String()
}

// cellLayout is buildCell's work in progress: the cells each part is given
// (0: left out) and its wording before any cut.
type cellLayout struct {
	parts  []Part
	w      int
	widths []int
	text   []string
	used   int // cells taken, separators included
	n      int // parts given cells
}

// need is what a part of cells costs now (with its separator).
func (l *cellLayout) need(cells int) int {
	if l.n > 0 {
		return cells + lipgloss.Width(CellSep)
	}
	return cells
}

// fill gives width to the parts of order (by priority), shortest wordings
// first, then longer ones.
func (l *cellLayout) fill(order []int) {
	for _, i := range order {
		p := l.parts[i]
		if len(p.Variants) == 0 {
			continue
		}
		short := p.Variants[len(p.Variants)-1]
		cells := lipgloss.Width(short)
		if p.Cut {
			keep := p.Keep
			if keep <= 0 {
				keep = MinCut
			}
			cells = min(cells, keep)
		}
		switch {
		case cells == 0:
			continue
		case l.used+l.need(cells) <= l.w:
		case l.n == 0:
			cells = l.w // the most important part shows, cut
		default:
			continue
		}
		l.used += l.need(cells)
		l.n++
		l.widths[i], l.text[i] = cells, short
	}
	// Longer wordings, one step at a time round the parts in priority
	// order, so that no part takes its longest while another keeps a
	// cryptic shortest one.
	step := make(map[int]int, len(order)) // index into variants, from the end
	for changed := true; changed; {
		changed = false
		for _, i := range order {
			p := l.parts[i]
			if l.widths[i] == 0 || step[i]+1 >= len(p.Variants) {
				continue
			}
			v := p.Variants[len(p.Variants)-2-step[i]]
			vw := lipgloss.Width(v)
			if l.used-l.widths[i]+vw > l.w {
				continue
			}
			l.used += vw - l.widths[i]
			l.widths[i], l.text[i] = vw, v
			step[i]++
			changed = true
		}
	}
	// A cut part takes the room left, cut, for its longest wording.
	for _, i := range order {
		p := l.parts[i]
		if l.widths[i] == 0 || !p.Cut || l.text[i] == p.Variants[0] && l.widths[i] >= lipgloss.Width(p.Variants[0]) {
			continue
		}
		room := l.w - l.used + l.widths[i]
		if room > l.widths[i] {
			l.used += min(room, lipgloss.Width(p.Variants[0])) - l.widths[i]
			l.widths[i], l.text[i] = min(room, lipgloss.Width(p.Variants[0])), p.Variants[0]
		}
	}
}
