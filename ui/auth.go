package ui

import (
	"time"

	"inflight/session"
	"inflight/ui/look"
)

// authCell is the row's last column, with what the authorization did to
// the request: waiting for it, or sent again with a new token.
func (m *Model) authCell(r *session.Request, c columns, now time.Time) string {
	st := m.styles
	if m.auth.Waiting(r) {
		since, _ := m.auth.Pending()
		s := "⧗ waiting for authorization"
		if c.detail >= len([]rune(s))+8 {
			s += " · " + look.Dur(now.Sub(since))
		}
		return st.Warn.Render(s)
	}
	cell := m.detailCellWithLogs(r, c, now)
	if m.auth.Retried(r.ID) {
		mark := "↻ retried · "
		if c.detail < 30 {
			mark = "↻ "
		}
		return st.Warn.Render(mark) + cell
	}
	return cell
}
