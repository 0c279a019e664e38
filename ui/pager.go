package ui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/ui/look"
)

// pager is how the payload views (the log entry, the detail, stderr) lay
// out a line wider than the screen. They wrap it by default, so that all
// of a payload can be read without a key (the cause of an error is often
// at its end); w cuts lines instead and ←/→ scroll sideways, for JSON
// whose shape wrapping hides, as a pager's -S does. One setting serves
// all three views: it is a preference about reading, not about one view,
// and the screens read it in their screen.Env.
type pager struct {
	chop bool
	// exec hands the terminal to a pager or editor (tea.Exec); tests
	// record the command instead, and run it themselves.
	exec func(c tea.ExecCommand, fn tea.ExecCallback) tea.Cmd
}

// horizontalStep is how far ←/→ scroll a cut payload.
const horizontalStep = look.HorizontalStep

// pagerKey is the keys k of a payload in a viewport (a server request's
// detail): scrolling vp, and w, which asks to wrap or cut long lines (wrap:
// the root's preference, toggleWrap). used is false for any other key,
// which is left to the screen's global keys, so that none is swallowed.
func pagerKey(k *keymap.KeyMap, msg tea.KeyPressMsg, vp *viewport.Model) (used, wrap bool) {
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
		return true, true
	default:
		return false, false
	}
	return true, false
}

// toggleWrap switches every payload view between wrapping long lines and
// cutting them; the views lay their content out again (the log's entry
// and stderr when they see the new preference in their Env).
func (m *Model) toggleWrap() {
	m.pager.chop = !m.pager.chop
	if m.pager.chop {
		m.setStatus(levelInfo, "long lines are cut: ←/→ scroll sideways, w wraps them again")
	} else {
		m.setStatus(levelInfo, "long lines wrap: w cuts them")
	}
}
