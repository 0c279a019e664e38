package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/event"
	"inflight/session"
	"inflight/termsafe"
	"inflight/wire"
)

// listView is the request list's navigation state. The selection is kept by
// ID (history may evict old rows, shifting indices); offset is the index of
// the first visible row. While follow is set the newest request is selected.
type listView struct {
	selected wire.ID
	follow   bool
	offset   int
	rows     int // visible rows, set by layout
}

// handleListKey moves the selection; it reports whether the key was used.
func (m *Model) handleListKey(msg tea.KeyPressMsg) bool {
	n := m.tracker.Len()
	if n == 0 {
		return false
	}
	idx, ok := m.tracker.Index(m.list.selected)
	if !ok {
		idx = n - 1
	}
	k := m.keys
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
	idx = min(max(idx, 0), n-1)
	m.list.selected = m.tracker.At(idx).ID
	if !m.status.about.IsZero() && m.status.about != m.list.selected {
		// A message about another request ("sent #18 — press c to cancel
		// it") would now be about the wrong row: status text is about the
		// present (issue 10).
		m.status = statusLine{}
	}
	// Moving away from the newest row stops following; coming back to it
	// resumes, so new requests are selected again.
	m.list.follow = idx == n-1
	return true
}

// columns is the list layout for one width: columns are dropped, not
// wrapped, as the terminal narrows.
type columns struct {
	id, request, state, elapsed, timeout, detail int
	method                                       bool // show the method next to the target
}

