package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/list"
	"inflight/ui/look"
	"inflight/wire"
)

// listView is the request list's navigation state. The selection is kept by
// ID (history may evict old rows, shifting indices); offset is the position
// of the first visible row among the rows shown. While follow is set the
// newest request is selected.
type listView struct {
	selected wire.ID
	follow   bool
	offset   int
	rows     int // visible rows, set by layout

	// filter hides the rows it does not keep; clearedAt (x) hides the
	// requests that had reached their fate by then. Neither touches the
	// tracker's history.
	filter    listFilter
	clearedAt time.Time
	// shown holds the rows shown, in order, when filter or clearedAt
	// hides any or a legacy server's own requests add rows of their own
	// (nil: every request is shown, and positions are tracker indices).
	// layoutList rebuilds it.
	shown    []listRow
	filtered bool
	// srv is the selected row when it is one of the server's own requests
	// (incoming.go); selected is then the request it is tied to (zero
	// when untied).
	srv *session.ServerRequest
	// onlyTasksKey is the history shown was built for when the filter
	// and x hide nothing: then the rows change only with the history
	// (its length and evictions, the server's requests), and layout need
	// not walk it on every Update (zero: not built that way).
	onlyTasksKey rowsKey
	// hiddenByClear counts the requests x hid that the filter would show
	// (the header's "N of M · K cleared": requests, as N and M are; an
	// untied question's row is not counted).
	hiddenByClear int
	// labelW is the widest request label seen on screen, without [0] and
	// with [1] the method: the REQUEST column is as wide as its labels
	// need, within what the terminal leaves it (it only grows, so it does
	// not jump while scrolling).
	labelW [2]int
	// idW is the widest request ID seen on screen, in cells (it only
	// grows, as labelW): the ID column is as wide, within maxIDColumn.
	idW int
}

// listRow is one row of the list: the request at tracker index idx, or,
// with srv, one of the legacy server's own requests (incoming.go) shown
// under the request at idx (its own, or the last one begun before it
// came; -1: before any).
type listRow struct {
	idx int
	srv *session.ServerRequest
}

// rowsKey is what the rows depend on when nothing is hidden: the
// history's length and evictions, and the server's requests.
type rowsKey struct {
	n, evicted, srv int
	last            *session.ServerRequest
}

// refreshShown rebuilds the list of rows shown from the tracker.
func (m *Model) refreshShown() {
	l := &m.list
	srv := m.tracker.ServerRequests()
	// A task's own requests are never rows, and the server's own requests
	// are rows of their own, so a session with either always picks its
	// rows.
	l.filtered = l.filter != filterAll || !l.clearedAt.IsZero() || m.tracker.TaskRequestsBegun() > 0 || len(srv) > 0
	onlyTasks := l.filter == filterAll && l.clearedAt.IsZero() && l.filtered
	key := rowsKey{n: m.tracker.Len(), evicted: m.tracker.Counts().Evicted, srv: len(srv)}
	if len(srv) > 0 {
		key.last = srv[len(srv)-1]
	}
	if onlyTasks && l.onlyTasksKey == key {
		return // the same history: the same rows
	}
	l.onlyTasksKey = rowsKey{}
	if onlyTasks {
		l.onlyTasksKey = key
	}
	l.shown, l.hiddenByClear = l.shown[:0], 0
	if !l.filtered {
		l.shown = nil
		return
	}
	m.buildRows()
}

// shownLen is how many rows the list shows.
func (m *Model) shownLen() int {
	if m.list.filtered {
		return len(m.list.shown)
	}
	return m.tracker.Len()
}

// shownRequests is how many of the rows shown are requests (the server's
// own requests are rows too).
func (m *Model) shownRequests() int {
	if !m.list.filtered {
		return m.tracker.Len()
	}
	n := 0
	for _, row := range m.list.shown {
		if row.srv == nil {
			n++
		}
	}
	return n
}

// shownRow is the row at position pos among the rows shown.
func (m *Model) shownRow(pos int) listRow {
	if m.list.filtered {
		return m.list.shown[pos]
	}
	return listRow{idx: pos}
}

// shownAt is the request at position pos among the rows shown: the one
// an incoming row is shown under (nil for an untied one before any).
func (m *Model) shownAt(pos int) *session.Request {
	row := m.shownRow(pos)
	if row.idx < 0 {
		return nil
	}
	return m.tracker.At(row.idx)
}

// selectedPos is the selection's position among the rows shown; ok is
// false when it is not shown (hidden, evicted or none).
func (m *Model) selectedPos() (pos int, ok bool) {
	if s := m.list.srv; s != nil {
		return m.incomingPos(s)
	}
	idx, ok := m.tracker.Index(m.list.selected)
	if !ok {
		return 0, false
	}
	if !m.list.filtered {
		return idx, true
	}
	pos = m.rowsFrom(idx)
	return pos, pos < len(m.list.shown) && m.list.shown[pos].idx == idx && m.list.shown[pos].srv == nil
}

