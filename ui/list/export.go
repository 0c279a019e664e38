package list

import (
	"time"

	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// Columns is the list's layout for one width.
type Columns = columns

// LayoutColumns lays the list out in width cells for IDs of idWidth cells
// and request labels of up to labelW cells.
func LayoutColumns(width, idWidth, labelW int) Columns { return layoutColumns(width, idWidth, labelW) }

// Painter draws the list's rows for one frame.
type Painter struct{ p painter }

// NewPainter is a painter of rows width cells wide at now.
func NewPainter(st look.Styles, line func(string) string, t *session.Tracker, now time.Time, width int, facts Facts, summaries map[wire.ID]string) Painter {
	return Painter{painter{st: st, line: line, tracker: t, now: now, width: width, facts: facts, summaries: summaries}}
}

// Header names the columns and says how many rows are hidden.
func (p Painter) Header(c Columns, above, below int) string { return p.p.columnHeader(c, above, below) }

// Row draws a request's row.
func (p Painter) Row(r *session.Request, c Columns, selected bool) string {
	return p.p.row(r, c, selected, p.p.now)
}

// IncomingRow draws a server's request's row.
func (p Painter) IncomingRow(s *session.ServerRequest, c Columns, selected bool) string {
	return p.p.incomingRow(s, c, selected, p.p.now)
}
