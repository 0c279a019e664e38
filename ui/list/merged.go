package list

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// Lane is one server of a merged list: its name, the Env its requests are
// read through (its own tracker) and what the root knows of them.
type Lane struct {
	Name string
	Env  screen.Env
	In   Input
}

// Key names a row of a merged list: request IDs are a server's own, so a
// row is its server (the lane's position) and its ID.
type Key struct {
	Lane int
	ID   wire.ID
}

// mergedRow is a row of a merged list.
type mergedRow struct {
	lane int
	r    *session.Request
}

// Merged is the request list of several servers at once: every server's
// requests in the order they began, a SERVER column before the ID, the
// selection kept by (server, ID). f cycles the same filter as the one
// server's list; / searches the server names and request labels. A task's
// own requests and a legacy server's own requests are not rows here (the
// one server's list, opened on the row, shows them).
type Merged struct {
	sel    Key
	follow bool
	offset int
	rows   int

	filter    Filter
	search    string
	searching bool

	// shown are the rows shown, in order; built is what they were built
	// from (each lane's length and evictions): while only new requests
	// came, Layout appends them instead of walking every lane again.
	// Requests a server's history let go of stay rows until they are an
	// eighth of the rows (stale counts them): then the rows are built
	// again, so that a full history costs a walk per many requests, not
	// one per request.
	shown []mergedRow
	built []rowsKey
	stale int
	// pos is where the selection was last found among the rows.
	pos int
	// per holds each lane's own list model: its summaries and measured
	// column widths, and its painter.
	per   []Model
	lanes []Lane
	// madeFor is, per lane, the request each cached summary was made
	// for. A proxy's tracker renames a finished host request whose ID the
	// host's next session uses again (1 becomes 1·1, the same request):
	// the summary cached under 1 is the old request's, and the new 1
	// must not be shown it. The one server's list moves it on the
	// tracker's rename (Model.Renamed); the merged list, which is not
	// handed the renames, knows it by the request it was made for.
	madeFor []map[wire.ID]*session.Request
}

// NewMerged is a merged list following the newest request.
func NewMerged() Merged { return Merged{follow: true} }

// Selected is the selected row, ok false when none is.
func (m Merged) Selected() (Key, bool) {
	return m.sel, !m.sel.ID.IsZero()
}

// Select selects a row and stops following.
func (m Merged) Select(k Key) Merged {
	m.sel, m.follow = k, false
	return m
}

// Searching reports whether / is taking text: every key goes to the list.
func (m Merged) Searching() bool { return m.searching }

// Search is the text / searches for ("" for none).
func (m Merged) Search() string { return m.search }

// FilterShown is the list's filter.
func (m Merged) FilterShown() Filter { return m.filter }

// Len is how many rows are shown.
func (m Merged) Len() int { return len(m.shown) }

// Update moves the selection, cycles the filter (f), takes the search's
// text (/ … enter; esc clears it), and says Unused of any other key, which
// the root gives to the selected row's server.
func (m Merged) Update(env screen.Env, msg tea.Msg) (Merged, screen.Action) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if m.searching {
			m.typeSearch(msg)
			return m, nil
		}
		return m, m.key(env, msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.move(-look.WheelRows)
		case tea.MouseWheelDown:
			m.move(look.WheelRows)
		}
	}
	return m, nil
}

func (m *Merged) key(env screen.Env, msg tea.KeyPressMsg) screen.Action {
	k := env.Keys
	page := max(1, m.rows-1)
	switch {
	case msg.String() == "/":
		m.searching = true
	case key.Matches(msg, k.FilterList):
		m.filter = m.filter.next()
		m.built = nil
		return info("showing " + m.filter.String() + " requests")
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.PageUp):
		m.move(-page)
	case key.Matches(msg, k.PageDown):
		m.move(page)
	case key.Matches(msg, k.Top):
		m.move(-len(m.shown))
	case key.Matches(msg, k.Bottom):
		m.move(len(m.shown))
		m.follow = true
	default:
		return screen.Unused{}
	}
	return nil
}

// typeSearch is a key while / takes text.
func (m *Merged) typeSearch(msg tea.KeyPressMsg) {
	switch msg.String() {
	case "enter":
		m.searching = false
	case "esc":
		m.searching, m.search = false, ""
	case "backspace":
		if r := []rune(m.search); len(r) > 0 {
			m.search = string(r[:len(r)-1])
		}
	default:
		if msg.Text != "" && len([]rune(m.search)) < 64 {
			m.search += msg.Text
		}
	}
	m.built = nil
}

// move moves the selection by delta rows.
func (m *Merged) move(delta int) {
	if len(m.shown) == 0 {
		return
	}
	idx, ok := m.selectedPos()
	if !ok {
		idx = len(m.shown) - 1
	}
	idx = min(max(idx+delta, 0), len(m.shown)-1)
	row := m.shown[idx]
	m.sel, m.follow, m.pos = Key{Lane: row.lane, ID: row.r.ID}, false, idx
}

