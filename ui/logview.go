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

	"inflight/event"
	"inflight/session"
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
	// width it was last wrapped to.
	content string
	wrapped int
}

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
	lv := &m.logv
	i, ok := m.moved(msg, lv.selected(it), lv.rows, it.n-1)
	if !ok {
		return false
	}
	if it.n == 0 {
		return true
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
	return true
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
	lv.content, lv.wrapped = m.entryText(lv.openAbs), 0
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
	facts := []string{e.Time.Format("15:04:05.000000"), e.Dir.String(), m.line(what)}
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
	title := fmt.Sprintf("LOG ENTRY · ↑/↓ scroll · esc back to the log · %d%%", int(lv.vp.ScrollPercent()*100))
	return st.ColumnHeader.Render(fit(title, m.width)) + "\n" + lv.vp.View()
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
// only the matching ones.
func (m *Model) logItems() items {
	lg := m.tracker.Log()
	first := lg.Total() - int64(lg.Len())
	needle := strings.ToLower(m.logv.filter.Value())
	if needle == "" {
		return items{n: lg.Len(), abs: func(i int) int64 { return first + int64(i) }}
	}
	var match []int64
	for i := 0; i < lg.Len(); i++ {
		if logMatches(lg.At(i), needle) {
			match = append(match, first+int64(i))
		}
	}
	return items{n: len(match), abs: func(i int) int64 { return match[i] }}
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
		if key.Matches(msg, m.keys.Quit) || key.Matches(msg, m.keys.Help) || key.Matches(msg, m.keys.Interrupt) {
			return nil, false
		}
		var cmd tea.Cmd
		lv.vp, cmd = lv.vp.Update(msg)
		return cmd, true
	}
	if lv.filter.Focused() {
		switch msg.String() {
		case "esc":
			lv.filter.SetValue("")
			lv.filter.Blur()
			return nil, true
		case "enter":
			lv.filter.Blur()
			return nil, true
		}
		var cmd tea.Cmd
		lv.filter, cmd = lv.filter.Update(msg)
		lv.follow = true
		return cmd, true
	}
	if key.Matches(msg, m.keys.Filter) {
		lv.follow = true
		return lv.filter.Focus(), true
	}
	if key.Matches(msg, m.keys.Back) && lv.filter.Value() != "" {
		lv.filter.SetValue("")
		return nil, true
	}
	if key.Matches(msg, m.keys.Open) {
		m.openEntry(m.logItems())
		return nil, true
	}
	return nil, m.moveSelection(msg, m.logItems())
}