// rowsFrom is the position of the first row shown at or after the request
// at tracker index idx (its own row first).
func (m *Model) rowsFrom(idx int) int {
	return sort.Search(len(m.list.shown), func(i int) bool { return m.list.shown[i].idx >= idx })
}

// handleListKey moves the selection; it reports whether the key was used.
func (m *Model) handleListKey(msg tea.KeyPressMsg) bool {
	k := m.keys
	switch {
	case key.Matches(msg, k.FilterList):
		m.cycleFilter()
		return true
	case key.Matches(msg, k.ClearFinished):
		m.clearFinished()
		return true
	}
	m.refreshShown()
	n := m.shownLen()
	if n == 0 {
		return false
	}
	idx, ok := m.selectedPos()
	if !ok {
		idx = n - 1
	}
	page := max(1, m.list.rows-1)
	switch {
	case key.Matches(msg, k.Up):
		idx--
	case key.Matches(msg, k.Down):
		idx++
	case key.Matches(msg, k.PageUp):
		idx -= page
	case key.Matches(msg, k.PageDown):
		idx += page
	case key.Matches(msg, k.Top):
		idx = 0
	case key.Matches(msg, k.Bottom):
		idx = n - 1
	case key.Matches(msg, k.Detail):
		m.openDetail()
		return true
	default:
		return false
	}
	m.selectShown(idx)
	if key.Matches(msg, k.Bottom) {
		// End follows, whatever the last row is: a question nested under
		// the newest request (selectIncoming stops following) included.
		m.list.follow = true
	}
	return true
}

// followsServerRow reports whether the selection is one of the server's
// requests past the newest request's own row (nested under it, or untied
// after it): while following, it stays selected until a newer request
// comes, rather than yield to its request at the next event.
func (m *Model) followsServerRow() bool {
	s, n := m.list.srv, m.tracker.Len()
	if s == nil || n == 0 {
		return false
	}
	if s.TiedBy != session.TiedNone {
		return m.list.selected == m.tracker.At(n-1).ID
	}
	return m.tracker.ServerRequestPlace(s) >= n-1
}

// selectShown selects the row at position pos among those shown (clamped).
// Moving away from the newest row stops following; coming back to it
// resumes, so new requests are selected again.
func (m *Model) selectShown(pos int) {
	n := m.shownLen()
	if n == 0 {
		return
	}
	pos = min(max(pos, 0), n-1)
	row := m.shownRow(pos)
	if row.srv != nil {
		m.selectIncoming(row.srv)
		return
	}
	m.list.srv = nil
	m.list.selected = m.shownAt(pos).ID
	// Following is on the newest request: the rows of the server's own
	// requests under it do not count.
	m.list.follow = row.idx == m.tracker.Len()-1
}

// scrollList scrolls the list by delta rows (the mouse wheel), keeping the
// selection on screen: it moves only when it would leave it.
func (m *Model) scrollList(delta int) {
	m.refreshShown()
	n, rows := m.shownLen(), max(1, m.list.rows)
	if n == 0 {
		return
	}
	off := min(max(m.list.offset+delta, 0), max(0, n-rows))
	m.list.offset = off
	pos, ok := m.selectedPos()
	if !ok {
		pos = n - 1
	}
	m.selectShown(min(max(pos, off), off+rows-1))
	if off < n-rows {
		// The user scrolled away from the newest rows: stay there.
		m.list.follow = false
	}
}

// cycleFilter moves to the next list filter and says what it shows.
func (m *Model) cycleFilter() {
	m.list.filter = m.list.filter.next()
	m.refreshShown()
	n := m.shownRequests()
	text := fmt.Sprintf("list: %s — %d %s", m.list.filter, n, look.CountNoun(n, "request", "requests"))
	if m.list.filter == filterAll {
		text = fmt.Sprintf("list: all %d %s", n, look.CountNoun(n, "request", "requests"))
	}
	if m.list.filter == filterFailed {
		text += " (failed, timed out or lost)"
	}
	if m.list.hiddenByClear > 0 {
		text += fmt.Sprintf("; %d cleared with x not shown", m.list.hiddenByClear)
	}
	m.setStatus(levelInfo, text+" · f shows the next filter")
}

// clearFinished hides the finished rows from the list (x). The tracker
// keeps them: the log, the detail and exports still have them. With
// nothing finished left to clear, x shows the cleared rows again.
func (m *Model) clearFinished() {
	m.refreshShown()
	finished := 0
	for pos := 0; pos < m.shownLen(); pos++ {
		if row := m.shownRow(pos); row.srv != nil {
			if clearsIncoming(m, row) {
				finished++
			}
		} else if m.shownAt(pos).State.IsFinal() {
			finished++
		}
	}
	switch {
	case finished > 0:
		m.list.clearedAt = m.now()
		m.setStatus(levelInfo, fmt.Sprintf("cleared %d finished %s; the log and exports keep them · x shows them again", finished, look.CountNoun(finished, "row", "rows")))
	case !m.list.clearedAt.IsZero():
		m.list.clearedAt = time.Time{}
		m.refreshShown()
		m.setStatus(levelInfo, fmt.Sprintf("showing the cleared requests again (%d in the list)", m.shownRequests()))
	default:
		m.setStatus(levelInfo, "nothing finished to clear")
	}
	m.refreshShown()
}

