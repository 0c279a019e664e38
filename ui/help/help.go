// Package help is the help screen: what inflight's cancel does, in a few
// lines, and every key of the screen it was opened over.
package help

import (
	"strings"

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
// words on a short terminal rather than losing a key. Every key of the
// screen is listed; those that do not act on the selection now are
// dimmed. The intro is wrapped to the width, never cut mid-word.
func (m Model) View(env screen.Env, width, height int) string {
	st := env.Styles
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
	groups := m.keys.ScreenHelp()
	full := columns(st, groups)
	if lipgloss.Width(full) > width {
		// Narrow terminals get the columns in two rows instead of losing
		// the last ones.
		half := (len(groups) + 1) / 2
		full = columns(st, groups[:half]) + "\n\n" + columns(st, groups[half:])
	}
	out := wrap(strings.Join(intro, "\n"), width) + "\n" + full
	if strings.Count(out, "\n")+1 > height {
		// A short terminal keeps every key and says the same in fewer
		// lines.
		short := "the cancel: notifications/cancelled (stdio, legacy HTTP), the stream closed (modern HTTP) or tasks/cancel (a task); what comes after it is " + st.Flag.Render("⚑ flagged") + "."
		if m.intro != nil {
			// A screen's own intro keeps its first line and its last
			// (what the view is, and what q does there): never the
			// generic words of another screen.
			short = shortIntro(m.intro)
		}
		out = wrap(short, width) + "\n\n" + full
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

// wrap breaks text's lines at spaces to fit width, a continued line
// indented as its first.
func wrap(text string, width int) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		w := max(10, width-indent)
		wrapped := lipgloss.NewStyle().Width(w).Render(strings.TrimLeft(line, " "))
		for _, l := range strings.Split(wrapped, "\n") {
			out = append(out, strings.TrimRight(strings.Repeat(" ", indent)+l, " "))
		}
	}
	return strings.Join(out, "\n")
}

// columnGap is the room between two columns of keys (bubbles' help's).
const columnGap = "    "

// columns draws the key columns side by side, as bubbles' help draws its
// full view, each key and its words dimmed when it does not act now.
func columns(st look.Styles, groups [][]keymap.HelpKey) string {
	var cols []string
	for i, g := range groups {
		keys := make([]string, len(g))
		descs := make([]string, len(g))
		kw := 0
		for _, b := range g {
			kw = max(kw, lipgloss.Width(b.Help().Key))
		}
		for j, b := range g {
			keyStyle, descStyle := st.Help.FullKey, st.Help.FullDesc
			if !b.Now {
				keyStyle, descStyle = st.Off, st.Off
			}
			k := b.Help().Key
			keys[j] = keyStyle.Render(k) + strings.Repeat(" ", kw-lipgloss.Width(k))
			descs[j] = descStyle.Render(b.Help().Desc)
		}
		gap := ""
		if i > 0 {
			gap = st.Help.FullSeparator.Render(columnGap)
		}
		cols = append(cols, lipgloss.JoinHorizontal(lipgloss.Top, gap, strings.Join(keys, "\n"), " ", strings.Join(descs, "\n")))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, cols...)
}

// shortIntro is a screen's own intro in fewer lines: its first and its
// last non-empty line.
func shortIntro(intro []string) string {
	first, last := "", ""
	for _, l := range intro {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if first == "" {
			first = l
		} else {
			last = strings.TrimSpace(l)
		}
	}
	if last == "" {
		return first
	}
	return first + "\n" + last
}