func layoutColumns(width, idWidth int) columns {
	c := columns{id: max(idWidth, 2), request: 18, state: 12, elapsed: 7, timeout: 9}
	switch {
	case width >= 140:
		c.method, c.request = true, 26
	case width < 100:
		// Narrow terminals give the outcome column the room: it is where
		// the cancel and the late flags are told.
		c.request, c.state, c.elapsed, c.timeout = 10, 12, 7, 7
	}
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

func (m *Model) viewList(height int) string {
	n := m.tracker.Len()
	if height < 2 {
		return ""
	}
	if n == 0 {
		return m.viewEmpty(height)
	}
	lastID := m.tracker.At(n - 1).ID.String()
	cols := layoutColumns(m.width, len(lastID))
	rows := height - 1
	idx, ok := m.tracker.Index(m.list.selected)
	if !ok {
		idx = n - 1
	}
	// layoutList chose the window (keeping the selection in it).
	from, end := m.listWindow(rows)

	var b strings.Builder
	b.WriteString(m.columnHeader(cols))
	now := m.now()
	// Only the visible rows are rendered: 10 000 requests cost what the
	// visible ones cost.
	for i := from; i < end; i++ {
		b.WriteByte('\n')
		b.WriteString(m.row(m.tracker.At(i), cols, i == idx, now))
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

func (m *Model) columnHeader(c columns) string {
	parts := []string{"  " + fitLeft("ID", c.id), fit("REQUEST", c.request), fit("STATE", c.state)}
	if c.elapsed > 0 {
		parts = append(parts, fitLeft("ELAPSED", c.elapsed))
	}
	if c.timeout > 0 {
		parts = append(parts, fitLeft("TIMEOUT", c.timeout))
	}
	if c.detail > 0 {
		parts = append(parts, fit("PROGRESS / OUTCOME", c.detail))
	}
	return m.styles.ColumnHeader.Render(fit(strings.Join(parts, " "), m.width))
}

// row renders one request.
func (m *Model) row(r *session.Request, c columns, selected bool, now time.Time) string {
	st := m.styles
	look := lookOf(r.State)
	icon := look.icon
	if r.State == session.StateRunning || r.State == session.StatePending {
		icon = spinnerAt(now)
	}
	marker := "  "
	if selected {
		marker = st.Cursor.Render("▌ ")
	}
	stateCell := look.style(st).Render(fit(icon+" "+look.word, c.state))
	parts := []string{
		marker + fitLeft(r.ID.String(), c.id),
		fit(m.requestLabel(r, c.method), c.request),
		stateCell,
	}
	if c.elapsed > 0 {
		parts = append(parts, fitLeft(fmtDur(elapsed(r, now)), c.elapsed))
	}
	if c.timeout > 0 {
		parts = append(parts, fitLeft(m.countdown(r, now), c.timeout))
	}
	if c.detail > 0 {
		parts = append(parts, fit(m.detailCell(r, c.detail, now), c.detail))
	}
	line := strings.Join(parts, " ")
	if selected {
		return st.Selected.Render(fit(line, m.width))
	}
	return fit(line, m.width)
}

// elapsed is how long the request ran: until its cancel when it was
// cancelled (the late window that follows is not the request's time), else
// until it ended, else until now.
func elapsed(r *session.Request, now time.Time) time.Duration {
	if r.Cancel != nil {
		return r.Cancel.At.Sub(startOf(r))
	}
	return r.Elapsed(now)
}

// requestLabel is what the request is about: the tool, prompt or resource,
// with the method when there is room.
func (m *Model) requestLabel(r *session.Request, withMethod bool) string {
	target := m.line(r.Target)
	// A raw request's method is whatever was typed or passed to --call.
	method := m.line(r.Method)
	switch {
	case r.Method == wire.MethodSubscriptionsListen:
		return "listen"
	case target == "":
		return method
	case withMethod:
		return method + " " + target
	case r.Method == wire.MethodToolsCall:
		return target
	case r.Method == wire.MethodResourcesRead:
		return "read " + target
	case r.Method == wire.MethodPromptsGet:
		return "prompt " + target
	}
	return method + " " + target
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
	text := fmtDur(rem)
	if limit == session.LimitMax {
		text = "max " + text
	}
	total := r.Timeout.Timeout
	if limit == session.LimitMax {
		total = r.Timeout.Max
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
func (m *Model) detailCell(r *session.Request, w int, now time.Time) string {
	st := m.styles
	switch r.State {
	case session.StatePending:
		if r.Sent.IsZero() {
			return st.Dim.Render("sending…")
		}
		return st.Dim.Render("waiting for the server…")
	case session.StateRunning:
		return m.progressCell(r, w, now)
	case session.StateListening:
		s := fmt.Sprintf("%d %s", r.Notifications, countNoun(r.Notifications, "update", "updates"))
		if !r.LastNotificationAt.IsZero() {
			s += ", last " + fmtDur(now.Sub(r.LastNotificationAt)) + " ago"
		}
		return st.Listening.Render(s)
	case session.StateCancelRequested:
		return st.Cancelling.Render(cancelRequestedText(r, now)) + m.lateSuffix(r)
	}
	return m.outcome(r)
}

func cancelRequestedText(r *session.Request, now time.Time) string {
	s := "cancellation requested"
	if r.Cancel != nil && r.Cancel.Cause == session.CauseTimeout {
		s = "timed out, cancellation requested"
	}
	if r.Cancel != nil && r.Cancel.Failed != "" {
		return s + " · the cancel could not be sent"
	}
	if r.Cancel != nil {
		since := r.Cancel.At
		if !r.Cancel.SignalAt.IsZero() {
			since = r.Cancel.SignalAt
		}
		s += " · " + signalText(r.Cancel.Signal) + " " + fmtDur(now.Sub(since)) + " ago"
	}
	return s
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
		return bar(st, f, barW) + pct + trunc(msg, w-barW-len(pct))
	}
	s := spinnerAt(now) + " " + termsafe.Number(p.Value)
	if msg != "" {
		s += " · " + msg
	}
	return st.Running.Render(s)
}

// outcome describes a settled request, leading with what a person most
// needs to know: late traffic and violations are flagged first.
func (m *Model) outcome(r *session.Request) string {
	st := m.styles
	var parts []string
	if r.Late.Response && !r.Late.Crossed {
		parts = append(parts, st.Flag.Render("⚑ late response ignored ("+fmtAgo(r.Late.AfterCancel)+")"))
	}
	if r.Late.ProgressAfterCancel > 0 {
		parts = append(parts, st.Flag.Render(fmt.Sprintf("⚑ %d progress after cancel", r.Late.ProgressAfterCancel)))
	}
	if r.Late.Response && r.Late.Crossed {
		// Crossed in flight: sent before the server could see the cancel.
		// Shown, in a neutral colour, never flagged.
		parts = append(parts, st.Dim.Render("response crossed the cancel in flight, ignored"))
	}
	if n := r.Late.ProgressCrossed; n > 0 {
		parts = append(parts, st.Dim.Render(fmt.Sprintf("%d crossed in flight", n)))
	}
	if r.Violations > 0 {
		parts = append(parts, st.Flag.Render(fmt.Sprintf("⚠ %d %s", r.Violations, countNoun(r.Violations, "violation", "violations"))))
	}
	switch r.State {
	case session.StateCancelled, session.StateTimedOut:
		if r.Cancel != nil && r.Cancel.Failed != "" {
			parts = append(parts, st.Error.Render("the cancel could not be sent: "+m.line(r.Cancel.Failed)))
		} else if !r.Flagged() && r.Cancel != nil && !r.Late.Response && r.Late.ProgressCrossed == 0 {
			text := signalText(r.Cancel.Signal) + "; nothing more came"
			if r.Cancel.Signal == event.SignalStreamClosed {
				// A closed stream can carry nothing more: the cancel is final.
				text = "stream closed; nothing more can come"
			}
			if r.State == session.StateTimedOut {
				text = timeoutText(r.Cancel) + " · " + text
			}
			parts = append(parts, st.Dim.Render(text))
		}
	case session.StateFailed:
		text := m.failureText(r)
		if r.ToolError {
			text += ": " + m.resultSummary(r)
		}
		parts = append(parts, st.Failed.Render(text))
	case session.StateConnectionLost:
		parts = append(parts, st.Lost.Render(m.line(r.LocalError)))
	case session.StateInputRequired:
		parts = append(parts, st.Warn.Render("the server needs input (MRTR): not supported here"))
	case session.StateEndedByServer:
		parts = append(parts, st.Dim.Render(fmt.Sprintf("server ended it after %d %s", r.Notifications, countNoun(r.Notifications, "update", "updates"))))
	case session.StateCompleted:
		parts = append(parts, st.Dim.Render(m.resultSummary(r)))
	}
	return strings.Join(parts, " · ")
}

func (m *Model) failureText(r *session.Request) string {
	switch {
	case r.ToolError:
		return "tool error"
	case r.Error != nil:
		return fmt.Sprintf("error %d: %s", r.Error.Code, m.line(r.Error.Message))
	case r.LocalError != "":
		return m.line(r.LocalError)
	}
	return "failed"
}

// timeoutText says which limit ran out.
func timeoutText(c *session.Cancel) string {
	if c.Limit == session.LimitMax {
		return "max timeout reached"
	}
	return "timeout reached"
}

// lateSuffix flags late traffic on a row still waiting for its fate.
func (m *Model) lateSuffix(r *session.Request) string {
	s := ""
	if r.Late.ProgressAfterCancel > 0 {
		s += m.styles.Flag.Render(fmt.Sprintf(" · ⚑ %d progress after cancel", r.Late.ProgressAfterCancel))
	}
	if n := r.Late.ProgressCrossed; n > 0 {
		s += m.styles.Dim.Render(fmt.Sprintf(" · %d crossed in flight", n))
	}
	return s
}

// viewEmpty tells a newcomer what to do first.
func (m *Model) viewEmpty(height int) string {
	st := m.styles
	var lines []string
	switch m.state {
	case connConnecting:
		lines = []string{st.Dim.Render(spinnerAt(m.now()) + " connecting…")}
	case connLost:
		lines = []string{st.Error.Render("not connected"), "", "Press " + st.Key.Render("R") + " to try again, " + st.Key.Render("q") + " to quit."}
	default:
		lines = []string{
			st.Bold.Render("You have not sent a request yet."),
			"",
			"Press " + st.Key.Render("n") + " to send one — on the demo server " + st.Bold.Render("slow") + " is chosen: press " + st.Key.Render("enter") + " twice.",
			"While it runs, press " + st.Key.Render("c") + " to cancel it and watch what happens.",
			"Press " + st.Key.Render("?") + " for the keys you can use.",
		}
	}
	block := lipgloss.JoinVertical(lipgloss.Center, lines...)
	return lipgloss.Place(m.width, height, lipgloss.Center, lipgloss.Center, block)
}
