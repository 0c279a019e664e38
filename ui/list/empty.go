package list

import (
	"fmt"

	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// viewNoMatch is the list when its filter or x hides every row.
func (m Model) viewNoMatch(env screen.Env, width, height int) string {
	st := env.Styles
	what := fmt.Sprintf("No request is %s.", m.filter)
	if m.filter == FilterAll {
		what = "Every request here has finished and was cleared."
	}
	lines := []string{st.Bold.Render(what), ""}
	if m.filter != FilterAll {
		lines = append(lines, "Press "+st.Key.Render("f")+" for the next filter.")
	}
	if !m.clearedAt.IsZero() {
		lines = append(lines, "Press "+st.Key.Render("x")+" to show the cleared requests again.")
	}
	return lipgloss.Place(width, height, lipgloss.Center, lipgloss.Center, lipgloss.JoinVertical(lipgloss.Center, lines...))
}

// onlyHousekeeping reports whether the user has sent nothing yet (the list
// holds only the tools/list inflight sent on connecting), so the screen
// should still tell a newcomer what to do.
func onlyHousekeeping(t *session.Tracker) bool {
	for i := 0; i < t.Len(); i++ {
		if t.At(i).Method != wire.MethodToolsList {
			return false
		}
	}
	return true
}

// Empty is the list with no request in it: it tells a newcomer what to do
// first, or where the connection stands. The root shows it too where a
// request's detail has nothing left to show.
func (m Model) Empty(env screen.Env, width, height int) string {
	st := env.Styles
	var lines []string
	switch m.in.Conn {
	case Connecting:
		lines = []string{st.Dim.Render(look.Spinner(env.Now) + " connecting…")}
	case Lost:
		lines = []string{st.Error.Render("not connected"), "", "Press " + st.Key.Render("R") + " to try again, " + st.Key.Render("q") + " to quit."}
	default:
		if m.in.Proxy {
			lines = m.hostHint(env)
			break
		}
		lines = []string{st.Bold.Render("You have not sent a request yet."), ""}
		lines = append(lines, m.firstStepHint(st)...)
		lines = append(lines, "Press "+st.Key.Render("?")+" for the keys you can use.")
	}
	block := lipgloss.JoinVertical(lipgloss.Center, lines...)
	return lipgloss.Place(width, height, lipgloss.Center, lipgloss.Center, block)
}

// hostHint is the empty list of a view on a proxy: the host's requests
// show here as they pass, and the HTTP proxy's own view says which URL
// the host is to be given.
func (m Model) hostHint(env screen.Env) []string {
	st := env.Styles
	lines := []string{st.Bold.Render("The host has not sent a request through the proxy yet."), ""}
	if m.in.HostURL != "" {
		lines = append(lines, "Give the host the URL in the header, this proxy's own:", st.Bold.Render(env.Line(m.in.HostURL)), "")
	}
	return append(lines, "Its requests show here, marked ⇄, as they pass.", "Press "+st.Key.Render("?")+" for the keys you can use.")
}

// firstStepHint says how to send a first request. It names the demo
// server's slow tool only when this server listed one: on any other server
// the hint is about what it does have.
func (m Model) firstStepHint(st look.Styles) []string {
	k := func(s string) string { return st.Key.Render(s) }
	cancel := "While it runs, press " + k("c") + " to cancel it and watch what happens."
	switch {
	case m.in.SlowTool:
		return []string{"Press " + k("n") + " to send one — on the demo server " + st.Bold.Render("slow") + " is chosen: press " + k("enter") + " twice.", cancel}
	case m.in.Tools > 0:
		n := m.in.Tools
		return []string{fmt.Sprintf("Press %s to send one: pick one of the server's %d %s with %s, then %s sends it.", k("n"), n, look.CountNoun(n, "tool", "tools"), k("enter"), k("enter")), cancel}
	}
	return []string{"Press " + k("n") + " to compose a request: a tool call, a resource read, a prompt or any method.", cancel}
}
