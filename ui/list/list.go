// Package list is the request list, inflight's main screen: a row per
// request with its live timer, its timeout's countdown and, in its last
// column, its progress, its cancel or its outcome with the flags of late
// traffic; a legacy server's own requests have rows of their own. The
// list keeps the selection (by ID, following the newest request until
// the user moves away), scrolls, filters (f) and clears what has finished
// (x); with nothing sent yet it tells a newcomer what to do.
//
// What the tracker does not say comes from the root: Facts (the
// authorization, what a proxy did) and the connection's state and tools
// for the empty screen, handed to Layout in an Input. The list opens
// nothing itself: enter asks the root to (Open, OpenIncoming).
package list

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// Model is the request list. The selection is kept by ID (history may
// evict old rows, shifting indices); offset is the position of the first
// visible row among the rows shown. While follow is set the newest request
// is selected.
type Model struct {
	selected wire.ID
	follow   bool
	offset   int
	rows     int // visible rows, set by Layout

	// filter hides the rows it does not keep; clearedAt (x) hides the
	// requests that had reached their fate by then. Neither touches the
	// tracker's history.
	filter    Filter
	clearedAt time.Time
	// shown holds the rows shown, in order, when filter or clearedAt
	// hides any or a legacy server's own requests add rows of their own
	// (nil: every request is shown, and positions are tracker indices).
	// Layout rebuilds it.
	shown    []listRow
	filtered bool
	// srv is the selected row when it is one of the server's own requests
	// (incoming.go); selected is then the request it is tied to (zero
	// when untied).
	srv *session.ServerRequest
	// onlyTasksKey is the history shown was built for when the filter
	// and x hide nothing: then the rows change only with the history
	// (its length and evictions, the server's requests), and Layout need
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

	// summaries caches what each completed request returned, for its row
	// (summary.go).
	summaries map[wire.ID]string
	// in is what the root said at the last Layout.
	in Input
}

// Input is what the root knows that the Env does not say, handed to
// Layout.
type Input struct {
	// Facts is what the root knows of the requests (nil: nothing).
	Facts Facts
	// Conn is the connection's state, which the empty list tells.
	Conn Conn
	// Tools is how many tools the server's tools/list named, and
	// SlowTool whether one is the demo server's slow: the first-step hint
	// speaks of what this server has.
	Tools    int
	SlowTool bool
	// Redact hides the secrets in a result's bytes before they are parsed
	// and summarised (nil: none to hide): the summary is cut to fit its
	// column, and a cut secret would no longer match the redactor.
	// Env.Line redacts too, but it also rewrites what it is given for one
	// terminal line, which a result must not be before it is parsed.
	Redact func(string) string
	// Proxy: the list is a view on a proxy (inflight attach), whose rows
	// are its host's requests, so the empty list waits for the host, not
	// the user. HostURL is the URL to give the host, when the view is the
	// HTTP proxy's own (the one its header names).
	Proxy   bool
	HostURL string
}

// Conn is where the connection stands, as the empty list tells it.
type Conn uint8

const (
	Connecting Conn = iota
	Connected
	Lost
)

// Open asks the root to open the detail of request ID.
type Open struct{ ID wire.ID }

// OpenIncoming asks the root to open the detail of one of the server's
// own requests.
type OpenIncoming struct{ Request *session.ServerRequest }

// New is the list following the newest request, filtering nothing.
func New() Model { return Model{follow: true} }

// Update moves the selection (the arrows, page keys, home and end, the
// wheel), cycles the filter (f), clears what finished (x) and asks the
// root to open the selected row's detail (enter). A key it does not use
// is screen.Unused.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		act := m.key(env, msg)
		return m, act
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scroll(env.Tracker, -look.WheelRows)
		case tea.MouseWheelDown:
			m.scroll(env.Tracker, look.WheelRows)
		}
	}
	return m, nil
}

// Selected is the selected request's ID: the request a selected server's
// request is tied to, zero when none (nothing shown, or an untied one).
func (m Model) Selected() wire.ID { return m.selected }

