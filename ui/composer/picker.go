package composer

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/ui/look"
	"inflight/ui/screen"
)

// pickItem is one row of a picker. Its strings are the server's, raw:
// the view sanitises them.
type pickItem struct {
	name string
	// detail follows the name on the row (a URI, a template, arguments).
	detail string
	desc   string
	// typed is the entry that leads to typing the value by hand, which
	// every filter matches.
	typed bool
}

// picker is a filtered list: typing filters it, ↑/↓ and the wheel move
// the selection. sel indexes the whole list, so that the choice survives
// a change of filter that keeps it.
type picker struct {
	filter textinput.Model
	sel    int
}

func newPicker(placeholder string) picker {
	in := look.NewTextInput()
	in.Prompt = "filter: "
	in.Placeholder = placeholder
	in.CharLimit = 256
	in.Focus()
	return picker{filter: in}
}

// matches are the indices of the items the filter keeps, best first:
// those whose name or detail holds it, whatever the case, ranked by how
// they hold it (rank), then in the list's order; the typed entry, which
// every filter keeps, comes last.
func (p *picker) matches(items []pickItem) []int {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	out := make([]int, 0, len(items))
	ranks := make(map[int]int, len(items))
	for i, it := range items {
		r := rank(it, q)
		if r < 0 {
			continue
		}
		out = append(out, i)
		ranks[i] = r
	}
	slices.SortStableFunc(out, func(a, b int) int { return ranks[a] - ranks[b] })
	return out
}

// The ways an item holds the filter, best first: typing a tool's name,
// or the word it starts with, should find that tool before the ones that
// merely contain the text ("simulate" finds simulate-research-query
// before toggle-simulated-logging).
const (
	rankWord      = iota // a whole word of the name ("simulate" in simulate-research-query)
	rankPrefix           // the start of the name
	rankWordStart        // the start of a word of the name
	rankInside           // anywhere in the name
	rankDetail           // only in the detail (a URI, a template, the arguments)
	rankTyped            // the entry that leads to typing the value by hand
)

// rank is how item it holds the filter q (lower case): one of the ranks
// above, or -1 when it does not hold it.
func rank(it pickItem, q string) int {
	if it.typed {
		return rankTyped
	}
	if q == "" {
		return rankWord
	}
	name := strings.ToLower(it.name)
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	switch {
	case name == q || slices.Contains(words, q):
		return rankWord
	case strings.HasPrefix(name, q):
		return rankPrefix
	case slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, q) }):
		return rankWordStart
	case strings.Contains(name, q):
		return rankInside
	case strings.Contains(strings.ToLower(it.detail), q):
		return rankDetail
	}
	return -1
}

// selected is the selected item's index in items, or -1 when the filter
// keeps nothing.
func (p *picker) selected(items []pickItem) int {
	ms := p.matches(items)
	for _, i := range ms {
		if i == p.sel {
			return i
		}
	}
	if len(ms) == 0 {
		return -1
	}
	return ms[0]
}

// move moves the selection by d among the matches.
func (p *picker) move(items []pickItem, d int) {
	ms := p.matches(items)
	if len(ms) == 0 {
		return
	}
	pos := 0
	cur := p.selected(items)
	for j, i := range ms {
		if i == cur {
			pos = j
		}
	}
	pos = max(0, min(len(ms)-1, pos+d))
	p.sel = ms[pos]
}

// update hands a key to the filter. When the filter's text changes, the
// selection moves to the best match, so that enter after typing a name
// picks what was typed; otherwise it stays where it is while the filter
// keeps it.
func (p *picker) update(items []pickItem, msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	before := p.filter.Value()
	p.filter, cmd = p.filter.Update(msg)
	if ms := p.matches(items); p.filter.Value() != before && strings.TrimSpace(p.filter.Value()) != "" && len(ms) > 0 {
		p.sel = ms[0]
	}
	p.sel = p.selected(items)
	return cmd
}

// view draws the rows of a picker in height lines: the name column
// as wide as the longest name of the whole list needs (up to almost half
// the screen), so that it stays put as the rows scroll by,
// the rest of the row for the detail and description; a line says how
// many rows are above or below the window.
func (p *picker) view(env screen.Env, width int, items []pickItem, height int) string {
	st := env.Styles
	ms := p.matches(items)
	if len(ms) == 0 {
		return ""
	}
	cur := p.selected(items)
	pos := 0
	for j, i := range ms {
		if i == cur {
			pos = j
		}
	}
	rows := max(1, height)
	if len(ms) > rows {
		rows = max(1, rows-1) // the line that says what is hidden
	}
	start := 0
	if pos >= rows {
		start = pos - rows + 1
	}
	end := min(len(ms), start+rows)
	nameW := 0
	for _, it := range items {
		nameW = max(nameW, ansi.StringWidth(env.Line(it.name)))
	}
	nameW = min(nameW, max(12, width*45/100))
	var b strings.Builder
	for _, i := range ms[start:end] {
		it := items[i]
		name := look.Fit(env.Line(it.name), nameW)
		rest := env.Line(it.detail)
		if it.desc != "" {
			if rest != "" {
				rest += " · "
			}
			rest += env.Line(it.desc)
		}
		if i == cur {
			b.WriteString(st.Selected.Render(look.Fit(st.Cursor.Render("▌ ")+st.Bold.Render(name)+"  "+st.Dim.Render(rest), width)))
		} else {
			b.WriteString(look.Fit("  "+name+"  "+st.Dim.Render(rest), width))
		}
		b.WriteByte('\n')
	}
	if above, below := start, len(ms)-end; above > 0 || below > 0 {
		var parts []string
		if above > 0 {
			parts = append(parts, strconv.Itoa(above)+" more ↑")
		}
		if below > 0 {
			parts = append(parts, strconv.Itoa(below)+" more ↓")
		}
		b.WriteString(st.Dim.Render(look.Fit("  "+strings.Join(parts, " · "), width)) + "\n")
	}
	return b.String()
}

// wheelDelta is how far a wheel message moves a picker's selection.
func wheelDelta(msg tea.MouseWheelMsg) int {
	switch msg.Button {
	case tea.MouseWheelUp:
		return -1
	case tea.MouseWheelDown:
		return 1
	}
	return 0
}
