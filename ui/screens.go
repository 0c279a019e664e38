package ui

import (
	"inflight/ui/attach"
	"inflight/ui/authview"
	"inflight/ui/composer"
	"inflight/ui/detail"
	helpscreen "inflight/ui/help"
	"inflight/ui/list"
	"inflight/ui/logview"
	"inflight/ui/look"
	"inflight/ui/prompt"
	"inflight/ui/question"
	"inflight/ui/waterfall"
)

// screens holds the screens' own models, one per screen package: the root
// gives each its messages and carries out the actions it returns.
type screens struct {
	list     list.Model
	detail   detail.Model
	incoming question.Model
	composer composer.Model
	logv     logview.Model
	stderrv  logview.Stderr
	prompt   prompt.Model
	helpv    helpscreen.Model
	// wf is the list drawn as a waterfall, shown in the list's mode while
	// focus.waterfallOn.
	wf waterfall.Model
	// attachv is the keys of the view on a proxy and what it draws of the
	// proxy (Options.Attach).
	attachv attach.Model
	// auth is the connection's OAuth authorization as its steps told it
	// (auth.go).
	auth authview.Model
	// replay is the player of a recorded run (Options.Replay): its
	// scrubber and where playing began.
	replay replayState
}

// focus is where the user is: the screen shown, the one esc from help
// goes back to, and whether the list's mode draws the waterfall.
type focus struct {
	mode        mode
	prev        mode
	waterfallOn bool
}

// theme is how things look: the styles for the terminal's background.
type theme struct {
	styles look.Styles
	dark   bool
}

// set takes the terminal's background, as it is known.
func (t *theme) set(dark bool) {
	t.dark = dark
	t.styles = look.NewStyles(dark)
}

// size is the terminal's size in cells.
type size struct {
	width, height int
}

// ending is how the program ends once it does: quitting is set when the
// cancels before quitting went out, interrupted when Ctrl+C or a signal,
// not q, ended it (the command's exit code says so).
type ending struct {
	quitting    bool
	interrupted bool
}
