package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/keymap"
	"inflight/msgtext"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// scrollView is a window over an append-only sequence (the protocol log,
// stderr) whose oldest items may be dropped. It follows the newest items
// until the user scrolls; from then on it is anchored on the absolute
// position of its first row, so arriving items do not move what is being
// read.
type scrollView struct {
	follow bool
	top    int64 // absolute position of the first row when not following
	rows   int
}

// logView is the protocol log with its filter, a selected entry (enter
// opens it whole) and the entry viewer.
type logView struct {
	scrollView
	filter textinput.Model
	// sel is the absolute position of the selected entry; while the view
	// follows the newest entries, the newest is selected.
	sel int64
	// open: the viewer shows entry openAbs in vp.
	open    bool
	openAbs int64
	vp      viewport.Model
	// content is the open entry's text before wrapping; wrapped is the
	// width it was last laid out at (0: lay it out again).
	content string
	wrapped int
	// matches is what the filter matches, kept up to date by layoutLog so
	// that View only reads it.
	matches logMatches
}

// logMatches is the filter's result: the absolute positions of the
// matching entries among those scanned so far. New entries are scanned as
// they come; a needle that extends the last one searches only its
// matches, which keeps typing in a full log quick.
type logMatches struct {
	needle  string
	scanned int64 // log Total when last scanned
	abs     []int64
}

// pager is how the payload views (the log entry, the detail, stderr) lay
// out a line wider than the screen. They wrap it by default, so that all
// of a payload can be read without a key (the cause of an error is often
// at its end); w cuts lines instead and ←/→ scroll sideways, for JSON
// whose shape wrapping hides, as a pager's -S does. One setting serves
// all three views: it is a preference about reading, not about one view.
type pager struct {
	chop bool
	// xoff is stderr's sideways scroll (the detail and the entry keep
	// theirs in their viewports).
	xoff int
}

// horizontalStep is how far ←/→ scroll a cut payload.
const horizontalStep = 8

// selected is the index in it of the selected entry.
func (lv *logView) selected(it items) int {
	if it.n == 0 {
		return -1
	}
	if lv.follow {
		return it.n - 1
	}
	i := sort.Search(it.n, func(i int) bool { return it.abs(i) >= lv.sel })
	return min(i, it.n-1) // an evicted or filtered-out selection moves to the next one kept
}

// moveSelection handles the movement keys in the log: they move the
// selection, and the window follows it.
func (m *Model) moveSelection(msg tea.KeyPressMsg, it items) bool {
	i, ok := m.moved(msg, m.logv.selected(it), m.logv.rows, it.n-1)
	if !ok {
		return false
	}
	m.selectLogRow(i, it)
	return true
}

// selectLogRow selects row i of it (clamped), and scrolls so it shows.
func (m *Model) selectLogRow(i int, it items) {
	lv := &m.logv
	if it.n == 0 {
		return
	}
	i = min(max(i, 0), it.n-1)
	lv.sel = it.abs(i)
	rows := max(1, lv.rows)
	from := lv.start(it)
	switch {
	case i < from:
		from = i
	case i >= from+rows:
		from = i - rows + 1
	}
	lv.follow = i == it.n-1
	lv.top = it.abs(max(0, from))
}

// openEntry shows the selected entry whole: everything the row cuts.
func (m *Model) openEntry(it items) {
	lv := &m.logv
	i := lv.selected(it)
	if i < 0 {
		return
	}
	lv.open, lv.openAbs = true, it.abs(i)
	lv.vp = viewport.New()
	lv.vp.SetHorizontalStep(horizontalStep)
	lv.content, lv.wrapped = m.entryText(lv.openAbs), 0
}

// layoutLog brings the filter's matches up to date and lays out the open
// entry: wrapped to the width (long lines wrap rather than run off the
// screen, since the viewer is there to show all of it), or cut, with the
// viewport scrolling sideways.
func (m *Model) layoutLog(height int) {
	m.refreshMatches()
	lv := &m.logv
	if !lv.open {
		return
	}
	lv.vp.SetWidth(m.width)
	lv.vp.SetHeight(max(1, height-1))
	if lv.wrapped != m.width {
		if m.pager.chop {
			lv.vp.SetContent(lv.content)
		} else {
			lv.vp.SetContent(ansi.Wrap(lv.content, max(10, m.width), ""))
			lv.vp.SetXOffset(0)
		}
		lv.wrapped = m.width
	}
}

