// Package screentest is what the screens' own tests share: a key press by
// its name, and an Env with the default keys, the dark styles, an empty
// tracker and sanitisers that change nothing.
package screentest

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// Press is the key press named as the key map names keys: "enter", "esc",
// "up", "down", "left", "right", "tab", "space", "ctrl+c", or one
// character typed.
func Press(name string) tea.KeyPressMsg {
	if rest, ok := strings.CutPrefix(name, "ctrl+"); ok && len([]rune(rest)) == 1 {
		return tea.KeyPressMsg{Code: []rune(rest)[0], Mod: tea.ModCtrl}
	}
	switch name {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	return tea.KeyPressMsg{Code: []rune(name)[0], Text: name}
}

// Env is a screen's Env at the Unix epoch, with the default keys, the dark
// styles, an empty tracker and sanitisers that change nothing.
func Env() screen.Env {
	keys := keymap.Default()
	same := func(s string) string { return s }
	return screen.Env{Tracker: session.NewTracker(session.Config{}), Now: time.Unix(0, 0), Styles: look.NewStyles(true), Keys: &keys, Line: same, Block: same}
}
