// Package logview is the protocol log — every message in and out with its
// time, direction, method and ID, a filter over them, and one entry shown
// whole — and the stdio server's stderr. Both are windows over a bounded
// log that grows at the bottom and loses its oldest lines, and both lay
// out long lines as the root's one wrap-or-cut preference says
// (screen.Env.Chop).
//
// Model is the log with its entry view (keymap.ModeLog), Stderr the
// stderr view (keymap.ModeStderr). Neither does I/O: copying an entry or
// opening it in a pager is an action (Copy, Open) the root carries out,
// and w asks the root to switch the preference (ToggleWrap).
package logview

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"inflight/ui/look"
	"inflight/ui/screen"
)

// Copy asks the root to copy log entry Entry (its absolute position, as
// the log counts them since the start) to the clipboard.
type Copy struct{ Entry int64 }

// Open asks the root to open log entry Entry in $PAGER, or in $EDITOR
// when Editor is set.
type Open struct {
	Entry  int64
	Editor bool
}

// ToggleWrap asks the root to switch every payload view between wrapping
// long lines and cutting them (screen.Env.Chop).
type ToggleWrap struct{}

// FilterPlaceholder says what the filter matches: what a row shows, and
// the entry's bytes.
const FilterPlaceholder = "matches time, direction (in/out/loc), method, ID, state, message, payload"

// Model is the protocol log with its filter, a selected entry (enter
// opens it whole) and the entry viewer.
type Model struct {
	scrollView
	filter textinput.Model
	// sel is the absolute position of the selected entry; while the view
	// follows the newest entries, the newest is selected.
	sel int64
	// open: the viewer shows entry openAbs in vp.
	open    bool
	openAbs int64
	vp      viewport.Model
	// content is the open entry's text before it is laid out; laidOut is
	// how it was last laid out (zero: lay it out again).
	content string
	laidOut layoutKey
	// matches is what the filter matches, kept up to date by Layout so
	// that View only reads it.
	matches matches
	// width is the width Layout was given, which the entry is laid out to.
	width int
}

// layoutKey is what the open entry's layout depends on.
type layoutKey struct {
	width int
	chop  bool
}

// New is the log following its newest entries, with no filter.
func New() Model {
	m := Model{scrollView: scrollView{follow: true}}
	m.filter = look.NewTextInput()
	m.filter.Prompt = "/"
	m.filter.Placeholder = FilterPlaceholder
	return m
}

// Filtering reports whether the filter has the keys.
func (m Model) Filtering() bool { return m.filter.Focused() }

// Filter is what the filter holds ("" shows every entry).
func (m Model) Filter() string { return m.filter.Value() }

// EntryOpen reports whether one entry is shown whole.
func (m Model) EntryOpen() bool { return m.open }

// OpenEntry is the absolute position of the entry shown whole, false
// when none is.
func (m Model) OpenEntry() (int64, bool) { return m.openAbs, m.open }

// Following reports whether the log follows its newest entries.
func (m Model) Following() bool { return m.follow }

// EntryOffset is how far the open entry is scrolled down, in lines.
func (m Model) EntryOffset() int { return m.vp.YOffset() }

// Selected is the absolute position of the selected entry, false when the
// log (or the filter) shows nothing.
func (m Model) Selected(env screen.Env) (int64, bool) {
	it := m.items(env)
	i := m.selected(it)
	if i < 0 {
		return 0, false
	}
	return it.abs(i), true
}

// Shown is the absolute positions of the entries the log shows: all of
// them, or with a filter the matching ones (as of the last Layout).
func (m Model) Shown(env screen.Env) []int64 {
	it := m.items(env)
	out := make([]int64, it.n)
	for i := range out {
		out[i] = it.abs(i)
	}
	return out
}

// Layout brings the filter's matches up to date with the log and lays the
// view out in width × height: the rows under the title and the column
// header, the filter's width, and the open entry.
func (m Model) Layout(env screen.Env, width, height int) Model {
	m.width = width
	m.rows = height - 2
	// Without a width the filter shows one character of its placeholder.
	m.filter.SetWidth(max(20, width-2))
	m.refreshMatches(env)
	m.layoutEntry(env, height)
	return m
}

// Update handles the keys of the log, its filter and its entry view, a
// paste into the filter, and the wheel. Keys it does not use come back
// as screen.Unused, for the root's global keys.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	var act screen.Action
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		act = m.key(env, msg)
	case tea.PasteMsg:
		if m.filter.Focused() {
			var cmd tea.Cmd
			m.filter, cmd = m.filter.Update(msg)
			act = run(cmd)
		}
	case tea.MouseWheelMsg:
		act = m.wheel(env, msg)
	}
	return m, act
}

// key is a key in the log: to the entry view when it is open, to the
// filter while it has focus, else the log's own keys.
func (m *Model) key(env screen.Env, msg tea.KeyPressMsg) screen.Action {
	if m.open {
		return m.entryKey(env, msg)
	}
	if m.filter.Focused() {
		return m.filterKey(env, msg)
	}
	if act, ok := payloadKey(env, msg, m.Selected); ok {
		return act
	}
	k := env.Keys
	switch {
	case key.Matches(msg, k.Filter):
		m.follow = true
		return run(m.filter.Focus())
	case key.Matches(msg, k.Back) && m.filter.Value() != "":
		m.filter.SetValue("")
		m.refreshMatches(env)
	case key.Matches(msg, k.Open):
		m.openEntry(env, m.items(env))
	default:
		if !m.moveSelection(env, msg, m.items(env)) {
			return screen.Unused{}
		}
	}
	return nil
}

// filterKey is a key typed into the filter: esc clears it, enter keeps
// it and gives the keys back to the log; the selection follows the
// newest match while typing.
func (m *Model) filterKey(env screen.Env, msg tea.KeyPressMsg) screen.Action {
	switch msg.String() {
	case "esc":
		m.filter.SetValue("")
		m.filter.Blur()
		m.refreshMatches(env)
		return nil
	case "enter":
		m.filter.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	m.follow = true
	m.refreshMatches(env)
	return run(cmd)
}

// payloadKey is y, o and O on the entry selected gives: an action for the
// root to copy or open it, or a status saying there is nothing to. ok is
// false for any other key.
func payloadKey(env screen.Env, msg tea.KeyPressMsg, selected func(screen.Env) (int64, bool)) (act screen.Action, ok bool) {
	k := env.Keys
	copying := key.Matches(msg, k.Copy)
	if !copying && !key.Matches(msg, k.Pager, k.Editor) {
		return nil, false
	}
	abs, found := selected(env)
	switch {
	case !found && copying:
		return screen.Status{Level: screen.Info, Text: "nothing selected to copy"}, true
	case !found:
		return screen.Status{Level: screen.Info, Text: "nothing selected to open"}, true
	case copying:
		return Copy{Entry: abs}, true
	}
	return Open{Entry: abs, Editor: key.Matches(msg, k.Editor)}, true
}

// wheel scrolls the open entry, or moves the selection as ↑/↓ would.
func (m *Model) wheel(env screen.Env, msg tea.MouseWheelMsg) screen.Action {
	if m.open {
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		return run(cmd)
	}
	if d := wheelStep(msg); d != 0 {
		it := m.items(env)
		m.selectRow(m.selected(it)+d, it)
	}
	return nil
}

// View draws the log, or the open entry.
func (m Model) View(env screen.Env, width, height int) string {
	if m.open {
		return m.viewEntry(env, width)
	}
	return m.viewLog(env, width, height)
}