// entryText is one log entry in full: its facts, then its bytes as indented
// JSON (or as text when they are not JSON), made inert.
func (m *Model) entryText(abs int64) string {
	st := m.styles
	lg := m.tracker.Log()
	first := lg.Total() - int64(lg.Len())
	if abs < first {
		return st.Dim.Render("(this entry has left the bounded log)")
	}
	e := lg.At(int(abs - first))
	what, msg := describeEntry(e)
	var b strings.Builder
	// The facts are sanitised before the violation's styling is added:
	// sanitising styled text would draw our own escapes as ␛.
	facts := []string{e.Time.Format("15:04:05.000000"), logDir(e).String(), m.line(what)}
	if id := logID(e.ID); id != "" {
		facts = append(facts, "id "+m.line(id))
	}
	if e.Status != 0 {
		facts = append(facts, fmt.Sprintf("HTTP %d", e.Status))
	}
	if e.Violation != "" {
		facts = append(facts, st.Flag.Render("⚠ "+m.line(e.Violation)))
	}
	b.WriteString(strings.Join(facts, " · ") + "\n")
	if v := m.verdictText(e); v != "" {
		b.WriteString(v + "\n")
	}
	if e.Coalesced > 0 {
		b.WriteString(st.Dim.Render(fmt.Sprintf("stands for %d progress notifications, until %s; the latest below", e.Coalesced+1, e.LastTime.Format("15:04:05.000"))) + "\n")
	}
	if e.Truncated > 0 {
		b.WriteString(st.Warn.Render(fmt.Sprintf("%d bytes were not kept", e.Truncated)) + "\n")
	}
	b.WriteString("\n")
	switch {
	case len(e.Raw) > 0 && json.Valid(e.Raw):
		b.WriteString(m.prettyJSON(e.Raw))
	case len(e.Raw) > 0:
		b.WriteString(m.block(string(e.Raw)))
	default:
		b.WriteString(m.block(msg))
	}
	return b.String()
}

// viewEntry draws the entry viewer (layoutEntry sized and filled it).
func (m *Model) viewEntry() string {
	st := m.styles
	lv := &m.logv
	how := "long lines wrapped (w: cut them)"
	if m.pager.chop {
		how = fmt.Sprintf("lines cut at column %d, ←/→ scroll (w: wrap)", lv.vp.XOffset()+1)
	}
	title := fmt.Sprintf("LOG ENTRY · %d%% · %s · esc back to the log", int(lv.vp.ScrollPercent()*100), how)
	return st.ColumnHeader.Render(look.Fit(title, m.width)) + "\n" + lv.vp.View()
}

// items is the sequence a scrollView shows: n items whose absolute
// positions (Total-based, so they survive eviction) abs returns, ascending.
type items struct {
	n   int
	abs func(i int) int64
}

// start is the index of the first visible item.
func (v *scrollView) start(it items) int {
	rows := max(1, v.rows)
	last := max(0, it.n-rows) // the first index of the bottom page
	if v.follow {
		return last
	}
	i := sort.Search(it.n, func(i int) bool { return it.abs(i) >= v.top })
	return min(i, last)
}

// moved is index i after a movement key in a window of rows (a page is
// one row less, so that a line of context stays), with end as where the
// bottom key goes; ok is false for any other key. The caller clamps.
func (m *Model) moved(msg tea.KeyPressMsg, i, rows, end int) (int, bool) {
	k := m.keys
	page := max(1, rows-1)
	switch {
	case key.Matches(msg, k.Up):
		return i - 1, true
	case key.Matches(msg, k.Down):
		return i + 1, true
	case key.Matches(msg, k.PageUp):
		return i - page, true
	case key.Matches(msg, k.PageDown):
		return i + page, true
	case key.Matches(msg, k.Top):
		return 0, true
	case key.Matches(msg, k.Bottom):
		return end, true
	}
	return i, false
}

