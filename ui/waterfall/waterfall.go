// Package waterfall is the waterfall screen: every request a row, drawn as
// a bar on one time axis shared by all (as a browser's network waterfall
// draws a page's loads), from when it was created to its fate or now,
// with its cancel, late window, late and crossed traffic, progress, its
// task's polls and the server's questions under it; and, on demand, the
// latency of each method.
package waterfall

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/screen"
	"inflight/wire"
)

// Model is the waterfall. The selection is kept by request ID (history
// may let old requests go, moving every position); while follow is set it
// is the newest request. The axis is placed by its own state (axisState):
// fitted to the whole run, following now, or where it was panned to.
type Model struct {
	selected wire.ID
	follow   bool
	// offset is the position of the first row drawn.
	offset int
	axis   axisState
	// summary shows the latency of each method under the rows (S).
	summary bool
	// width and height are the screen's, as Layout last had them.
	width, height int
	// rows, trails and stats are what Layout built from the tracker;
	// View reads them when they are still the tracker's, and builds its
	// own otherwise.
	rows   rowIndex
	trails *trails
	stats  statsCache
	pens   *pens
}

// Open asks the root to open the detail of request ID (enter).
type Open struct{ ID wire.ID }

// Cancel asks the root to cancel request ID (c), as c in the list does:
// it is asked whatever the request's state, and the root says why it
// cannot when it cannot.
type Cancel struct{ ID wire.ID }

// defaultPer is the zoom the axis keeps when it follows now before any
// zoom was chosen.
const defaultPer = 100 * time.Millisecond

// New opens the waterfall on request selected (zero: the newest,
// following), the axis fitted to the whole run.
func New(selected wire.ID) Model {
	return Model{selected: selected, follow: selected.IsZero(), axis: axisState{mode: fitRun, per: defaultPer}, trails: &trails{}}
}

// Selected is the request selected (zero when there is none).
func (m Model) Selected() wire.ID { return m.selected }

// Select selects request id (the list's selection, when the root switches
// to the waterfall), and stops following the newest unless id is zero.
func (m Model) Select(id wire.ID) Model {
	m.selected, m.follow = id, id.IsZero()
	return m
}

// Renamed follows the selection when the tracker renames its ID (a host's
// session reusing it).
func (m Model) Renamed(was, now wire.ID) Model {
	if m.selected == was {
		m.selected = now
	}
	return m
}

// Layout takes in what changed in the tracker since the last call — the
// rows, the log's news of late traffic and polls, the summary when shown
// — and keeps the selection (the newest request while following) in
// sight, in a screen of width × height. The root calls it after every
// update while the waterfall is shown, and when it opens it.
func (m Model) Layout(env screen.Env, width, height int) Model {
	t := env.Tracker
	m.width, m.height = width, height
	m = m.refresh(t)
	if m.trails == nil {
		m.trails = &trails{}
	}
	m.trails.read(t)
	m.pens = pensFor(m.pens, env.Styles)
	if m.summary && m.stats.key != statsKeyOf(t) {
		m.stats = statsCache{key: statsKeyOf(t), stats: Summary(t)}
	}
	m.keepSelection(t)
	return m
}

// refresh rebuilds the row index when the tracker's rows changed.
func (m Model) refresh(t *session.Tracker) Model {
	if m.rows.key != keyOf(t) {
		m.rows = buildRows(t)
	}
	return m
}

// keepSelection selects the newest request while following (or when the
// selection is gone), and scrolls so that it is drawn.
func (m *Model) keepSelection(t *session.Tracker) {
	pos, ok := m.rows.posOf(t, m.selected)
	if m.follow || !ok {
		if pos, ok = m.rows.newest(t); !ok {
			m.selected, m.offset = wire.ID{}, 0
			return
		}
		m.selected = t.At(m.rows.at(pos).idx).ID
	}
	m.offset = window(m.offset, pos, m.rows.len(t), m.bodyRows(len(m.stats.stats)))
}

// window is the first row to draw so that row pos is among the visible
// drawn, moving from offset as little as it can.
func window(offset, pos, n, visible int) int {
	visible = max(visible, 1)
	if pos < offset {
		offset = pos
	}
	if pos >= offset+visible {
		offset = pos - visible + 1
	}
	return max(0, min(offset, n-visible))
}

// Update moves the selection (↑ ↓ pgup pgdn g G), asks for the detail
// (enter) or the cancel (c) of the selected request, and zooms (i I),
// pans (← →), fits (F) and follows (N) the axis, or shows the summary
// (S). Any other key is Unused, for the root's keys.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	keys := env.Keys
	m = m.refresh(env.Tracker)
	switch {
	case key.Matches(k, keys.Detail):
		if m.selected.IsZero() {
			return m, nil
		}
		return m, Open{ID: m.selected}
	case pressed(k, keys.Cancel):
		if m.selected.IsZero() {
			return m, nil
		}
		return m, Cancel{ID: m.selected}
	case key.Matches(k, keys.Summary):
		m.summary = !m.summary
		if m.summary {
			m.stats = statsCache{key: statsKeyOf(env.Tracker), stats: Summary(env.Tracker)}
		}
		return m, nil
	}
	if m, ok := m.moveKey(env, keys, k); ok {
		return m, nil
	}
	if m, ok := m.axisKey(env, keys, k); ok {
		return m, nil
	}
	return m, screen.Unused{}
}

