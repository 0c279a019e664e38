package ui

import (
	tea "charm.land/bubbletea/v2"

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

// toggleWrap switches every payload view between wrapping long lines and
// cutting them; the views lay their content out again (the log's entry
// and stderr when they see the new preference in their Env).
// It returns what the status line says of the new setting.
func (p *pager) toggleWrap() string {
	p.chop = !p.chop
	if p.chop {
		return "long lines are cut: ←/→ scroll sideways, w wraps them again"
	}
	return "long lines wrap: w cuts them"
}