// Incoming is the selected row when it is one of the server's own
// requests (nil: a request, or nothing).
func (m Model) Incoming() *session.ServerRequest { return m.srv }

// Following reports whether the newest request is selected as it comes.
func (m Model) Following() bool { return m.follow }

// Filter is the filter the list shows.
func (m Model) Filter() Filter { return m.filter }

// Summary is what request id returned, in a few words, once its row was
// laid out ("" when it was not, or returned nothing to say).
func (m Model) Summary(id wire.ID) string { return m.summaries[id] }

// Select selects request id, following the newest requests from then on
// or not.
func (m Model) Select(id wire.ID, follow bool) Model {
	m.selected, m.srv, m.follow = id, nil, follow
	return m
}

// SelectIncoming selects the row of s, one of the server's requests: keys
// then act on it, not on its request.
func (m Model) SelectIncoming(t *session.Tracker, s *session.ServerRequest) Model {
	m.selectIncoming(t, s)
	return m
}

// Follow makes the list follow the newest request again (a request the
// user just sent is selected when it is begun).
func (m Model) Follow() Model {
	m.follow = true
	return m
}

// FollowNewest selects the newest request while following: the root
// calls it whenever the tracker changed.
func (m Model) FollowNewest(t *session.Tracker) Model {
	if m.follow && t.Len() > 0 && !m.followsServerRow(t) {
		m.selected = t.At(t.Len() - 1).ID
		m.srv = nil
	}
	return m
}

// ShowNew shows every request again when the filter would hide one just
// sent: what is sent is never sent out of sight.
func (m Model) ShowNew() Model {
	if m.filter.hidesNew() {
		m.filter = FilterAll
	}
	return m
}

// Renamed keeps the selection and the cached summary with a request the
// tracker renamed (a host's session used its ID again): was is the old
// ID, now the new one.
func (m Model) Renamed(was, now wire.ID) Model {
	if m.selected == was {
		m.selected = now
	}
	if s, ok := m.summaries[was]; ok {
		delete(m.summaries, was)
		m.summaries[now] = s
	}
	return m
}

// SelectedPos is the selection's position among the rows shown; ok is
// false when it is not shown (hidden, evicted or none).
func (m Model) SelectedPos(t *session.Tracker) (pos int, ok bool) { return m.selectedPos(t) }

// IncomingAt is the server's request shown at position pos among the rows
// shown (nil: a request's row).
func (m Model) IncomingAt(pos int) *session.ServerRequest { return m.shownRow(pos).srv }

// Layout decides which rows the list shows (its filter, x), keeps the
// selection on one of them, scrolls so that the selection stays visible
// (while following, the newest row is at the bottom), widens the REQUEST
// column to the labels on screen, and summarises what the visible settled
// requests returned, once each, for their rows. The root calls it after
// every update.
func (m Model) Layout(env screen.Env, in Input, width, height int) Model {
	m.in = in
	t := env.Tracker
	rows := height - 1 // under the column header
	m.rows = rows
	m.refreshShown(t)
	n := m.shownLen(t)
	if n == 0 || rows < 1 {
		m.offset = 0
		if n == 0 && m.filtered {
			// Nothing shown: no key may act on a hidden request.
			m.selected = wire.ID{}
		}
		return m
	}
	idx := m.keepSelectionShown(t, n)
	off := m.offset
	if m.follow {
		off = max(0, n-rows)
	}
	if idx < off {
		off = idx
	}
	if idx >= off+rows {
		off = idx - rows + 1
	}
	m.offset = min(max(off, 0), max(0, n-rows))
	m.measure(env, width, n)
	return m
}

// keepSelectionShown returns the selection's position among the n rows
// shown, after moving it to a row shown when it is hidden (or gone): the
// nearest row shown after it, else the newest shown, takes its place (an
// incoming row's own request first).
func (m *Model) keepSelectionShown(t *session.Tracker, n int) int {
	idx, ok := m.selectedPos(t)
	if ok {
		return idx
	}
	idx = n - 1
	if s := m.srv; s != nil && s.TiedBy == session.TiedNone && m.filtered {
		// An untied question's row: the row that came after it.
		idx = min(m.rowsAfterUntied(t, s), n-1)
	} else if ti, found := t.Index(m.selected); found && m.filtered {
		idx = min(m.rowsFrom(ti), n-1)
	}
	m.srv = nil
	m.selectRowAt(t, idx)
	return idx
}

