package ui

import (
	"bytes"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/session"
	"inflight/wire"
)

// scrollView is a list that follows its newest line until the user scrolls
// away. back counts lines scrolled back from the newest.
type scrollView struct {
	back   int
	follow bool
	rows   int
}

// logView is the protocol log with its filter.
type logView struct {
	scrollView
	filter textinput.Model
}

func (m *Model) handleScrollKey(v *scrollView, msg tea.KeyPressMsg, total int) bool {
	k := m.keys
	page := max(1, v.rows-1)
	switch {
	case key.Matches(msg, k.Up):
		v.back++
	case key.Matches(msg, k.Down):
		v.back--
	case key.Matches(msg, k.PageUp):
		v.back += page
	case key.Matches(msg, k.PageDown):
		v.back -= page
	case key.Matches(msg, k.Top):
		v.back = total
	case key.Matches(msg, k.Bottom):
		v.back = 0
	default:
		return false
	}
	v.back = min(max(v.back, 0), max(0, total-1))
	v.follow = v.back == 0
	return true
}

func (m *Model) handleLogKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	lv := &m.logv
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
		lv.back = 0
		return cmd, true
	}
	if key.Matches(msg, m.keys.Filter) {
		lv.back = 0
		return lv.filter.Focus(), true
	}
	if key.Matches(msg, m.keys.Back) && lv.filter.Value() != "" {
		lv.filter.SetValue("")
		return nil, true
	}
	return nil, m.handleScrollKey(&lv.scrollView, msg, m.tracker.Log().Len())
}

// viewLog renders the protocol log: every message in and out with its time,
// direction, method and ID; violations stand out. Only visible lines are
// rendered; with a filter, matching lines are found from the newest back.
func (m *Model) viewLog(height int) string {
	st := m.styles
	lg := m.tracker.Log()
	lv := &m.logv
	rows := height - 2
	lv.rows = rows
	needle := strings.ToLower(lv.filter.Value())
	var picked []int
	skip := lv.back
	for i := lg.Len() - 1; i >= 0 && len(picked) < rows; i-- {
		if needle != "" && !logMatches(lg.At(i), needle) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		picked = append(picked, i)
	}
	var b strings.Builder
	title := fmt.Sprintf("PROTOCOL LOG · %d entries", lg.Len())
	if total := lg.Total(); total > int64(lg.Len()) {
		title += fmt.Sprintf(" (oldest %d dropped)", total-int64(lg.Len()))
	}
	if !lv.follow {
		title += " · scrolled back " + fmt.Sprint(lv.back)
	}
	b.WriteString(st.ColumnHeader.Render(fit(title, m.width)))
	b.WriteByte('\n')
	if lv.filter.Focused() || lv.filter.Value() != "" {
		b.WriteString(fit(lv.filter.View(), m.width))
	} else {
		whatW, idW := logColumns(m.width)
		head := "  TIME          DIR    " + fit("WHAT", whatW) + " " + fitLeft("ID", idW) + "  MESSAGE"
		b.WriteString(st.Dim.Render(fit(head, m.width)))
	}
	for i := len(picked) - 1; i >= 0; i-- {
		b.WriteByte('\n')
		b.WriteString(m.logLine(lg.At(picked[i])))
	}
	for i := len(picked); i < rows; i++ {
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

func (m *Model) logLine(e session.LogEntry) string {
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
	id := ""
	if !e.ID.IsZero() {
		id = e.ID.String()
	}
	if e.Status != 0 {
		msg = fmt.Sprintf("HTTP %d %s", e.Status, msg)
	}
	whatW, idW := logColumns(m.width)
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

// describeEntry says what a log entry is and what it carried.
func describeEntry(e session.LogEntry) (what, msg string) {
	if e.IsState {
		return "state", strings.ReplaceAll(e.From.String()+" → "+e.State.String(), "_", " ")
	}
	what, msg = e.Method, e.Text
	switch e.Kind {
	case client.EventSent, client.EventReceived:
		switch e.MsgKind {
		case wire.KindResult, wire.KindError:
			what = e.MsgKind.String() + " " + e.Method
		case wire.KindInvalid:
			what = e.Kind.String()
		}
		msg = payload(e.Raw)
	case client.EventMalformed:
		// Why it was rejected first: the raw bytes are often just noise.
		what, msg = "malformed", e.Text+" · "+string(e.Raw)
	case client.EventCancelSent:
		what = "cancel: " + signalText(e.Signal)
	case client.EventStreamClosed:
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
		return string(msg.Result)
	case msg.Params != nil:
		return string(msg.Params)
	}
	return "(no params)"
}

// viewStderr shows the stdio server's stderr, newest at the bottom.
func (m *Model) viewStderr(height int) string {
	st := m.styles
	sl := m.tracker.Stderr()
	v := &m.stderrv
	rows := height - 1
	v.rows = rows
	var b strings.Builder
	b.WriteString(st.ColumnHeader.Render(fit(fmt.Sprintf("SERVER STDERR · %d lines (the server's own log; not an error by itself)", sl.Len()), m.width)))
	end := sl.Len() - v.back
	start := max(0, end-rows)
	n := 0
	for i := start; i < end; i++ {
		line := sl.At(i)
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