// viewLog renders the protocol log: every message in and out with its time,
// direction, method and ID; violations stand out. Only visible lines are
// rendered; with a filter, matching lines are found from the newest back.
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
		title += fmt.Sprintf(" · %d %s", it.n, countNoun(it.n, "match", "matches"))
	}
	if !lv.follow && it.n > 0 {
		title += fmt.Sprintf(" · showing %d–%d of %d (G: newest)", from+1, to, it.n)
	}
	b.WriteString(st.ColumnHeader.Render(fit(title, m.width)))
	b.WriteByte('\n')
	// The ID column is as wide as the widest ID on screen (within bounds),
	// so internal IDs and large ones are not cut to "i… ".
	whatW, idW := logColumns(m.width)
	for i := from; i < to; i++ {
		idW = max(idW, min(10, len(logID(lg.At(int(it.abs(i)-first)).ID))))
	}
	if lv.filter.Focused() || lv.filter.Value() != "" {
		b.WriteString(fit(lv.filter.View(), m.width))
	} else {
		head := "  TIME          DIR    " + fit("WHAT", whatW) + " " + fitLeft("ID", idW) + "  MESSAGE"
		b.WriteString(st.Dim.Render(fit(head, m.width)))
	}
	sel := lv.selected(it)
	for i := from; i < to; i++ {
		b.WriteByte('\n')
		line := m.logLine(lg.At(int(it.abs(i)-first)), idW)
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

func logMatches(e session.LogEntry, needle string) bool {
	if strings.Contains(strings.ToLower(e.Method), needle) || strings.Contains(e.ID.String(), needle) ||
		strings.Contains(strings.ToLower(e.Violation), needle) || strings.Contains(strings.ToLower(e.Text), needle) ||
		strings.Contains(e.Kind.String(), needle) {
		return true
	}
	return bytes.Contains(bytes.ToLower(e.Raw), []byte(needle))
}

func (m *Model) logLine(e session.LogEntry, idW int) string {
	st := m.styles
	var dir string
	switch e.Dir {
	case session.DirOut:
		dir = st.Out.Render("→ out")
	case session.DirIn:
		dir = st.In.Render("← in ")
	default:
		dir = st.Local.Render("· loc")
	}
	what, msg := describeEntry(e)
	id := logID(e.ID)
	if e.Status != 0 {
		msg = fmt.Sprintf("HTTP %d %s", e.Status, msg)
	}
	whatW, _ := logColumns(m.width)
	whatCell := fit(m.line(what), whatW)
	if e.Violation != "" {
		// The violation takes the WHAT column, so the message keeps its room
		// (for a rejected line the message is why it was rejected).
		whatCell = st.Flag.Render(fit("⚠ "+e.Violation, whatW))
	}
	return fit(fmt.Sprintf("  %s  %s  %s %s  %s", e.Time.Format("15:04:05.000"), dir, whatCell, fitLeft(m.line(id), idW), m.line(msg)), m.width)
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

// describeEntry says what a log entry is and what it carried.
func describeEntry(e session.LogEntry) (what, msg string) {
	if e.IsState {
		return "state", lookOf(e.From).word + " → " + lookOf(e.State).word
	}
	what, msg = e.Method, e.Text
	switch e.Kind {
	case event.Sent, event.Received:
		switch e.MsgKind {
		case wire.KindResult, wire.KindError:
			what = e.MsgKind.String() + " " + e.Method
		case wire.KindInvalid:
			what = e.Kind.String()
		}
		msg = payload(e.Raw)
		if e.Coalesced > 0 {
			what = fmt.Sprintf("progress ×%d", e.Coalesced+1)
			msg = fmt.Sprintf("merged, until %s; latest: %s", e.LastTime.Format("15:04:05.000"), msg)
		}
	case event.Malformed:
		// Why it was rejected first: the raw bytes are often just noise.
		what, msg = "malformed", e.Text+" · "+string(e.Raw)
	case event.CancelSent:
		what = "cancel: " + signalText(e.Signal)
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

// payload shows what a message carries (its params, result or error)
// without the envelope every message repeats; only visible lines are
// decoded, so this costs nothing for the log's hidden entries.
func payload(raw []byte) string {
	msg, err := wire.Decode(raw)
	if err != nil {
		return string(raw)
	}
	switch {
	case msg.Error != nil:
		return fmt.Sprintf("error %d: %s", msg.Error.Code, msg.Error.Message)
	case msg.Result != nil:
		return string(withoutProtocolMeta(msg.Result))
	case msg.Params != nil:
		return string(withoutProtocolMeta(msg.Params))
	}
	return "(no params)"
}

// viewStderr shows the stdio server's stderr, newest at the bottom.
func (m *Model) viewStderr(height int) string {
	st := m.styles
	sl := m.tracker.Stderr()
	v := &m.stderrv
	rows := height - 1
	it := m.stderrItems()
	from := v.start(it)
	to := min(it.n, from+rows)
	first := sl.Total() - int64(sl.Len())
	var b strings.Builder
	title := fmt.Sprintf("SERVER STDERR · %d lines (the server's own log; not an error by itself)", sl.Len())
	if !v.follow && it.n > 0 {
		title += fmt.Sprintf(" · showing %d–%d (G: newest)", from+1, to)
	}
	b.WriteString(st.ColumnHeader.Render(fit(title, m.width)))
	n := 0
	for i := from; i < to; i++ {
		line := sl.At(int(it.abs(i) - first))
		b.WriteByte('\n')
		b.WriteString(fit(st.Dim.Render(line.Time.Format("15:04:05.000"))+"  "+m.line(line.Text), m.width))
		n++
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
