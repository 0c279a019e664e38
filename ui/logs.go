package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/session"
	"inflight/ui/composer"
	"inflight/ui/look"
	"inflight/wire"
)

// serverLogs reports whether the connection's server declared the logging
// capability (it must, to accept logging/setLevel).
func serverLogs(info event.ConnInfo) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(info.Capabilities, &caps) != nil {
		return false
	}
	_, ok := caps["logging"]
	return ok
}

// withLogLevel asks for the server's log lines at level for a request
// about to be sent: in the modern era in the request's _meta
// (io.modelcontextprotocol/logLevel); in the legacy era the level is the
// connection's, set with logging/setLevel when it differs from the one
// last set (the command it returns sends it, a request of its own). A
// request of the client's own housekeeping is left as it is.
func (m *Model) withLogLevel(method string, params json.RawMessage, level string) (json.RawMessage, tea.Cmd) {
	if method == wire.MethodLoggingSetLevel {
		return params, nil
	}
	info, ok := m.tracker.Conn()
	if !ok {
		return params, nil
	}
	if info.Era == event.EraModern {
		if level == "" {
			return params, nil
		}
		if p, err := wire.SetMeta(params, map[string]any{wire.MetaLogLevel: level}); err == nil {
			return p, nil
		}
		return params, nil
	}
	if level == "" || level == m.legacyLogLevel || !serverLogs(info) {
		return params, nil
	}
	m.legacyLogLevel = level
	lp, _ := json.Marshal(map[string]string{"level": level})
	return params, m.send(wire.MethodLoggingSetLevel, lp, session.RequestOptions{})
}

// sendLogged sends a request asking for logs at level: a legacy
// logging/setLevel, when one is needed, goes first.
func (m *Model) sendLogged(method string, params json.RawMessage, opts session.RequestOptions, level string) tea.Cmd {
	params, set := m.withLogLevel(method, params, level)
	cmd := m.send(method, params, opts)
	return inOrder(set, cmd)
}