// handleScrollKey moves the window; it reports whether the key was used.
func (m *Model) handleScrollKey(v *scrollView, msg tea.KeyPressMsg, it items) bool {
	i, ok := m.moved(msg, v.start(it), v.rows, it.n)
	if !ok {
		return false
	}
	last := max(0, it.n-max(1, v.rows))
	i = min(max(i, 0), last)
	v.follow = i >= last
	if it.n > 0 {
		v.top = it.abs(i)
	}
	return true
}

// logItems is the log as the view shows it: every entry, or with a filter
// only the matching ones (layoutLog found them).
func (m *Model) logItems() items {
	lg := m.tracker.Log()
	first := lg.Total() - int64(lg.Len())
	if m.logv.filter.Value() == "" {
		return items{n: lg.Len(), abs: func(i int) int64 { return first + int64(i) }}
	}
	match := m.logv.matches.abs
	// Entries the bounded log dropped since are skipped.
	skip := sort.Search(len(match), func(i int) bool { return match[i] >= first })
	match = match[skip:]
	return items{n: len(match), abs: func(i int) int64 { return match[i] }}
}

// refreshMatches scans what the filter has not seen: the entries logged
// since, or the whole log for a new needle.
func (m *Model) refreshMatches() {
	lv := &m.logv
	needle := strings.ToLower(lv.filter.Value())
	mt := &lv.matches
	if needle == "" {
		*mt = logMatches{}
		return
	}
	lg := m.tracker.Log()
	first := lg.Total() - int64(lg.Len())
	skip := sort.Search(len(mt.abs), func(i int) bool { return mt.abs[i] >= first })
	mt.abs = mt.abs[skip:]
	switch {
	case needle == mt.needle:
	case mt.needle != "" && strings.Contains(needle, mt.needle):
		// Narrowed: only what matched before can match now.
		kept := mt.abs[:0]
		for _, abs := range mt.abs {
			if m.logMatches(lg.At(int(abs-first)), needle) {
				kept = append(kept, abs)
			}
		}
		mt.abs = kept
	default:
		mt.abs, mt.scanned = nil, first
	}
	mt.needle = needle
	for abs := max(mt.scanned, first); abs < lg.Total(); abs++ {
		if m.logMatches(lg.At(int(abs-first)), needle) {
			mt.abs = append(mt.abs, abs)
		}
	}
	mt.scanned = lg.Total()
}

// stderrItems is the server's stderr as the view shows it.
func (m *Model) stderrItems() items {
	sl := m.tracker.Stderr()
	first := sl.Total() - int64(sl.Len())
	return items{n: sl.Len(), abs: func(i int) int64 { return first + int64(i) }}
}

func (m *Model) handleLogKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	lv := &m.logv
	if lv.open {
		if key.Matches(msg, m.keys.Back) {
			lv.open = false
			return nil, true
		}
		return nil, m.handlePagerKey(msg, &lv.vp)
	}
	if lv.filter.Focused() {
		switch msg.String() {
		case "esc":
			lv.filter.SetValue("")
			lv.filter.Blur()
			m.refreshMatches()
			return nil, true
		case "enter":
			lv.filter.Blur()
			return nil, true
		}
		var cmd tea.Cmd
		lv.filter, cmd = lv.filter.Update(msg)
		lv.follow = true
		m.refreshMatches()
		return cmd, true
	}
	if key.Matches(msg, m.keys.Filter) {
		lv.follow = true
		return lv.filter.Focus(), true
	}
	if key.Matches(msg, m.keys.Back) && lv.filter.Value() != "" {
		lv.filter.SetValue("")
		m.refreshMatches()
		return nil, true
	}
	if key.Matches(msg, m.keys.Open) {
		m.openEntry(m.logItems())
		return nil, true
	}
	return nil, m.moveSelection(msg, m.logItems())
}

// handlePagerKey is the keys of a payload in a viewport (the log entry,
// the detail): scrolling, and w to wrap or cut long lines. Any other key
// is left to the screen's global keys, so that none is swallowed.
func (m *Model) handlePagerKey(msg tea.KeyPressMsg, vp *viewport.Model) bool {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		vp.PageUp()
	case key.Matches(msg, k.PageDown):
		vp.PageDown()
	case key.Matches(msg, k.Top):
		vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		vp.GotoBottom()
	case key.Matches(msg, k.Left):
		vp.ScrollLeft(horizontalStep)
	case key.Matches(msg, k.Right):
		vp.ScrollRight(horizontalStep)
	case key.Matches(msg, k.Wrap):
		m.toggleWrap()
	default:
		return false
	}
	return true
}