// selectedPos is the selection's position among the rows shown.
func (m *Merged) selectedPos() (int, bool) {
	if m.sel.ID.IsZero() {
		return 0, false
	}
	if p := m.pos; p < len(m.shown) && m.shown[p].lane == m.sel.Lane && m.shown[p].r.ID == m.sel.ID {
		return p, true
	}
	// The newest rows are the likeliest: look from the end.
	for i := len(m.shown) - 1; i >= 0; i-- {
		if row := m.shown[i]; row.lane == m.sel.Lane && row.r.ID == m.sel.ID {
			return i, true
		}
	}
	return 0, false
}

// Layout takes the lanes as they are now, rebuilds the rows shown (or
// appends the requests begun since), keeps the selection on a row shown,
// scrolls it into the window and measures the visible rows. The root calls
// it after every update.
func (m Merged) Layout(lanes []Lane, width, height int) Merged {
	m.lanes = lanes
	for len(m.per) < len(lanes) {
		m.per = append(m.per, New())
		m.madeFor = append(m.madeFor, map[wire.ID]*session.Request{})
	}
	m.rows = height - 1
	m.refresh()
	n := len(m.shown)
	if n == 0 || m.rows < 1 {
		m.offset = 0
		if n == 0 {
			m.sel = Key{}
		}
		return m
	}
	idx, ok := m.selectedPos()
	switch {
	case m.follow:
		idx = n - 1
	case !ok:
		// The selection was hidden (f, /) or evicted: the row now at the
		// window's top takes its place.
		idx = min(m.offset, n-1)
	}
	row := m.shown[idx]
	m.sel, m.pos = Key{Lane: row.lane, ID: row.r.ID}, idx
	off := m.offset
	if m.follow {
		off = max(0, n-m.rows)
	}
	off = min(off, idx)
	if idx >= off+m.rows {
		off = idx - m.rows + 1
	}
	m.offset = min(max(off, 0), max(0, n-m.rows))
	m.measure(width)
	return m
}

// refresh rebuilds the rows shown, or appends what the lanes began since.
func (m *Merged) refresh() {
	keys := make([]rowsKey, len(m.lanes))
	grown := len(m.built) == len(m.lanes)
	stale := m.stale
	for i, l := range m.lanes {
		t := l.Env.Tracker
		keys[i] = rowsKey{n: t.Len(), evicted: t.Counts().Evicted}
		if !grown {
			continue
		}
		// A lane that let go of k requests and began j has n-k+j; the
		// j new ones are its last.
		gone := keys[i].evicted - m.built[i].evicted
		stale += gone
		if gone < 0 || keys[i].n < m.built[i].n-gone {
			grown = false
		}
	}
	if grown && stale > max(64, len(m.shown)/8) {
		grown = false
	}
	from := make([]int, len(m.lanes))
	if grown {
		for i := range m.lanes {
			from[i] = m.built[i].n - (keys[i].evicted - m.built[i].evicted)
		}
		m.stale = stale
	} else {
		m.shown, m.stale = m.shown[:0], 0
	}
	m.built = keys
	start := len(m.shown)
	for i, l := range m.lanes {
		t := l.Env.Tracker
		for j := from[i]; j < t.Len(); j++ {
			if r := t.At(j); m.keeps(i, r) {
				m.shown = append(m.shown, mergedRow{lane: i, r: r})
			}
		}
	}
	// Each lane's requests are in the order they began; the lanes
	// interleave by the time each began.
	byCreated := func(a, b mergedRow) int { return a.r.Created.Compare(b.r.Created) }
	added := m.shown[start:]
	slices.SortStableFunc(added, byCreated)
	if len(added) == 0 || start == 0 || !added[0].r.Created.Before(m.shown[start-1].r.Created) {
		return
	}
	// A server that joined late brings requests older than rows shown:
	// they go where they began, the rows after them sorted again.
	k, _ := slices.BinarySearchFunc(m.shown[:start], added[0], func(a, b mergedRow) int {
		if a.r.Created.After(b.r.Created) {
			return 1
		}
		return -1
	})
	slices.SortStableFunc(m.shown[k:], byCreated)
}

// keeps reports whether the row of lane i for r is shown.
func (m *Merged) keeps(i int, r *session.Request) bool {
	if r.Role != session.RoleNone || !m.filter.keeps(r) {
		return false
	}
	if m.search == "" {
		return true
	}
	q := strings.ToLower(m.search)
	l := m.lanes[i]
	return strings.Contains(strings.ToLower(l.Env.Line(l.Name)), q) ||
		strings.Contains(strings.ToLower(look.RequestLabel(r, true, l.Env.Line)), q)
}