// pressed reports whether msg is one of b's keys, enabled or not: c is
// the root's to refuse with a reason (a finished request), as in the
// list.
func pressed(msg tea.KeyPressMsg, b key.Binding) bool {
	for _, k := range b.Keys() {
		if msg.String() == k {
			return true
		}
	}
	return false
}

// moveKey moves the selection among the requests' rows (a question's row
// is not selected: it is its request's). Coming to the newest follows it;
// G/end also brings the axis to now.
func (m Model) moveKey(env screen.Env, keys *keymap.KeyMap, k tea.KeyPressMsg) (Model, bool) {
	t := env.Tracker
	n := m.rows.len(t)
	pos, ok := m.rows.posOf(t, m.selected)
	if !ok {
		pos, _ = m.rows.newest(t)
	}
	page := max(1, m.bodyRows(len(m.stats.stats))-1)
	dir := 1
	switch {
	case key.Matches(k, keys.Up):
		pos, dir = m.step(t, pos, -1), -1
	case key.Matches(k, keys.Down):
		pos = m.step(t, pos, 1)
	case key.Matches(k, keys.PageUp):
		pos, dir = pos-page, -1
	case key.Matches(k, keys.PageDown):
		pos += page
	case key.Matches(k, keys.Top):
		pos = 0
	case key.Matches(k, keys.Bottom):
		pos = n - 1
		m.axis = m.axis.follow(t, env.Now, m.cells())
	default:
		return m, false
	}
	if pos, ok = m.rows.nearest(t, pos, dir); !ok {
		return m, true
	}
	m.selected = t.At(m.rows.at(pos).idx).ID
	newest, _ := m.rows.newest(t)
	m.follow = pos == newest
	m.offset = window(m.offset, pos, n, m.bodyRows(len(m.stats.stats)))
	return m, true
}

// step is the next request row from pos in direction dir (pos itself at
// the end).
func (m Model) step(t *session.Tracker, pos, dir int) int {
	n := m.rows.len(t)
	for p := pos + dir; p >= 0 && p < n; p += dir {
		if m.rows.isRequest(p) {
			return p
		}
	}
	return pos
}

// axisKey zooms, pans, fits and follows the axis.
func (m Model) axisKey(env screen.Env, keys *keymap.KeyMap, k tea.KeyPressMsg) (Model, bool) {
	t, now, cells := env.Tracker, env.Now, m.cells()
	switch {
	case key.Matches(k, keys.ZoomIn):
		m.axis = m.axis.zoom(t, now, cells, zoomIn)
	case key.Matches(k, keys.ZoomOut):
		m.axis = m.axis.zoom(t, now, cells, zoomOut)
	case key.Matches(k, keys.PanLeft):
		m.axis = m.axis.pan(t, now, cells, -1)
	case key.Matches(k, keys.PanRight):
		m.axis = m.axis.pan(t, now, cells, 1)
	case key.Matches(k, keys.FitAll):
		m.axis.mode = fitRun
	case key.Matches(k, keys.FollowNow):
		m.axis = m.axis.follow(t, now, cells)
	default:
		return m, false
	}
	return m, true
}

// zoom changes the time a cell stands for to next(its current): the
// axis following now keeps following (as does a fitted one, whose right
// edge is now too); a panned one keeps its middle where it is.
func (s axisState) zoom(t *session.Tracker, now time.Time, cells int, next func(time.Duration) time.Duration) axisState {
	a := s.place(t, now, cells)
	per := next(a.per)
	if s.mode != panned {
		return axisState{mode: followNow, per: per}
	}
	mid := a.start.Add(a.per * time.Duration(cells) / 2)
	return axisState{mode: panned, per: per, from: mid.Add(-per * time.Duration(cells) / 2).Sub(a.origin)}
}

// pan moves the axis a quarter of its width to later (dir 1) or earlier
// (-1) traffic, and leaves it there.
func (s axisState) pan(t *session.Tracker, now time.Time, cells, dir int) axisState {
	a := s.place(t, now, cells)
	step := max(a.per, a.per*time.Duration(cells)/4)
	return axisState{mode: panned, per: a.per, from: a.start.Sub(a.origin) + time.Duration(dir)*step}
}

// follow keeps now at the right edge, at the zoom shown.
func (s axisState) follow(t *session.Tracker, now time.Time, cells int) axisState {
	return axisState{mode: followNow, per: s.place(t, now, cells).per}
}