// measure widens the REQUEST and ID columns to the rows in the window and
// summarises what its settled requests returned.
func (m *Model) measure(env screen.Env, width, n int) {
	t := env.Tracker
	method := 0
	if width >= 140 {
		method = 1
	}
	for i := m.offset; i < min(n, m.offset+m.rows); i++ {
		if row := m.shownRow(i); row.srv != nil {
			if w := lipgloss.Width(incomingLabel(env.Line, row.srv, true)); w > m.labelW[method] {
				m.labelW[method] = w
			}
			continue
		}
		r := m.shownAt(t, i)
		// A host's request's label is drawn after its mark (⇄).
		if w := lipgloss.Width(hostMark(r) + look.RequestLabel(r, method == 1, env.Line)); w > m.labelW[method] {
			m.labelW[method] = w
		}
		if w := lipgloss.Width(env.Line(r.ID.String())); w > m.idW {
			m.idW = w
		}
		if r.State == session.StateCompleted || (r.State == session.StateFailed && r.ToolError) {
			m.cacheSummary(t, r)
		}
	}
}

// columns is the list's layout for width.
func (m Model) columns(env screen.Env, width int) columns {
	t := env.Tracker
	n := t.Len()
	if n == 0 {
		return layoutColumns(width, 2, 0)
	}
	method := 0
	if width >= 140 {
		method = 1
	}
	c := layoutColumns(width, max(m.idW, lipgloss.Width(env.Line(t.At(n-1).ID.String()))), m.labelW[method])
	if m.in.Proxy {
		c = c.hostMarked(m.labelW[method])
	}
	return c
}

// View draws the column header over the rows in the window Layout chose,
// the selected one highlighted; with no request yet, what to do first.
func (m Model) View(env screen.Env, width, height int) string {
	if height < 2 {
		return ""
	}
	t := env.Tracker
	if t.Len() == 0 {
		return m.Empty(env, width, height)
	}
	cols := m.columns(env, width)
	rows := height - 1
	n := m.shownLen(t)
	// Layout chose the window (keeping the selection in it).
	from, end := m.window(t, rows)

	p := m.painter(env, width)
	var b strings.Builder
	b.WriteString(p.columnHeader(cols, from, n-end))
	if n == 0 {
		b.WriteByte('\n')
		b.WriteString(m.viewNoMatch(env, width, rows))
		return b.String()
	}
	idx, ok := m.selectedPos(t)
	if !ok {
		idx = n - 1
	}
	// Only the visible rows are rendered: 10 000 requests cost what the
	// visible ones cost.
	for i := from; i < end; i++ {
		b.WriteByte('\n')
		if row := m.shownRow(i); row.srv != nil {
			b.WriteString(p.incomingRow(row.srv, cols, i == idx, p.now))
			continue
		}
		b.WriteString(p.row(m.shownAt(t, i), cols, i == idx, p.now))
	}
	shown := end - from
	if free := rows - shown; free >= 6 && onlyHousekeeping(t) {
		b.WriteByte('\n')
		b.WriteString(m.Empty(env, width, free-1))
		return b.String()
	}
	for i := shown; i < rows; i++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// painter is what draws the rows of this frame.
func (m Model) painter(env screen.Env, width int) painter {
	facts := m.in.Facts
	if facts == nil {
		facts = noFacts{}
	}
	return painter{st: env.Styles, line: env.Line, tracker: env.Tracker, now: env.Now, width: width, facts: facts, summaries: m.summaries}
}

// ForgetWidths lets the ID and REQUEST columns shrink back to what is on
// screen from now on: a replay moved back in time shows the columns as
// wide as the run had shown by then, not as what it showed later.
func (m Model) ForgetWidths() Model {
	m.labelW, m.idW = [2]int{}, 0
	return m
}
