// Package screen is the contract between inflight's root model and its
// screens (the list, the detail, the log, the composer, the answer form,
// help, …), each a package of its own under ui/.
//
// A screen is a value with its own state. It reads the world through an
// Env it is handed on every call and never holds the root model: its
// Update returns the screen as changed and an Action, what it asks the
// root to do (send a request, answer a question, close, say something on
// the status line); the root carries actions out. View draws the screen in
// the width and height it is given and changes nothing. A screen never
// imports another screen or the root; what several screens draw alike
// lives in ui/look.
//
// The usual shape, for a screen package x:
//
//	func New(…) x.Model
//	func (m x.Model) Update(env screen.Env, msg tea.Msg) (x.Model, screen.Action)
//	func (m x.Model) View(env screen.Env, width, height int) string
package screen

import (
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// Env is what a screen may read: the tracker (a screen reads it and never
// changes it: changes go through actions), the clock's reading for this
// update or frame, the styles, the key bindings as enabled now, the way
// long payload lines are laid out, and the sanitisers every server string
// goes through before it is drawn.
type Env struct {
	Tracker *session.Tracker
	Now     time.Time
	Styles  look.Styles
	Keys    *keymap.KeyMap
	// Chop says how the payload views (a log entry, the detail, stderr)
	// lay out a line wider than the screen: cut, scrolling sideways, when
	// true; wrapped when false. It is one preference for all of them (w),
	// about reading rather than about one view, so the root holds it.
	Chop bool
	// Line makes text safe for one terminal line, Block for several:
	// secrets redacted first, then control sequences made inert.
	Line, Block func(string) string
}

// Action is what a screen asks of the root. nil asks nothing; the types
// below are the ones every screen may return, and a screen's package
// declares its own (composer.Send, answer.Decline, …).
type Action any

// Unused says the screen did not use the key it was given: the root tries
// its global keys with it (q, ?, c on the selected request, …).
type Unused struct{}

// Close asks the root to close the screen and go back to where it was
// opened from.
type Close struct{}

// Run asks the root to run a command (a bubbles component's, or one the
// screen built from values it holds). It must do no I/O on the root's
// behalf: that is an action of its own.
type Run struct{ Cmd tea.Cmd }

// Level is how loud a status message is.
type Level uint8

const (
	Info Level = iota
	Warn
	Error
)

// Status asks the root to show a message on the status line. About, when
// set, names the request the message is news of: the message goes when
// that request reaches its fate.
type Status struct {
	Level Level
	Text  string
	About wire.ID
}

// Batch is several actions, carried out in order.
type Batch []Action

// Scroll moves vp on the keys every payload view shares (↑/↓, pgup/pgdn,
// g/G, and ←/→ sideways when long lines are cut); it reports whether msg
// was one of them.
func Scroll(k *keymap.KeyMap, msg tea.KeyPressMsg, vp *viewport.Model) bool {
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
		vp.ScrollLeft(look.HorizontalStep)
	case key.Matches(msg, k.Right):
		vp.ScrollRight(look.HorizontalStep)
	default:
		return false
	}
	return true
}

// Page is a payload view's keys and mouse wheel on its viewport vp: the
// scrolling keys and the wheel move it (a wheel's command comes back as
// Run); w comes back as wrap, for the screen's own action asking the root
// to wrap or cut long lines; any other key is Unused.
func Page(k *keymap.KeyMap, msg tea.Msg, vp *viewport.Model) (wrap bool, act Action) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.Wrap):
			return true, nil
		case Scroll(k, msg, vp):
			return false, nil
		}
		return false, Unused{}
	case tea.MouseWheelMsg:
		var cmd tea.Cmd
		*vp, cmd = vp.Update(msg)
		if cmd != nil {
			return false, Run{Cmd: cmd}
		}
	}
	return false, nil
}