// handleStderrKey scrolls stderr, and wraps or cuts its long lines.
func (m *Model) handleStderrKey(msg tea.KeyPressMsg) bool {
	switch k := m.keys; {
	case key.Matches(msg, k.Wrap):
		m.toggleWrap()
	case key.Matches(msg, k.Left):
		m.pager.xoff = max(0, m.pager.xoff-horizontalStep)
	case key.Matches(msg, k.Right):
		m.pager.xoff = min(m.pager.xoff+horizontalStep, max(0, m.widestStderr()-m.width/2))
	default:
		return m.handleScrollKey(&m.stderrv, msg, m.stderrItems())
	}
	return true
}

// toggleWrap switches every payload view between wrapping long lines and
// cutting them; the views lay their content out again.
func (m *Model) toggleWrap() {
	m.pager.chop = !m.pager.chop
	m.pager.xoff = 0
	m.logv.wrapped = 0
	m.detail.wrapped = 0
	if m.pager.chop {
		m.setStatus(levelInfo, "long lines are cut: ←/→ scroll sideways, w wraps them again")
	} else {
		m.setStatus(levelInfo, "long lines wrap: w cuts them")
	}
}

// widestStderr is the width of the widest stderr line kept on screen.
func (m *Model) widestStderr() int {
	sl := m.tracker.Stderr()
	it := m.stderrItems()
	first := sl.Total() - int64(sl.Len())
	w := 0
	from := m.stderrv.start(it)
	for i := from; i < min(it.n, from+max(1, m.stderrv.rows)); i++ {
		w = max(w, ansi.StringWidth(m.line(sl.At(int(it.abs(i)-first)).Text))+14)
	}
	return w
}

// wheelRows is how many rows one notch of the mouse wheel scrolls.
const wheelRows = 3

// handleWheel scrolls the view under the mouse wheel: the list, the log
// (its selection, as ↑/↓ would), the open entry, the detail, stderr and
// the composer's pickers. The wheel reaches the model because View asks
// for mouse reports (tea.View.MouseMode, in view.go).
func (m *Model) handleWheel(msg tea.MouseWheelMsg) tea.Cmd {
	var d int
	switch msg.Button {
	case tea.MouseWheelUp:
		d = -wheelRows
	case tea.MouseWheelDown:
		d = wheelRows
	}
	var cmd tea.Cmd
	switch m.mode {
	case keymap.ModeList:
		if m.prompt.kind == promptNone && d != 0 {
			m.scrollList(d)
		}
	case keymap.ModeComposer:
		// As before the wheel had a case of its own: the composer's.
		return m.updateComposer(msg)
	case keymap.ModeLog:
		if m.logv.open {
			m.logv.vp, cmd = m.logv.vp.Update(msg)
			return cmd
		}
		if d != 0 {
			it := m.logItems()
			m.selectLogRow(m.logv.selected(it)+d, it)
		}
	case keymap.ModeDetail:
		m.detail.vp, cmd = m.detail.vp.Update(msg)
	case keymap.ModeAuth:
		m.scrollAuth(d)
	case keymap.ModeStderr:
		switch {
		case d != 0:
			v := &m.stderrv
			it := m.stderrItems()
			last := max(0, it.n-max(1, v.rows))
			i := min(max(v.start(it)+d, 0), last)
			v.follow = i >= last
			if it.n > 0 {
				v.top = it.abs(i)
			}
		case msg.Button == tea.MouseWheelLeft && m.pager.chop:
			m.pager.xoff = max(0, m.pager.xoff-horizontalStep)
		case msg.Button == tea.MouseWheelRight && m.pager.chop:
			m.pager.xoff = min(m.pager.xoff+horizontalStep, max(0, m.widestStderr()-m.width/2))
		}
	}
	return cmd
}