// inOrder runs a, then b, in one command: a logging/setLevel reaches the
// client before the request it is for. Their messages (a send that
// failed) are delivered as a batch.
func inOrder(a, b tea.Cmd) tea.Cmd {
	if a == nil || b == nil {
		return tea.Batch(a, b)
	}
	return func() tea.Msg {
		var out tea.BatchMsg
		for _, c := range []tea.Cmd{a, b} {
			if msg := c(); msg != nil {
				out = append(out, func() tea.Msg { return msg })
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
}

// logsReserve is the width the last column must keep for everything else
// before the log count is given room of its own.
const logsReserve = 40

// detailCellWithLogs is the row's last column with its log count: on a
// wide column the count has its own room at the end (a result cut short
// to make it); on a narrow one it is added only when what the column says
// leaves room for it.
func (m *Model) detailCellWithLogs(r *session.Request, c columns, now time.Time) string {
	if r.Conv == nil || r.Conv.LogCount == 0 {
		return m.detailCell(r, c, now)
	}
	n := r.Conv.LogCount
	count := fmt.Sprintf("%d %s", n, look.CountNoun(n, "log", "logs"))
	if w := c.detail - ansi.StringWidth(look.CellSep+count); w >= logsReserve {
		c.detail = w
		cell := m.detailCell(r, c, now)
		if ansi.StringWidth(cell) == 0 {
			return m.styles.Dim.Render(count)
		}
		return cell + m.styles.Dim.Render(look.CellSep+count)
	}
	return m.withLogs(r, m.detailCell(r, c, now), c.detail)
}

// withLogs adds the count of the request's log lines to its row's last
// column, when there is room left for it: it matters less than anything
// else the column says.
func (m *Model) withLogs(r *session.Request, cell string, w int) string {
	if r.Conv == nil || r.Conv.LogCount == 0 {
		return cell
	}
	n := r.Conv.LogCount
	for _, s := range []string{fmt.Sprintf("%d %s", n, look.CountNoun(n, "log", "logs")), fmt.Sprintf("%d≡", n)} {
		used := ansi.StringWidth(cell)
		if used > 0 {
			s = look.CellSep + s
		}
		if used+ansi.StringWidth(s) <= w {
			return cell + m.styles.Dim.Render(s)
		}
	}
	return cell
}

// writeLogs lists the request's log lines: when each came (from the
// request's start), its level, logger and data.
func (m *Model) writeLogs(b *strings.Builder, r *session.Request) {
	c := r.Conv
	if c == nil || (c.LogCount == 0 && c.LogLevel == "") {
		return
	}
	st := m.styles
	title := fmt.Sprintf("LOGS (%d %s", c.LogCount, look.CountNoun(c.LogCount, "line", "lines"))
	if c.LogLevel != "" {
		title += ", asked at " + m.line(c.LogLevel)
	} else if info, _ := m.tracker.Conn(); info.Era == event.EraModern {
		title += "; the request asked for none"
	}
	title += ")"
	b.WriteString(st.Bold.Render(title) + "\n")
	if c.LogCount == 0 {
		b.WriteString(st.Dim.Render("  (none yet)") + "\n")
		return
	}
	// The loggers' column is as wide as the widest of them.
	loggers := 0
	for _, l := range c.Logs {
		loggers = max(loggers, ansi.StringWidth(m.line(clipRunes(l.Logger, 24))))
	}
	for _, l := range c.Logs {
		line := fmt.Sprintf("  %-7s %-9s", look.Ago(l.At.Sub(r.Created)), m.line(clipRunes(l.Level, 9)))
		if loggers > 0 {
			lg := m.line(clipRunes(l.Logger, 24))
			line += " " + lg + strings.Repeat(" ", loggers-ansi.StringWidth(lg))
		}
		b.WriteString(st.Dim.Render(line) + "  " + m.line(l.Data) + "\n")
	}
	if more := c.LogCount - len(c.Logs); more > 0 {
		b.WriteString(st.Dim.Render(fmt.Sprintf("  … %d more not kept (the first %d are)", more, len(c.Logs))) + "\n")
	}
}

// conversationMarks puts a request's log lines (≡, counted per cell, one
// label for them all), its rounds (↻ each retry sent under its new ID,
// ? each input_required answer) and a legacy server's requests during it
// (↘ came, ↗ ended) on its timeline.
func (m *Model) conversationMarks(r *session.Request, start time.Time, col func(time.Time) int, cells map[string]map[int]int, marks, groups *[]mark) {
	c := r.Conv
	if c == nil {
		return
	}
	if len(c.Logs) > 0 {
		logs := map[int]int{}
		for _, l := range c.Logs {
			logs[col(l.At)]++
		}
		cells["≡"] = logs
		first, last := c.Logs[0].At, c.Logs[len(c.Logs)-1].At
		lbl := fmt.Sprintf("≡ %d %s %s", c.LogCount, look.CountNoun(c.LogCount, "log", "logs"), look.Ago(first.Sub(start)))
		if last.After(first) {
			lbl += "…" + look.Ago(last.Sub(start))
		}
		*groups = append(*groups, mark{first, "≡", lbl})
	}
	for _, sr := range c.ServerRequests {
		// A legacy server's own request during this one: ↘ when it came,
		// ↗ when it was answered (or withdrawn, or lost).
		method := m.line(clipRunes(strings.TrimSuffix(strings.TrimSuffix(sr.Method, "/create"), "/createMessage"), 20))
		*marks = append(*marks, mark{sr.At, "↘", fmt.Sprintf("↘ %s %s", method, look.Ago(sr.At.Sub(start)))})
		if !sr.Open() && !sr.Ended.IsZero() {
			*marks = append(*marks, mark{sr.Ended, "↗", fmt.Sprintf("↗ %s %s", strings.ReplaceAll(sr.State.String(), "_", " "), look.Ago(sr.Ended.Sub(start)))})
		}
	}
	for i, rd := range c.Rounds {
		if i > 0 && !rd.Began.IsZero() {
			*marks = append(*marks, mark{rd.Began, "↻", fmt.Sprintf("↻ round %d #%s %s", i+1, m.line(clipRunes(rd.ID.String(), 12)), look.Ago(rd.Began.Sub(start)))})
		}
		if !rd.ResponseAt.IsZero() && rd.Outcome == session.StateInputRequired {
			*marks = append(*marks, mark{rd.ResponseAt, "?", fmt.Sprintf("? #%s asked %s", m.line(clipRunes(rd.ID.String(), 12)), look.Ago(rd.ResponseAt.Sub(start)))})
		}
	}
}

// ParseLogLevel reads a --log-level flag: a level, or none.
func ParseLogLevel(s string) (string, error) { return composer.ParseLogLevel(s) }
