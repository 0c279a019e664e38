package ui

import (
	"errors"
	"fmt"
	"strings"

	"inflight/ui/look"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/client"
	"inflight/keymap"
)

// headerLines and footerLines frame the body.
const (
	headerLines = 2
	footerLines = 2 // status line and short help
)

// bodyHeight is what is left between the header and the footer.
func (m *Model) bodyHeight() int {
	h := m.height - headerLines - footerLines - m.scrubberLines()
	if m.state == connLost {
		h -= strings.Count(m.viewBanner(), "\n") + 1
	}
	return max(1, h)
}

// View renders the whole screen. It reads state only; elapsed times and
// countdowns are computed here from timestamps.
//
// Every frame passes two last checks: whatever path a string took, no
// secret reaches the screen (Redact), and nothing but our own styling acts
// on the terminal (frameFilter, see frame.go).
func (m *Model) View() tea.View {
	v := tea.NewView(look.FrameFilter().Clean(m.opts.Redact(m.frame())))
	v.AltScreen = true
	v.WindowTitle = "inflight"
	// The one place mouse reports are asked for: clicks and the wheel
	// (cell motion), which handleWheel turns into scrolling. Without it
	// the terminal would scroll its own buffer, not the views.
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// frame is the screen as the views draw it, before View's last checks.
func (m *Model) frame() string {
	var b strings.Builder
	b.WriteString(m.viewHeader())
	b.WriteByte('\n')
	if m.state == connLost {
		b.WriteString(m.viewBanner())
		b.WriteByte('\n')
	}
	h := m.bodyHeight()
	var body string
	switch m.mode {
	case keymap.ModeDetail:
		body = m.viewDetail(h)
	case keymap.ModeLog:
		body = m.logv.View(m.env(), m.width, h)
	case keymap.ModeStderr:
		body = m.stderrv.View(m.env(), m.width, h)
	case keymap.ModeAuth:
		body = m.auth.View(m.env(), m.width, h)
	case keymap.ModeComposer:
		body = m.composer.View(m.env(), m.width, h)
	case keymap.ModeAnswer:
		body = m.answer.View(m.env(), m.width, h)
	case keymap.ModeHelp:
		body = m.helpv.View(m.env(), m.width, h)
	default:
		body = m.viewList(h)
	}
	body = clampLines(body, h, m.width)
	if m.prompt.kind != promptNone {
		body = m.overlayPrompt(body, h)
	} else if m.attachv.Prompting() {
		body = overlayBox(body, m.attachv.View(m.env(), m.width, h), m.width)
	}
	b.WriteString(body)
	b.WriteByte('\n')
	b.WriteString(m.viewScrubber())
	b.WriteString(m.viewStatus())
	b.WriteByte('\n')
	b.WriteString(m.footer())
	return b.String()
}

// clampLines makes the body exactly h lines, none wider than w.
func clampLines(s string, h, w int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			lines[i] = look.Trunc(l, w)
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (m *Model) viewHeader() string {
	st := m.styles
	info, connected := m.tracker.Conn()
	var state string
	switch m.state {
	case connConnecting:
		state = st.Warn.Render(look.Spinner(m.now()) + " connecting")
	case connUp:
		state = st.Good.Render("● connected")
	case connLost:
		state = st.Error.Render("↯ disconnected")
		if m.attaching() {
			state = st.Error.Render("↯ proxy ended")
		}
	}
	// What matters most comes first; on a narrow terminal the target, then
	// the server's name, give way so the era and version stay readable.
	proto := m.opts.Transport
	if connected {
		proto = info.Transport.String() + " · " + info.Era.String()
		if info.ProtocolVersion != "" {
			proto += " " + info.ProtocolVersion
		}
	}
	server := ""
	if connected && info.ServerName != "" {
		server = m.line(info.ServerName)
		if info.ServerVersion != "" {
			server += " " + m.line(info.ServerVersion)
		}
	}
	sep := st.Dim.Render(" · ")
	room := m.width - lipgloss.Width(state) - 1
	// A long target (a command line, a URL) loses its middle before it
	// goes: its start and its end are what tell servers apart.
	target := m.line(m.opts.Target)
	rest := lipgloss.Width(strings.Join([]string{"inflight", proto, server, ""}, " · "))
	if avail := room - rest; lipgloss.Width(target) > avail && avail >= look.MinHeaderTarget {
		target = look.MiddleEllipsis(target, avail)
	}
	// Without the server's name (which the server says of itself), the
	// target (which says where inflight is connected) has more room.
	target2 := m.line(m.opts.Target)
	rest2 := lipgloss.Width(strings.Join([]string{"inflight", proto, ""}, " · "))
	if avail := room - rest2; lipgloss.Width(target2) > avail && avail >= look.MinHeaderTarget {
		target2 = look.MiddleEllipsis(target2, avail)
	}
	var left string
	choices := [][]string{
		{st.Title.Render("inflight"), target, proto, server},
		{st.Title.Render("inflight"), target2, proto},
		{st.Title.Render("inflight"), proto, server},
		{st.Title.Render("inflight"), proto},
	}
	if m.attaching() {
		choices = m.attachv.HeaderParts(m.env(), st.Title.Render("inflight"), proto, server, room)
	}
	for _, parts := range choices {
		var keep []string
		for _, p := range parts {
			if p != "" {
				keep = append(keep, p)
			}
		}
		left = strings.Join(keep, sep)
		if lipgloss.Width(left) <= room {
			break
		}
	}
	line1 := look.Fit(left, room) + " " + state
	c := m.tracker.Counts()
	counts := []string{fmt.Sprintf("%d in flight", c.InFlight-m.waitingInput())}
	if n := m.waitingForYou(); n > 0 {
		counts = append(counts, st.Warn.Render(fmt.Sprintf("? %d waiting for you", n)))
	}
	counts = append(counts,
		fmt.Sprintf("%d cancelling", c.Cancelling),
		fmt.Sprintf("%d done", c.Done),
	)
	flagged := fmt.Sprintf("%d flagged", c.Flagged)
	if c.Flagged > 0 {
		flagged = st.Flag.Render("⚑ " + flagged)
	}
	counts = append(counts, flagged)
	if vs := m.tracker.Violations().Total(); vs > 0 {
		counts = append(counts, st.Flag.Render(fmt.Sprintf("⚠ %d %s", vs, look.CountNoun(int(vs), "violation", "violations"))))
	}
	line2 := st.Dim.Render(strings.Join(counts, " · "))
	if shown := m.listShownText(m.width - lipgloss.Width(line2) - 1); shown != "" {
		w := lipgloss.Width(shown)
		line2 = look.Fit(line2, max(0, m.width-w-1)) + " " + shown
	}
	return look.Fit(line1, m.width) + "\n" + look.Fit(line2, m.width)
}

// footer is the one-line help. When the usual keys do not fit, the
// essential ones are shown rather than the line cut before "? help" and
// "q quit".
func (m *Model) footer() string {
	h := m.help
	h.SetWidth(0)
	if v := h.ShortHelpView(m.keys.ShortHelp()); lipgloss.Width(v) <= m.width {
		return look.Fit(v, m.width)
	}
	if v := h.ShortHelpView(m.keys.EssentialHelp()); lipgloss.Width(v) <= m.width {
		return look.Fit(v, m.width)
	}
	return look.Fit(h.ShortHelpView(m.keys.BareHelp()), m.width)
}

// viewBanner says the connection is gone and what to do.
func (m *Model) viewBanner() string {
	if m.attaching() {
		return m.attachv.Banner(m.env(), m.width)
	}
	head := "↯ connection lost"
	switch {
	case !m.everConnected:
		head = "↯ could not connect"
	case errors.Is(m.connErr, client.ErrUnreachable):
		head = "↯ server unreachable"
	}
	tail := " — press R to reconnect"
	if !m.everConnected {
		tail = " — press R to try again"
	}
	if m.opts.Transport == "stdio" {
		tail += " (restarts the server)"
	}
	if m.connErr == nil {
		return m.styles.Banner.Render(look.Fit(head+tail, m.width-2))
	}
	cause := m.line(m.connErr.Error())
	if one := head + ": " + cause + tail; lipgloss.Width(one) <= m.width-2 {
		return m.styles.Banner.Render(look.Fit(one, m.width-2))
	}
	// Too long for one line: the cause gets a line of its own. It is
	// usually at the end of an error ("…: no such file or directory"), so a
	// long one loses its middle, not its end.
	room := m.width - 2
	if r := []rune(cause); len(r) > room && room > 10 {
		keep := room - 1
		front := keep / 3
		cause = string(r[:front]) + "…" + string(r[len(r)-(keep-front):])
	}
	return m.styles.Banner.Render(look.Fit(head+tail, m.width-2)) + "\n" + m.styles.Error.Render(look.Fit("  "+cause, m.width))
}

func (m *Model) viewStatus() string {
	st := m.styles
	if m.status.text == "" {
		return ""
	}
	text := m.line(m.status.text)
	switch m.status.level {
	case levelWarn:
		return st.Warn.Render(look.Fit("! "+text, m.width))
	case levelError:
		return st.Error.Render(look.Fit("✗ "+text, m.width))
	}
	return st.Status.Render(look.Fit("› "+text, m.width))
}

// overlayPrompt draws a dialog over the bottom of the body.
func (m *Model) overlayPrompt(body string, h int) string {
	st := m.styles
	var content string
	switch m.prompt.kind {
	case promptReason:
		content = st.Bold.Render(m.prompt.text) + "\n"
		if m.prompt.note != "" {
			content += st.Dim.Render(look.Fit(m.prompt.note, max(20, m.width-8))) + "\n"
		}
		hint := "enter cancel · esc keep running"
		if m.prompt.hint != "" {
			hint = m.prompt.hint
		}
		content += m.prompt.input.View() + "\n" + st.Dim.Render(hint)
	default:
		content = st.Bold.Render(m.prompt.text) + "\n" + st.Key.Render("y") + " yes · " + st.Key.Render("n") + " no"
	}
	return overlayBox(body, st.Box.Render(content), m.width)
}

// overlayBox lays a dialog's box over the bottom of the body.
func overlayBox(body, box string, width int) string {
	lines := strings.Split(body, "\n")
	boxLines := strings.Split(box, "\n")
	start := max(0, len(lines)-len(boxLines)-1)
	for i, bl := range boxLines {
		if start+i < len(lines) {
			lines[start+i] = look.Fit("  "+bl, width)
		}
	}
	return strings.Join(lines, "\n")
}
