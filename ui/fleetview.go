package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/keymap"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/ui/waterfall"
	"inflight/wire"
)

// fleetHeaderLines is the merged list's header: the totals, then a chip
// per server (wrapped over at most two lines).
const fleetHeaderLines = 3

// View draws the member shown alone, or the merged list under the fleet's
// header.
func (f *Fleet) View() tea.View {
	if f.zoom >= 0 && f.zoom < len(f.members) {
		return f.members[f.zoom].m.View()
	}
	v := tea.NewView(look.FrameFilter().Clean(f.frame()))
	v.AltScreen = true
	v.WindowTitle = "inflight"
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// bodyHeight is what the header and footer leave the merged list.
func (f *Fleet) bodyHeight() int {
	return max(1, f.size.height-fleetHeaderLines-footerLines)
}

// frame is the merged list's screen.
func (f *Fleet) frame() string {
	env := f.env()
	var b strings.Builder
	b.WriteString(f.header())
	b.WriteByte('\n')
	h := f.bodyHeight()
	body := ""
	if f.lanesOn {
		body = f.waterfall(env, h)
	} else {
		body = f.list.View(env, f.size.width, h)
	}
	b.WriteString(clampLines(body, h, f.size.width))
	b.WriteByte('\n')
	b.WriteString(f.statusLine())
	b.WriteByte('\n')
	b.WriteString(f.footer())
	return b.String()
}

// waterfall is the servers' requests on one time axis, a lane each, the
// merged list's selection marked.
func (f *Fleet) waterfall(env screen.Env, h int) string {
	lanes := make([]waterfall.Lane, len(f.members))
	for i, mb := range f.members {
		lanes[i] = waterfall.Lane{Name: mb.name, Env: mb.m.env()}
	}
	sel, ok := f.list.Selected()
	if !ok {
		sel.Lane = -1
	}
	return waterfall.Lanes(env, lanes, sel.Lane, sel.ID, f.size.width, h)
}

// serverChip is one server in the header: its name, its state, its
// requests and how many are in flight.
func (f *Fleet) serverChip(mb *member) string {
	st := f.theme.styles
	m := mb.m
	name := termsafe.Line(mb.name)
	c := m.tracker.Counts()
	n := c.InFlight + c.Cancelling + c.Done
	switch {
	case m.conn.state == connConnecting:
		return st.Dim.Render(name + " … connecting")
	case m.conn.state == connLost && m.opts.attaching():
		return st.Dim.Render(fmt.Sprintf("%s ■ ended · %d", name, n))
	case m.conn.state == connLost && !m.conn.everConnected:
		return st.Error.Render(name + " ✗ could not connect")
	case m.conn.state == connLost:
		return st.Error.Render(fmt.Sprintf("%s ✗ lost · %d", name, n))
	}
	chip := fmt.Sprintf("%s ● %d", name, n)
	if c.InFlight+c.Cancelling > 0 {
		chip += fmt.Sprintf(" (%d in flight)", c.InFlight+c.Cancelling)
	}
	if c.Flagged > 0 {
		chip += fmt.Sprintf(" ⚑%d", c.Flagged)
	}
	return chip
}

// header is the totals over every server, then the servers' chips.
func (f *Fleet) header() string {
	st := f.theme.styles
	total, active, flagged := 0, 0, 0
	chips := make([]string, len(f.members))
	for i, mb := range f.members {
		c := mb.m.tracker.Counts()
		total += c.InFlight + c.Cancelling + c.Done
		active += c.InFlight + c.Cancelling
		flagged += c.Flagged
		chips[i] = f.serverChip(mb)
	}
	top := fmt.Sprintf("%s · %d %s · %d %s, %d in flight", st.Title.Render("inflight"), len(f.members), plural(len(f.members), "server", "servers"), total, plural(total, "request", "requests"), active)
	if flagged > 0 {
		top += fmt.Sprintf(", ⚑ %d flagged", flagged)
	}
	if fl := f.list.FilterShown(); fl != 0 {
		top += " · f: " + fl.String()
	}
	if s := f.list.Search(); s != "" || f.list.Searching() {
		top += " · /" + termsafe.Line(s)
		if f.list.Searching() {
			top += "▏"
		}
	}
	for _, u := range f.unjoined {
		chips = append(chips, st.Error.Render(termsafe.Line(u.Name)+" ✗ not attached"))
	}
	lines := []string{look.Fit(top, f.size.width)}
	line := ""
	for _, c := range chips {
		switch {
		case line == "":
			line = c
		case lipgloss.Width(line)+3+lipgloss.Width(c) <= f.size.width:
			line += " · " + c
		default:
			lines = append(lines, look.Fit(line, f.size.width))
			line = c
		}
	}
	lines = append(lines, look.Fit(line, f.size.width))
	for len(lines) < fleetHeaderLines {
		lines = append(lines, "")
	}
	if len(lines) > fleetHeaderLines {
		lines = lines[:fleetHeaderLines]
		lines[fleetHeaderLines-1] = look.Fit(lines[fleetHeaderLines-1]+" …", f.size.width)
	}
	return strings.Join(lines, "\n")
}

// statusLine is the fleet's note, or why the first failed server failed.
func (f *Fleet) statusLine() string {
	st := f.theme.styles
	if f.note != "" {
		return st.Status.Render(look.Fit("› "+termsafe.Line(f.note), f.size.width))
	}
	if f.spoke >= 0 && f.spoke < len(f.members) {
		mb := f.members[f.spoke]
		c := mb.m.chrome()
		c.width = f.size.width
		if c.status.text != "" {
			// Request IDs are the server's own: say whose.
			c.status.text = mb.name + ": " + c.status.text
		}
		if line := c.statusLine(); line != "" {
			return line
		}
	}
	for _, mb := range f.members {
		if m := mb.m; m.conn.state == connLost && m.conn.err != nil && !m.opts.attaching() {
			return st.Error.Render(look.Fit("✗ "+termsafe.Line(mb.name)+": "+m.opts.line(m.conn.err.Error()), f.size.width))
		}
	}
	if len(f.unjoined) > 0 {
		u := f.unjoined[0]
		return st.Error.Render(look.Fit("✗ could not attach to "+termsafe.Line(u.Name)+": "+termsafe.Line(u.Why), f.size.width))
	}
	return ""
}

// footer is the merged list's keys: those of the selected row's server,
// enabled by that row's state as on the server's own list (the keys the
// merged list does not take go to that server), with the merged list's
// own (f, /) and v drawing lanes. When the usual keys do not fit, fewer
// are chosen as the one server's footer chooses them, so "? help" and
// "q quit" stay.
func (f *Fleet) footer() string {
	h := help.New()
	h.Styles = f.theme.styles.Help
	keys := f.rowKeys()
	keys.Waterfall.SetHelp("v", "lanes")
	keys.Quit.SetHelp("q", "quit")
	filter := key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter"))
	search := key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search servers"))
	sep := lipgloss.Width(h.ShortSeparator)
	for _, line := range [][]key.Binding{
		beforeHelp(keys.ShortHelp(), filter, search),
		beforeHelp(keys.CompactHelp(), filter, search),
		beforeHelp(keys.CompactHelp(), filter),
		keys.EssentialHelp(),
	} {
		if shortHelpWidth(line, sep) <= f.size.width {
			return look.Fit(h.ShortHelpView(line), f.size.width)
		}
	}
	return look.Fit(h.ShortHelpView(keys.BareHelp()), f.size.width)
}

// beforeHelp is line with extra put before its "?" (at its end when it
// has none).
func beforeHelp(line []key.Binding, extra ...key.Binding) []key.Binding {
	at := len(line)
	for i, b := range line {
		if b.Help().Key == "?" {
			at = i
			break
		}
	}
	out := make([]key.Binding, 0, len(line)+len(extra))
	out = append(out, line[:at]...)
	out = append(out, extra...)
	return append(out, line[at:]...)
}

// rowKeys is the key map of the server a key goes to (Fleet.target), its
// keys enabled as they would be with the merged list's selection selected
// on that server's own list (none: no row is selected).
func (f *Fleet) rowKeys() keymap.KeyMap {
	i := f.target()
	if i < 0 {
		// No server yet: only the keys that need none.
		keys := f.keys
		keys.SetState(keymap.State{Mode: keymap.ModeList})
		return keys
	}
	m := f.members[i].m
	sel, ok := f.list.Selected()
	if !ok || sel.Lane != i {
		sel.ID = wire.ID{}
	}
	own := m.screens.list
	m.screens.list = own.Select(sel.ID, false)
	st := m.keyState(keymap.ModeList)
	m.screens.list = own
	keys := m.keys
	keys.SetState(st)
	return keys
}
