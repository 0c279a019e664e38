package ui

import (
	"charm.land/lipgloss/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/list"
	"inflight/ui/look"
	"inflight/wire"
)

// layout sets everything the views only read: the sizes of the viewports
// and inputs, the windows of the list and the logs, the detail's body and
// the summaries of the visible rows. Update calls it after every message,
// because nearly every message can change the window, the mode, the
// selection or the data; it is cheap when nothing changed (the detail body,
// the one costly part, is rebuilt only when what it shows changed).
//
// View then only renders: it reads these fields and the clock, and changes
// nothing (TestViewChangesNothing holds it to that).
func (m *Model) layout() {
	h := m.bodyHeight()
	m.layoutList(h)
	m.logv = m.logv.Layout(m.env(), m.width, h)
	m.stderrv = m.stderrv.Layout(m.env(), m.width, h)
	m.auth.SetSize(m.width, h)
	if m.mode == keymap.ModeDetail {
		m.layoutDetail(h)
	}
	if m.prompt.kind == promptReason {
		m.prompt.input.SetWidth(max(20, min(60, m.width-12)))
	}
	m.composer.layout(m.width)
	m.answer = m.answer.Sized(m.width)
}

// layoutList decides which rows the list shows (its filter, x), keeps the
// selection on one of them, scrolls so that the selection stays visible
// (while following, the newest row is at the bottom), widens the REQUEST
// column to the labels on screen, and summarises what the visible settled
// requests returned, once each, for their rows.
func (m *Model) layoutList(height int) {
	rows := height - 1 // under the column header
	m.list.rows = rows
	m.refreshShown()
	n := m.shownLen()
	if n == 0 || rows < 1 {
		m.list.offset = 0
		if n == 0 && m.list.filtered {
			// Nothing shown: no key may act on a hidden request.
			m.list.selected = wire.ID{}
		}
		return
	}
	idx, ok := m.selectedPos()
	if !ok {
		// The selection is hidden (or gone): the nearest row shown after
		// it, else the newest shown, takes its place (an incoming row's
		// own request first).
		idx = n - 1
		if s := m.list.srv; s != nil && s.TiedBy == session.TiedNone && m.list.filtered {
			// An untied question's row: the row that came after it.
			idx = min(m.rowsAfterUntied(s), n-1)
		} else if ti, found := m.tracker.Index(m.list.selected); found && m.list.filtered {
			idx = min(m.rowsFrom(ti), n-1)
		}
		m.list.srv = nil
		m.selectRowAt(idx)
	}
	off := m.list.offset
	if m.list.follow {
		off = max(0, n-rows)
	}
	if idx < off {
		off = idx
	}
	if idx >= off+rows {
		off = idx - rows + 1
	}
	m.list.offset = min(max(off, 0), max(0, n-rows))
	method := 0
	if m.width >= 140 {
		method = 1
	}
	for i := m.list.offset; i < min(n, m.list.offset+rows); i++ {
		if row := m.shownRow(i); row.srv != nil {
			if w := lipgloss.Width(list.IncomingLabel(m.line, row.srv, true)); w > m.list.labelW[method] {
				m.list.labelW[method] = w
			}
			continue
		}
		r := m.shownAt(i)
		// A host's request's label is drawn after its mark (⇄).
		if w := lipgloss.Width(list.HostMark(r) + look.RequestLabel(r, method == 1, m.line)); w > m.list.labelW[method] {
			m.list.labelW[method] = w
		}
		if w := lipgloss.Width(m.line(r.ID.String())); w > m.list.idW {
			m.list.idW = w
		}
		if r.State == session.StateCompleted || (r.State == session.StateFailed && r.ToolError) {
			m.cacheSummary(r)
		}
	}
}

// rowsAfterUntied is the position of the first row shown after where the
// untied server request s has (or had) its row: past the rows of the
// request it came after (its own, its nested ones) and the untied ones
// that came before s.
func (m *Model) rowsAfterUntied(s *session.ServerRequest) int {
	place := m.tracker.ServerRequestPlace(s)
	shown := m.list.shown
	pos := m.rowsFrom(place)
	for ; pos < len(shown) && shown[pos].idx == place; pos++ {
		if o := shown[pos].srv; o != nil && o != s && o.TiedBy == session.TiedNone && !o.At.Before(s.At) {
			break
		}
	}
	return pos
}

// listWindow is the range of positions (among the rows shown) viewList
// draws in rows lines: the window layoutList chose, kept inside the list in
// case it shrank since.
func (m *Model) listWindow(rows int) (from, to int) {
	n := m.shownLen()
	rows = max(1, rows)
	from = min(max(m.list.offset, 0), max(0, n-rows))
	return from, min(n, from+rows)
}