// viewLog renders the protocol log: every message in and out with its time,
// direction, method and ID; violations stand out, late traffic is flagged
// and crossed traffic marked, as the tracker judged them. Only visible
// lines are rendered.
func (m *Model) viewLog(height int) string {
	if m.logv.open {
		return m.viewEntry()
	}
	st := m.styles
	lg := m.tracker.Log()
	lv := &m.logv
	rows := height - 2
	it := m.logItems()
	from := lv.start(it)
	to := min(it.n, from+rows)
	first := lg.Total() - int64(lg.Len())
	var b strings.Builder
	title := fmt.Sprintf("PROTOCOL LOG · %d entries", lg.Len())
	if dropped := first; dropped > 0 {
		title += fmt.Sprintf(" (oldest %d dropped)", dropped)
	}
	if lv.filter.Value() != "" {
		title += fmt.Sprintf(" · %d %s", it.n, look.CountNoun(it.n, "match", "matches"))
	}
	if !lv.follow && it.n > 0 {
		title += fmt.Sprintf(" · showing %d–%d of %d (G: newest)", from+1, to, it.n)
	}
	b.WriteString(st.ColumnHeader.Render(look.Fit(title, m.width)))
	b.WriteByte('\n')
	// The ID column is as wide as the widest ID on screen (within bounds),
	// so internal IDs and large ones are not cut to "i… ".
	whatW, idW := logColumns(m.width)
	for i := from; i < to; i++ {
		idW = max(idW, min(10, len(logID(lg.At(int(it.abs(i)-first)).ID))))
	}
	if lv.filter.Focused() || lv.filter.Value() != "" {
		b.WriteString(look.Fit(lv.filter.View(), m.width))
	} else {
		head := "  TIME          DIR    " + look.Fit("WHAT", whatW) + " " + look.FitLeft("ID", idW) + "  MESSAGE"
		b.WriteString(st.Dim.Render(look.Fit(head, m.width)))
	}
	sel := lv.selected(it)
	for i := from; i < to; i++ {
		b.WriteByte('\n')
		line := m.logLine(lg.At(int(it.abs(i)-first)), whatW, idW)
		if i == sel && !lv.follow {
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

// logFilterPlaceholder says what the filter matches: what a row shows,
// and the entry's bytes.
const logFilterPlaceholder = "matches time, direction (in/out/loc), method, ID, state, message, payload"

// logRow is what a log row shows, as plain text: the filter matches it,
// and logLine styles it.
type logRow struct {
	time, dir, what, id, msg string
	// mark is the tracker's verdict in words ("⚑ late +0.3s", "crossed
	// the cancel +1ms"), "" when there is none.
	mark string
}

// rowOf is what entry e's row shows.
func (m *Model) rowOf(e session.LogEntry) logRow {
	what, msg := describeEntry(e)
	if e.Status != 0 {
		msg = fmt.Sprintf("HTTP %d %s", e.Status, msg)
	}
	row := logRow{time: e.Time.Format("15:04:05.000"), what: m.line(what), id: m.line(logID(e.ID)), msg: m.line(msg)}
	switch logDir(e) {
	case session.DirOut:
		row.dir = "→ out"
	case session.DirIn:
		row.dir = "← in "
	default:
		row.dir = "· loc"
	}
	switch e.Verdict {
	case session.VerdictLate:
		row.mark = "⚑ late " + look.Ago(e.AfterCancel)
	case session.VerdictCrossed:
		row.mark = "crossed the cancel " + look.Ago(e.AfterCancel)
	}
	return row
}

// logMatches reports whether entry e matches needle (lower case): its row
// as shown, or its bytes.
func (m *Model) logMatches(e session.LogEntry, needle string) bool {
	r := m.rowOf(e)
	for _, s := range []string{r.time, r.dir, r.what, r.id, r.msg, r.mark, e.Violation} {
		if strings.Contains(strings.ToLower(s), needle) {
			return true
		}
	}
	return bytes.Contains(bytes.ToLower(e.Raw), []byte(needle))
}

func (m *Model) logLine(e session.LogEntry, whatW, idW int) string {
	st := m.styles
	r := m.rowOf(e)
	var dir string
	switch logDir(e) {
	case session.DirOut:
		dir = st.Out.Render(r.dir)
	case session.DirIn:
		dir = st.In.Render(r.dir)
	default:
		dir = st.Local.Render(r.dir)
	}
	whatCell := look.Fit(r.what, whatW)
	msg := r.msg
	switch {
	case e.Violation != "":
		// The violation takes the WHAT column, so the message keeps its room
		// (for a rejected line the message is why it was rejected); a
		// verdict then leads the message.
		whatCell = st.Flag.Render(look.Fit("⚠ "+m.line(e.Violation), whatW))
		if r.mark != "" {
			msg = r.mark + " · " + msg
		}
	case r.mark != "":
		// The verdict takes the WHAT column as a violation does: the
		// message says what it was (progress, result, error), and the
		// mark is never the part cut off.
		mark := r.mark
		if lipgloss.Width(mark) > whatW {
			mark = strings.TrimSuffix(mark, " "+look.Ago(e.AfterCancel))
		}
		style := st.Flag
		if e.Verdict == session.VerdictCrossed {
			style = st.Dim
		}
		whatCell = style.Render(look.Fit(mark, whatW))
	}
	return look.Fit(fmt.Sprintf("  %s  %s  %s %s  %s", r.time, dir, whatCell, look.FitLeft(r.id, idW), msg), m.width)
}

// verdictText is the entry view's line about the tracker's verdict on the
// entry, "" when there is none.
func (m *Model) verdictText(e session.LogEntry) string {
	st := m.styles
	since, fate := "the cancel", "ignored"
	if r, ok := m.tracker.Get(e.ID); ok {
		if r.Cancel == nil {
			since = "the request was given up"
		}
		fate = lateFate(r)
	}
	switch e.Verdict {
	case session.VerdictLate:
		return st.Flag.Render(fmt.Sprintf("⚑ late %s: arrived %s after %s, past the crossing window — flagged, and %s",
			look.Ago(e.AfterCancel), fmtFine(e.AfterCancel), since, fate)) + st.Dim.Render(" · "+m.crossingBasis())
	case session.VerdictCrossed:
		return st.Dim.Render(fmt.Sprintf("crossed the cancel in flight: arrived %s after %s, within the crossing window — not flagged, %s · %s",
			fmtFine(e.AfterCancel), since, fate, m.crossingBasis()))
	}
	return ""
}

// logColumns sizes the WHAT and ID columns: the message gets the rest, and
// it is often the part that explains (why a line was rejected).
func logColumns(width int) (what, id int) {
	switch {
	case width >= 140:
		return 30, 6
	case width >= 100:
		return 27, 3
	}
	return 22, 3
}

// logDir is the direction the log draws an entry with: as the trace
// records it, except that a cancel event is inflight's own note (the
// notifications/cancelled or tasks/cancel it sent is a → out row of its
// own, and a closed stream sends nothing), so it is drawn local.
func logDir(e session.LogEntry) session.Direction {
	if e.Kind == event.CancelSent {
		return session.DirLocal
	}
	return e.Dir
}

// logID is an ID as the log shows it: the client's own housekeeping IDs
// ("inflight-3") are shortened to i3 so they do not crowd the message.
func logID(id wire.ID) string {
	if id.IsZero() {
		return ""
	}
	if s := id.Raw(); strings.HasPrefix(s, `"inflight-`) {
		return "i" + strings.TrimSuffix(strings.TrimPrefix(s, `"inflight-`), `"`)
	}
	return id.String()
}

// describeEntry says what a log entry is and what it carried: a message
// in msgtext's words (as replay words it), its bytes being the entry
// view's business.
func describeEntry(e session.LogEntry) (what, msg string) {
	if e.IsState {
		return "state", look.StateLookOf(e.From).Word + " → " + look.StateLookOf(e.State).Word
	}
	what, msg = e.Method, e.Text
	switch e.Kind {
	case event.Sent, event.Received:
		switch e.MsgKind {
		case wire.KindResult, wire.KindError:
			if what == "" {
				what = e.MsgKind.String()
			}
		case wire.KindInvalid:
			what = e.Kind.String()
		}
		msg = msgtext.Raw(e.Raw, e.Method)
		if e.Truncated > 0 && len(e.Raw) > 0 && !json.Valid(e.Raw) {
			// Cut bytes are no message: say so rather than show a stub.
			msg = fmt.Sprintf("(%d bytes, %d of them not kept) %s", len(e.Raw)+e.Truncated, e.Truncated, msgtext.Clip(string(e.Raw), 80))
		}
		if e.Coalesced > 0 {
			what = fmt.Sprintf("progress ×%d", e.Coalesced+1)
			msg = fmt.Sprintf("merged, until %s; latest: %s", e.LastTime.Format("15:04:05.000"), msg)
		}
	case event.Malformed:
		// Why it was rejected first: the raw bytes are often just noise.
		what, msg = "malformed", e.Text+" · "+msgtext.Clip(string(e.Raw), 200)
	case event.CancelSent:
		// inflight noting its cancel: the signal's own message, if it has
		// one, is the → out row before this one.
		what, msg = "cancel", look.SignalText(e.Signal)
		if e.Text != "" && e.Signal != event.SignalNotification {
			// notifications/cancelled carries the reason, on its own row;
			// a closed stream or tasks/cancel does not.
			msg += " · " + msgtext.Quote(e.Text, 80)
		}
	case event.RoundTrip:
		// The client's own timed request: one sample of the round trip the
		// crossing window is judged by.
		what, msg = "round trip", fmtFine(e.RTT)
		if e.Text != "" {
			msg += " for " + e.Text // the value first: it is what is cut last
		}
	case event.StreamClosed:
		what = "stream closed"
		if e.ByClient {
			what += " by inflight"
		}
	default:
		what = strings.ReplaceAll(e.Kind.String(), "_", " ")
	}
	return what, msg
}

// viewStderr shows the stdio server's stderr, newest at the bottom. Long
// lines wrap (or, cut, scroll sideways: see pager).
func (m *Model) viewStderr(height int) string {
	st := m.styles
	sl := m.tracker.Stderr()
	v := &m.stderrv
	rows := height - 1
	it := m.stderrItems()
	first := sl.Total() - int64(sl.Len())
	const stamp = 14 // "15:04:05.000  "
	textW := max(10, m.width-stamp)
	lines := func(i int) []string {
		text := m.line(sl.At(int(it.abs(i) - first)).Text)
		if m.pager.chop {
			return []string{ansi.Cut(text, m.pager.xoff, m.pager.xoff+textW)}
		}
		// Wrapped at spaces where it can be: these are sentences.
		return strings.Split(ansi.Wrap(text, textW, ""), "\n")
	}
	from := v.start(it)
	if !m.pager.chop {
		// Wrapped lines take more than a row: the bottom page starts where
		// the last lines fill the screen.
		need, i := 0, it.n-1
		for ; i >= 0 && need+len(lines(i)) <= rows; i-- {
			need += len(lines(i))
		}
		from = min(from, max(0, i+1))
	}
	var b strings.Builder
	title := fmt.Sprintf("SERVER STDERR · %d lines", sl.Len())
	if m.pager.chop {
		title += fmt.Sprintf(" · cut at column %d, ←/→ scroll, w wraps", m.pager.xoff+1)
	}
	if !v.follow && it.n > 0 {
		title += fmt.Sprintf(" · from line %d (G: newest)", from+1)
	}
	title += " (the server's own log; not an error by itself)"
	b.WriteString(st.ColumnHeader.Render(look.Fit(title, m.width)))
	n := 0
	for i := from; i < it.n && n < rows; i++ {
		t := sl.At(int(it.abs(i) - first)).Time.Format("15:04:05.000")
		for j, l := range lines(i) {
			if n == rows {
				break
			}
			lead := strings.Repeat(" ", stamp)
			if j == 0 {
				lead = st.Dim.Render(t) + "  "
			}
			b.WriteByte('\n')
			b.WriteString(look.Fit(lead+l, m.width))
			n++
		}
	}
	if sl.Len() == 0 {
		b.WriteByte('\n')
		b.WriteString(st.Dim.Render("  (nothing yet)"))
		n++
	}
	for ; n < rows; n++ {
		b.WriteByte('\n')
	}
	return b.String()
}