// measure widens each lane's columns to its rows in the window and
// summarises what its settled requests returned.
func (m *Merged) measure(width int) {
	for i := m.offset; i < min(len(m.shown), m.offset+m.rows); i++ {
		row := m.shown[i]
		l := m.lanes[row.lane]
		p := &m.per[row.lane]
		p.in = l.In
		r := row.r
		if w := lipgloss.Width(hostMark(r) + look.RequestLabel(r, width >= 140, l.Env.Line)); w > p.labelW[0] {
			p.labelW[0] = w
		}
		if w := lipgloss.Width(l.Env.Line(r.ID.String())); w > p.idW {
			p.idW = w
		}
		if r.State == session.StateCompleted || (r.State == session.StateFailed && r.ToolError) {
			m.cacheSummary(row.lane, l.Env.Tracker, r)
		}
	}
}

// cacheSummary caches r's summary in lane i's list, made again when the
// one cached under r's ID was made for another request (madeFor).
func (m *Merged) cacheSummary(i int, t *session.Tracker, r *session.Request) {
	p, made := &m.per[i], m.madeFor[i]
	if made[r.ID] != r {
		delete(p.summaries, r.ID)
	}
	p.cacheSummary(t, r)
	if len(made) > 4*max(1, t.Len()) {
		clear(made)
	}
	made[r.ID] = r
}

// serverWidth is the SERVER column's width: the longest name, within 20
// cells and a fifth of the screen.
func (m Merged) serverWidth(width int) int {
	w := len("SERVER")
	for _, l := range m.lanes {
		w = max(w, lipgloss.Width(l.Env.Line(l.Name)))
	}
	return min(w, 20, max(6, width/5))
}

// columns lays the rows out in width cells beside the SERVER column.
func (m Merged) columns(width int) columns {
	idW, labelW := 2, 0
	for _, p := range m.per {
		idW, labelW = max(idW, p.idW), max(labelW, p.labelW[0])
	}
	return layoutColumns(width, idW, labelW)
}

// View draws the column header and the rows in the window Layout chose,
// the selected one highlighted.
func (m Merged) View(env screen.Env, width, height int) string {
	if height < 2 || len(m.lanes) == 0 {
		return ""
	}
	sw := m.serverWidth(width)
	rest := width - sw - 1
	cols := m.columns(rest)
	cols.method = false
	from, end := m.offset, min(len(m.shown), m.offset+max(0, m.rows))
	head := painter{st: env.Styles, line: env.Line, width: width}
	var b strings.Builder
	b.WriteString(head.columnHeaderAfter(look.Fit("SERVER", sw)+" ", cols, from, len(m.shown)-end))
	if len(m.shown) == 0 {
		b.WriteString("\n")
		b.WriteString(env.Styles.Dim.Render(look.Fit("  "+m.emptyWords(), width)))
		return b.String()
	}
	idx, _ := m.selectedPos()
	painters := make([]*painter, len(m.lanes))
	for i := from; i < end; i++ {
		row := m.shown[i]
		p := painters[row.lane]
		if p == nil {
			l := m.lanes[row.lane]
			lp := m.per[row.lane].painter(l.Env, rest)
			lp.st, lp.now = env.Styles, env.Now
			p = &lp
			painters[row.lane] = p
		}
		b.WriteByte('\n')
		b.WriteString(m.mergedRow(env, *p, row, cols, sw, i == idx))
	}
	return b.String()
}

// mergedRow is one row: the SERVER cell, then the row the one server's
// list draws.
func (m Merged) mergedRow(env screen.Env, p painter, row mergedRow, cols columns, sw int, selected bool) string {
	l := m.lanes[row.lane]
	line := p.row(row.r, cols, false, p.now)
	// The one server's row begins with its two-cell marker, unstyled when
	// not selected; the merged row puts its own before the server.
	line = strings.TrimPrefix(line, "  ")
	marker := "  "
	if selected {
		marker = env.Styles.Cursor.Render("▌ ")
	}
	out := marker + env.Styles.Dim.Render(look.Fit(l.Env.Line(l.Name), sw)) + " " + line
	if selected {
		return env.Styles.Highlight(out)
	}
	return out
}

// emptyWords says why no row is shown: the filter or the search hides
// them all, or no request began yet on any server (on proxies: no host
// sent one yet).
func (m Merged) emptyWords() string {
	if m.filter != FilterAll || m.search != "" {
		return "no request matches (f: " + m.filter.String() + m.searchWords() + ")"
	}
	for _, l := range m.lanes {
		if !l.In.Proxy {
			return "No request yet: each server's requests are listed here as they begin."
		}
	}
	return "No host request yet: what the hosts send through the proxies is listed here as it begins."
}

func (m Merged) searchWords() string {
	if m.search == "" {
		return ""
	}
	return ", /" + m.search
}
