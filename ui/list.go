package ui

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/session"
	"inflight/termsafe"
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

func (m *Model) listColumns() columns {
	n := m.tracker.Len()
	if n == 0 {
		return layoutColumns(m.width, 2, 0)
	}
	method := 0
	if m.width >= 140 {
		method = 1
	}
	return layoutColumns(m.width, max(m.list.idW, lipgloss.Width(m.line(m.tracker.At(n-1).ID.String()))), m.list.labelW[method])
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

	var b strings.Builder
	b.WriteString(m.columnHeader(cols, from, n-end))
	if n == 0 {
		b.WriteByte('\n')
		b.WriteString(m.viewNoMatch(rows))
		return b.String()
	}
	idx, ok := m.selectedPos()
	if !ok {
		idx = n - 1
	}
	now := m.now()
	// Only the visible rows are rendered: 10 000 requests cost what the
	// visible ones cost.
	for i := from; i < end; i++ {
		b.WriteByte('\n')
		if row := m.shownRow(i); row.srv != nil {
			b.WriteString(m.incomingRow(row, cols, i == idx, now))
			continue
		}
		b.WriteString(m.row(m.shownAt(i), cols, i == idx, now))
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

// columnHeader names the columns and, at its right end, says how many rows
// are hidden above and below the window ("↑ 4 more · 13 more ↓").
func (m *Model) columnHeader(c columns, above, below int) string {
	parts := []string{"  " + look.FitLeft("ID", c.id), look.Fit("REQUEST", c.request), look.Fit("STATE", c.state)}
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
		return m.styles.ColumnHeader.Render(look.Fit(strings.Join(parts, " "), m.width))
	}
	w := lipgloss.Width(ind)
	names := strings.TrimRight(strings.Join(parts, " "), " ")
	return m.styles.ColumnHeader.Render(look.Fit(names, max(0, m.width-w-1))) + " " + m.styles.Cursor.Render(ind)
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

// row renders one request. The selected row is highlighted whole, not only
// marked with ▌.
func (m *Model) row(r *session.Request, c columns, selected bool, now time.Time) string {
	st := m.styles
	sl := look.StateLookOf(r.State)
	icon := sl.Icon
	if r.State == session.StateRunning || r.State == session.StatePending {
		icon = look.Spinner(now)
	}
	marker := "  "
	if selected {
		marker = st.Cursor.Render("▌ ")
	}
	stateCell := sl.Style(st).Render(look.Fit(icon+" "+sl.Word, c.state))
	parts := []string{
		marker + idCell(m.line(r.ID.String()), c.id),
		look.Fit(hostMark(r)+look.RequestLabel(r, c.method, m.line), c.request),
		stateCell,
	}
	if c.elapsed > 0 {
		parts = append(parts, look.FitLeft(look.Dur(look.Elapsed(r, now)), c.elapsed))
	}
	if c.timeout > 0 {
		parts = append(parts, look.FitLeft(m.countdown(r, now), c.timeout))
	}
	if c.detail > 0 {
		parts = append(parts, look.Fit(m.authCell(r, c, now), c.detail))
	}
	line := look.Fit(strings.Join(parts, " "), m.width)
	if selected {
		return st.Highlight(line)
	}
	return line
}

// countdown is the timeout column: time left before the nearer limit,
// amber when close, red when expired, "max" when the maximum is nearer.
func (m *Model) countdown(r *session.Request, now time.Time) string {
	st := m.styles
	if r.State == session.StateCancelRequested && r.Cancel != nil && r.Cancel.Cause == session.CauseTimeout {
		return st.Error.Render("expired")
	}
	rem, limit := r.Remaining(now)
	if limit == session.LimitNone {
		return st.Dim.Render("—")
	}
	text := look.Dur(rem)
	switch limit {
	case session.LimitMax:
		text = "max " + text
	case session.LimitTTL:
		if m.width >= 100 {
			// The TIMEOUT column is wide enough to say which limit.
			text = "ttl " + text
		} else {
			// Seven cells: the task's mark (STATE's "⧗ task") says it is
			// the task's TTL, not a timeout; the space goes first.
			if lipgloss.Width(text)+2 <= 7 {
				text = "⧗ " + text
			} else {
				text = "⧗" + text
			}
		}
	}
	total := r.Timeout.Timeout
	switch limit {
	case session.LimitMax:
		total = r.Timeout.Max
	case session.LimitTTL:
		total = r.Task.TTL
	}
	switch {
	case rem <= 0:
		return st.Error.Render("expired")
	case rem < 5*time.Second || (total > 0 && rem < total/5):
		return st.Warn.Render(text)
	}
	return text
}

// detailCell is the flexible last column: progress while running, the
// cancel while it is pending, and the outcome (with flags) once settled.
// What it says is built from parts in priority order (buildCell), so that
// a narrow terminal loses the words that repeat other columns, never the
// flags.
func (m *Model) detailCell(r *session.Request, c columns, now time.Time) string {
	st := m.styles
	w := c.detail
	if cell, ok := m.hostActiveCell(r, w, now); ok {
		return cell
	}
	switch r.State {
	case session.StateWaitingInput:
		return look.BuildCell(m.waitingParts(r), w)
	case session.StatePending:
		if s := m.serverAskCell(r, w); s != "" {
			return s
		}
		if r.Sent.IsZero() {
			return st.Dim.Render("sending…")
		}
		return st.Dim.Render("waiting for the server…")
	case session.StateRunning:
		if s := m.serverAskCell(r, w); s != "" {
			return s
		}
		return m.progressCell(r, w, now)
	case session.StateListening:
		s := fmt.Sprintf("%d %s", r.Notifications, look.CountNoun(r.Notifications, "update", "updates"))
		if !r.LastNotificationAt.IsZero() {
			s += ", last " + look.Dur(now.Sub(r.LastNotificationAt)) + " ago"
		}
		return st.Listening.Render(s)
	case session.StateTask:
		return look.BuildCell(m.taskParts(r, now), w)
	case session.StateCancelRequested:
		if r.IsTask() {
			return look.BuildCell(m.taskCancelParts(r, now), w)
		}
		return look.BuildCell(m.cancellingParts(r, c, now), w)
	}
	return look.BuildCell(m.outcomeParts(r), w)
}

// lateParts are the flags of late traffic and violations (first in line for
// the width), and the traffic that crossed the cancel in flight (shown in a
// neutral colour, never flagged).
func (m *Model) lateParts(r *session.Request) []look.Part {
	st := m.styles
	parts := m.hostParts(r)
	if tk := r.Task; tk != nil && tk.EndedAfterCancel != "" {
		ago := look.Ago(tk.AfterCancel)
		parts = append(parts, look.Part{Variants: []string{"⚑ " + m.line(tk.EndedAfterCancel) + " after tasks/cancel (" + ago + ")", "⚑ " + m.line(tk.EndedAfterCancel) + " after cancel"}, Style: st.Flag, Prio: look.PrioFlag})
	} else if r.Late.Response && !r.Late.Crossed {
		ago := look.Ago(r.Late.AfterCancel)
		parts = append(parts, look.Part{Variants: []string{"⚑ late response " + look.LateFateShort(r) + " (" + ago + ")", "⚑ late response"}, Style: st.Flag, Prio: look.PrioFlag})
	}
	if n := r.Late.ProgressAfterCancel; n > 0 {
		parts = append(parts, look.Part{Variants: []string{
			fmt.Sprintf("⚑ %d progress after cancel", n), fmt.Sprintf("⚑ %d late progress", n), fmt.Sprintf("⚑ %d late", n),
		}, Style: st.Flag, Prio: look.PrioFlag})
	}
	if n := r.Violations; n > 0 {
		parts = append(parts, look.Part{Variants: []string{
			fmt.Sprintf("⚠ %d %s", n, look.CountNoun(n, "violation", "violations")), fmt.Sprintf("⚠ %d", n),
		}, Style: st.Flag, Prio: look.PrioFlag})
	}
	if r.Late.Response && r.Late.Crossed {
		parts = append(parts, look.Part{Variants: []string{"response crossed the cancel in flight, " + look.LateFateShort(r), "response crossed the cancel", "crossed"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if n := r.Late.ProgressCrossed; n > 0 {
		parts = append(parts, look.Part{Variants: []string{fmt.Sprintf("%d crossed in flight", n), fmt.Sprintf("%d crossed", n)}, Style: st.Dim, Prio: look.PrioWatch})
	}
	return parts
}

// cancellingParts tell a request whose cancel waits for its fate: the
// flags, the signal and how long ago it left, the late window running
// out, and last the words the STATE column already says.
func (m *Model) cancellingParts(r *session.Request, c columns, now time.Time) []look.Part {
	st := m.styles
	parts := m.lateParts(r)
	cn := r.Cancel
	if cn == nil {
		return append(parts, look.Part{Variants: []string{"cancellation requested"}, Style: st.Cancelling, Prio: look.PrioRepeats})
	}
	switch {
	case cn.Failed != "":
		parts = append(parts, look.Part{Variants: []string{"the cancel could not be sent", "cancel not sent"}, Style: st.Error, Prio: look.PrioSignal})
	case cn.Signal == event.SignalNone:
		parts = append(parts, look.Part{Variants: []string{"sending cancel…"}, Style: st.Cancelling, Prio: look.PrioSignal})
	default:
		since := cn.At
		if !cn.SignalAt.IsZero() {
			since = cn.SignalAt
		}
		ago := look.Dur(now.Sub(since)) + " ago"
		short := "cancel sent " + ago
		if cn.Signal == event.SignalStreamClosed {
			short = "closed " + ago
		}
		// "sent 1.2s ago" last, in a narrow column (29 cells at 80): next
		// to "⊘ cancelling" it can only be the cancel, and it keeps the
		// signal ahead of the watch there.
		variants := []string{look.SignalText(cn.Signal) + " " + ago, short}
		if cn.Signal != event.SignalStreamClosed && c.detail < 35 {
			variants = append(variants, "sent "+ago)
		}
		if cn.Cause == session.CauseHost {
			variants = hostCancelVariants(cn, ago)
		}
		parts = append(parts, look.Part{Variants: variants, Style: st.Cancelling, Prio: look.PrioSignal})
	}
	if left, ok := look.LateWindowLeft(r, now); ok {
		l := look.Dur(left)
		parts = append(parts, look.Part{Variants: []string{look.WatchingText(r, now), "watching " + l + " more", l + " left"}, Style: st.Dim, Prio: look.PrioWatch})
	}
	if cn.Cause == session.CauseTimeout {
		// "timed out" repeats the TIMEOUT column's "expired" while that
		// column is shown; without it, it is news.
		prio := look.PrioRepeats
		if c.timeout == 0 {
			prio = look.PrioSignal
		}
		parts = append(parts, look.Part{Variants: []string{"timed out, cancellation requested", "timed out"}, Style: st.Cancelling, Prio: prio})
	} else {
		parts = append(parts, look.Part{Variants: []string{"cancellation requested"}, Style: st.Cancelling, Prio: look.PrioRepeats})
	}
	return parts
}

// progressCell draws a bar with percent and message when the total is
// known, an activity indicator and the count when it is not.
func (m *Model) progressCell(r *session.Request, w int, now time.Time) string {
	st := m.styles
	p := r.Progress
	msg := m.line(p.Message)
	if pct, f, ok := termsafe.Percent(p.Value, p.Total); p.HasTotal && ok {
		// The percentage is clamped to 0–100%: a server's total of 1e-300
		// or value of 1e308 reads 100%, never +Inf% or 309 digits.
		barW := min(20, max(6, w/3))
		pct = fmt.Sprintf(" %4s ", pct)
		return look.Bar(st, f, barW) + pct + look.Trunc(msg, w-barW-len(pct))
	}
	s := look.Spinner(now) + " " + termsafe.Number(p.Value)
	if msg != "" {
		s += " · " + msg
	}
	return st.Running.Render(s)
}

// outcomeParts describe a settled request, flags first: late traffic and
// violations are what a person most needs to know.
func (m *Model) outcomeParts(r *session.Request) []look.Part {
	st := m.styles
	parts := m.lateParts(r)
	add := func(style lipgloss.Style, prio int, variants ...string) {
		parts = append(parts, look.Part{Variants: variants, Style: style, Prio: prio})
	}
	addCut := func(style lipgloss.Style, text string, keep int) {
		if text != "" {
			parts = append(parts, look.Part{Variants: []string{text}, Style: style, Prio: look.PrioSignal, Cut: true, Keep: keep})
		}
	}
	switch r.State {
	case session.StateCancelled, session.StateTimedOut:
		if r.Cancel != nil && r.Cancel.Failed != "" {
			addCut(st.Error, "the cancel could not be sent: "+m.line(r.Cancel.Failed), len("the cancel could not be sent"))
			break
		}
		if r.State == session.StateTimedOut && r.Cancel != nil {
			if r.Cancel.Limit == session.LimitMax {
				add(st.Dim, look.PrioWatch, "max timeout "+look.Dur(r.Timeout.Max)+" reached", "max timeout")
			} else {
				// "timed out" is the STATE column's word already; the
				// limit is not (ELAPSED runs on through the late window).
				add(st.Dim, look.PrioSignal, "timeout "+look.Dur(r.Timeout.Timeout)+" reached", "timeout "+look.Dur(r.Timeout.Timeout))
			}
		}
		if r.Conv != nil && r.Conv.Stopped != "" && r.Cancel != nil && r.Cancel.Signal == event.SignalNone {
			// Cancelled while it waited for the user: nothing was sent.
			add(st.Dim, look.PrioSignal, m.line(r.Conv.Stopped), "conversation dropped, nothing sent")
			break
		}
		if !r.Flagged() && r.Cancel != nil && !r.Late.Response && r.Late.ProgressCrossed == 0 {
			if tk := r.Task; tk != nil {
				if tk.Status == wire.TaskCancelled {
					// What the server says of its task, not whether its work stopped.
					add(st.Dim, look.PrioSignal, "the task says cancelled (tasks/cancel answered)", "task says cancelled")
				} else {
					add(st.Dim, look.PrioSignal, "tasks/cancel sent; task last "+m.line(tk.Status)+", no terminal status seen", "no terminal status seen")
				}
				break
			}
			if r.Cancel.Signal == event.SignalStreamClosed {
				// A closed stream can carry nothing more: the cancel is final.
				add(st.Dim, look.PrioSignal, "stream closed; nothing more can come", "closed; nothing more can come", "stream closed")
			} else if watched, _, ok := r.WatchEnded(); ok {
				w := look.Dur(watched)
				add(st.Dim, look.PrioSignal, look.SignalText(r.Cancel.Signal)+"; nothing more came in "+w+" watched", "nothing more in "+w+" watched", "nothing more in "+w)
			} else {
				add(st.Dim, look.PrioSignal, look.SignalText(r.Cancel.Signal)+"; nothing more came", "nothing more came")
			}
		}
		if _, still, ok := r.WatchEnded(); ok && still {
			add(st.Flag, look.PrioFlag, "still sending when the watch ended", "still sending")
		}
	case session.StateFailed:
		// The code, then why: the why keeps 16 cells before the code gets
		// its longer wording, and takes what is left after it.
		label, why := m.failureText(r)
		if why == "" {
			addCut(st.Failed, label[0], 0)
			break
		}
		parts = append(parts, look.Part{Variants: label, Style: st.Failed, Prio: look.PrioSignal},
			look.Part{Variants: []string{why}, Style: st.Failed, Prio: look.PrioSignal, Cut: true, Keep: 16})
	case session.StateConnectionLost:
		addCut(st.Lost, m.line(r.LocalError), 0)
	case session.StateInputRequired:
		parts = append(parts, m.inputRequiredParts(r)...)
	case session.StateEndedByServer:
		n := fmt.Sprintf("%d %s", r.Notifications, look.CountNoun(r.Notifications, "update", "updates"))
		add(st.Dim, look.PrioSignal, "server ended it after "+n, "ended after "+n)
	case session.StateCompleted:
		addCut(st.Dim, m.resultSummary(r), 0)
	}
	return parts
}

// failureText says why a request failed: a label (the kind of failure
// and its code, longest wording first) and why, in the server's words
// less what repeats the row (see whyFirst); why is "" when there are no
// such words.
func (m *Model) failureText(r *session.Request) (label []string, why string) {
	switch {
	case r.ToolError:
		s := m.resultSummary(r)
		inner, quoted := strings.CutPrefix(s, "“")
		if !quoted {
			return []string{strings.TrimSpace("tool error " + s)}, ""
		}
		code, w := whyFirst(strings.TrimSuffix(inner, "”"), r.Target)
		if code == "" {
			return []string{"tool error"}, "“" + w + "”"
		}
		return []string{"tool error " + code, code}, "“" + w + "”"
	case r.Error != nil:
		msg := m.line(r.Error.Message)
		if code, w := whyFirst(msg, r.Target); code == "" || code == strconv.Itoa(r.Error.Code) {
			msg = w
		}
		code := strconv.Itoa(r.Error.Code)
		if msg == "" {
			return []string{"error " + code}, ""
		}
		return []string{"error " + code, code}, msg
	case r.LocalError != "":
		return []string{m.line(r.LocalError)}, ""
	}
	return []string{"failed"}, ""
}

// mcpErrorPrefix is what the TypeScript SDK puts before an error's
// message ("MCP error -32601: Tool x requires task augmentation").
var mcpErrorPrefix = regexp.MustCompile(`^MCP error (-?[0-9]+): *`)

// whyFirst takes from a failure's message what the row repeats, so that
// the words that say why are what its width is spent on: a leading "MCP
// error -32601: " (its code is returned, for the label) and a "Tool NAME "
// naming the row's own tool (shown as "…"). The detail shows the message
// whole.
func whyFirst(msg, tool string) (code, why string) {
	why = msg
	if sm := mcpErrorPrefix.FindStringSubmatch(why); sm != nil {
		code, why = sm[1], why[len(sm[0]):]
	}
	if tool != "" {
		if rest, ok := strings.CutPrefix(why, "Tool "+tool+" "); ok && rest != "" {
			why = "…" + rest
		}
	}
	return code, why
}

// viewEmpty tells a newcomer what to do first.
func (m *Model) viewEmpty(height int) string {
	st := m.styles
	var lines []string
	switch m.conn.state {
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
	case len(m.composer.Tools()) > 0:
		n := len(m.composer.Tools())
		return []string{fmt.Sprintf("Press %s to send one: pick one of the server's %d %s with %s, then %s sends it.", k("n"), n, look.CountNoun(n, "tool", "tools"), k("enter"), k("enter")), cancel}
	}
	return []string{"Press " + k("n") + " to compose a request: a tool call, a resource read, a prompt or any method.", cancel}
}

// hasTool reports whether the server's tools/list named a tool.
func (m *Model) hasTool(name string) bool {
	for _, t := range m.composer.Tools() {
		if t.Name == name {
			return true
		}
	}
	return false
}