func (m *Model) listColumns() list.Columns {
	n := m.tracker.Len()
	if n == 0 {
		return list.LayoutColumns(m.width, 2, 0)
	}
	method := 0
	if m.width >= 140 {
		method = 1
	}
	return list.LayoutColumns(m.width, max(m.list.idW, lipgloss.Width(m.line(m.tracker.At(n-1).ID.String()))), m.list.labelW[method])
}

func (m *Model) viewList(height int) string {
	if height < 2 {
		return ""
	}
	if m.tracker.Len() == 0 {
		return m.viewEmpty(height)
	}
	cols := m.listColumns()
	rows := height - 1
	n := m.shownLen()
	// layoutList chose the window (keeping the selection in it).
	from, end := m.listWindow(rows)

	p := list.NewPainter(m.styles, m.line, m.tracker, m.now(), m.width, m.listFacts(), m.summaries)
	var b strings.Builder
	b.WriteString(p.Header(cols, from, n-end))
	if n == 0 {
		b.WriteByte('\n')
		b.WriteString(m.viewNoMatch(rows))
		return b.String()
	}
	idx, ok := m.selectedPos()
	if !ok {
		idx = n - 1
	}
	// Only the visible rows are rendered: 10 000 requests cost what the
	// visible ones cost.
	for i := from; i < end; i++ {
		b.WriteByte('\n')
		if row := m.shownRow(i); row.srv != nil {
			b.WriteString(p.IncomingRow(row.srv, cols, i == idx))
			continue
		}
		b.WriteString(p.Row(m.shownAt(i), cols, i == idx))
	}
	shown := end - from
	if free := rows - shown; free >= 6 && m.onlyHousekeeping() {
		b.WriteByte('\n')
		b.WriteString(m.viewEmpty(free - 1))
		return b.String()
	}
	for i := shown; i < rows; i++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// viewNoMatch is the list when its filter or x hides every row.
func (m *Model) viewNoMatch(height int) string {
	st := m.styles
	what := fmt.Sprintf("No request is %s.", m.list.filter)
	if m.list.filter == filterAll {
		what = "Every request here has finished and was cleared."
	}
	lines := []string{st.Bold.Render(what), ""}
	if m.list.filter != filterAll {
		lines = append(lines, "Press "+st.Key.Render("f")+" for the next filter.")
	}
	if !m.list.clearedAt.IsZero() {
		lines = append(lines, "Press "+st.Key.Render("x")+" to show the cleared requests again.")
	}
	return lipgloss.Place(m.width, height, lipgloss.Center, lipgloss.Center, lipgloss.JoinVertical(lipgloss.Center, lines...))
}

// onlyHousekeeping reports whether the user has sent nothing yet (the list
// holds only the tools/list inflight sent on connecting), so the screen
// should still tell a newcomer what to do.
func (m *Model) onlyHousekeeping() bool {
	for i := 0; i < m.tracker.Len(); i++ {
		if m.tracker.At(i).Method != wire.MethodToolsList {
			return false
		}
	}
	return true
}

// viewEmpty tells a newcomer what to do first.
func (m *Model) viewEmpty(height int) string {
	st := m.styles
	var lines []string
	switch m.state {
	case connConnecting:
		lines = []string{st.Dim.Render(look.Spinner(m.now()) + " connecting…")}
	case connLost:
		lines = []string{st.Error.Render("not connected"), "", "Press " + st.Key.Render("R") + " to try again, " + st.Key.Render("q") + " to quit."}
	default:
		lines = []string{st.Bold.Render("You have not sent a request yet."), ""}
		lines = append(lines, m.firstStepHint()...)
		lines = append(lines, "Press "+st.Key.Render("?")+" for the keys you can use.")
	}
	block := lipgloss.JoinVertical(lipgloss.Center, lines...)
	return lipgloss.Place(m.width, height, lipgloss.Center, lipgloss.Center, block)
}

// firstStepHint says how to send a first request. It names the demo
// server's slow tool only when this server listed one: on any other server
// the hint is about what it does have.
func (m *Model) firstStepHint() []string {
	st := m.styles
	k := func(s string) string { return st.Key.Render(s) }
	cancel := "While it runs, press " + k("c") + " to cancel it and watch what happens."
	switch {
	case m.hasTool("slow"):
		return []string{"Press " + k("n") + " to send one — on the demo server " + st.Bold.Render("slow") + " is chosen: press " + k("enter") + " twice.", cancel}
	case len(m.tools) > 0:
		n := len(m.tools)
		return []string{fmt.Sprintf("Press %s to send one: pick one of the server's %d %s with %s, then %s sends it.", k("n"), n, look.CountNoun(n, "tool", "tools"), k("enter"), k("enter")), cancel}
	}
	return []string{"Press " + k("n") + " to compose a request: a tool call, a resource read, a prompt or any method.", cancel}
}

// hasTool reports whether the server's tools/list named a tool.
func (m *Model) hasTool(name string) bool {
	for _, t := range m.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
