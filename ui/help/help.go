// Package help is the help screen: what inflight's cancel does, in a few
// lines, and every key of the screen it was opened over.
package help

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/keymap"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// Model is the help screen. It lists the keys it was last shown (Show):
// the root shows it the key map as enabled on the screen underneath, so
// that help lists what acts there.
type Model struct {
	keys keymap.KeyMap
	// intro replaces the opening lines (a proxy's view explains the host's
	// cancels instead); nil keeps the default, about inflight's own.
	intro []string
}

// Show returns the screen listing keys, opened by intro (nil: the
// default, about inflight's own cancels).
func (m Model) Show(keys keymap.KeyMap, intro []string) Model {
	m.keys, m.intro = keys, intro
	return m
}

// Update closes help on ? or esc. q goes to the root, which asks whether
// to quit, as the footer says; every other key does nothing here.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	switch {
	case key.Matches(k, env.Keys.Help, env.Keys.Back):
		return m, screen.Close{}
	case key.Matches(k, env.Keys.Quit):
		return m, screen.Unused{}
	}
	return m, nil
}

// View draws the intro, the key columns (in two rows when they do not fit
// the width) and how to close, shortening the intro and then the closing
// words on a short terminal rather than losing a key.
func (m Model) View(env screen.Env, width, height int) string {
	st := env.Styles
	hm := help.New()
	hm.Styles = st.Help
	hm.ShowAll = true
	intro := m.intro
	if intro == nil {
		intro = []string{
			st.Title.Render("inflight") + " cancels each request with the signal its transport and era require:",
			"  stdio and legacy HTTP: notifications/cancelled; a task: tasks/cancel;",
			"  modern (2026-07-28) Streamable HTTP: the request's stream is closed.",
			"  A cancelled request shows " + st.Cancelling.Render("cancelling") + " until its fate is known;",
			"  whatever the server sends after that is " + st.Flag.Render("⚑ flagged") + " and ignored.",
			"",
		}
	}
	var groups [][]key.Binding
	for _, g := range m.keys.FullHelp() {
		// A column none of whose keys act here (the attach keys elsewhere)
		// takes no place in the split below.
		if slices.ContainsFunc(g, key.Binding.Enabled) {
			groups = append(groups, g)
		}
	}
	full := hm.FullHelpView(groups)
	if lipgloss.Width(full) > width {
		// Narrow terminals get the columns in two rows instead of losing
		// the last ones.
		half := (len(groups) + 1) / 2
		full = hm.FullHelpView(groups[:half]) + "\n\n" + hm.FullHelpView(groups[half:])
	}
	out := strings.Join(intro, "\n") + "\n" + full
	if strings.Count(out, "\n")+1 > height {
		// A short terminal keeps every key and says the same in two lines.
		out = look.Fit("the cancel: notifications/cancelled (stdio, legacy HTTP), the stream closed (modern", width) + "\n" +
			look.Fit("HTTP) or tasks/cancel (a task); what comes after it is "+st.Flag.Render("⚑ flagged")+".", width) + "\n\n" + full
	}
	closing := "\n\n" + st.Dim.Render("press ? or esc to close")
	if strings.Count(out+closing, "\n")+1 > height {
		// A short terminal keeps every key: the blank line before the
		// closing words goes first, then the words (the footer says esc).
		closing = "\n" + st.Dim.Render("press ? or esc to close")
		if strings.Count(out+closing, "\n")+1 > height {
			closing = ""
		}
	}
	return out + closing
}
