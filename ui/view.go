package ui

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/client"
	"inflight/keymap"
	"inflight/ui/attach"
	"inflight/ui/list"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// headerLines and footerLines frame the body.
const (
	headerLines = 2
	footerLines = 2 // status line and short help
)

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
	c := m.chrome()
	var b strings.Builder
	b.WriteString(c.header())
	b.WriteByte('\n')
	if c.state == connLost {
		b.WriteString(c.banner())
		b.WriteByte('\n')
	}
	h := c.bodyHeight(m.size.height)
	// One Env for the frame: it holds the styles, which are not small.
	env := c.env
	var body string
	switch m.focus.mode {
	case keymap.ModeDetail:
		body = m.screens.viewDetail(env, m.size.width, h)
	case keymap.ModeLog:
		body = m.screens.logv.View(env, m.size.width, h)
	case keymap.ModeStderr:
		body = m.screens.stderrv.View(env, m.size.width, h)
	case keymap.ModeAuth:
		body = m.screens.auth.View(env, m.size.width, h)
	case keymap.ModeComposer:
		body = m.screens.composer.View(env, m.size.width, h)
	case keymap.ModeAnswer:
		body = m.answering.form.View(env, m.size.width, h)
	case keymap.ModeHelp:
		body = m.screens.helpv.View(env, m.size.width, h)
	default:
		if m.focus.waterfallOn {
			body = m.screens.wf.View(env, m.size.width, h)
		} else {
			body = m.screens.list.View(env, m.size.width, h)
		}
	}
	body = clampLines(body, h, m.size.width)
	if m.screens.prompt.Open() {
		body = overlayBox(body, m.screens.prompt.View(env, m.size.width, h), m.size.width)
	} else if m.screens.attachv.Prompting() {
		body = overlayBox(body, m.screens.attachv.View(env, m.size.width, h), m.size.width)
	}
	b.WriteString(body)
	b.WriteByte('\n')
	b.WriteString(m.screens.replay.view(env, m.opts.replaying(), m.size.width))
	b.WriteString(c.statusLine())
	b.WriteByte('\n')
	b.WriteString(c.footer())
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

// chrome is what the frame's header, banner, status line and footer
// read of the root: they are the same whatever the screen.
type chrome struct {
	env   screen.Env
	width int
	// The connection: its state, why it was lost, whether it was ever up;
	// what it is to (redacted) and over what until the tracker knows.
	state             connState
	connErr           error
	everConnected     bool
	target, transport string
	// proxy, when onProxy, is the screen of a view on a proxy: it draws
	// the header's choices and the banner.
	proxy   attach.Model
	onProxy bool
	// waitingInput counts the requests in flight that wait for the user's
	// answer; waitingForYou is the header's "? N waiting for you".
	waitingInput, waitingForYou int
	// list says how many rows it shows, when it hides some.
	list list.Model
	// status is the status line's message.
	status statusLine
	// scrubber is the lines a replay's scrubber takes above the footer.
	scrubber int
	// replay: the frame of a recorded run, which reconnects nothing.
	replay bool
}

// chrome is the frame's chrome as of now.
func (m *Model) chrome() chrome {
	return chrome{
		env: m.env(), width: m.size.width,
		state: m.conn.state, connErr: m.conn.err, everConnected: m.conn.everConnected,
		target: m.opts.Target, transport: m.opts.Transport,
		proxy: m.screens.attachv, onProxy: m.opts.attaching(),
		waitingInput: waitingInput(m.tracker), waitingForYou: waitingForYou(m.tracker, m.opts.attaching()),
		list: m.screens.list, status: m.status, scrubber: m.opts.scrubberLines(), replay: m.opts.replaying(),
	}
}

// bodyHeight is what is left of height between the header (and the
// banner, when the connection is lost) and the footer.
func (c chrome) bodyHeight(height int) int {
	h := height - headerLines - footerLines - c.scrubber
	if c.state == connLost {
		h -= strings.Count(c.banner(), "\n") + 1
	}
	return max(1, h)
}

// header is the frame's two top lines: what inflight is connected to and
// how, then the requests' counts.
func (c chrome) header() string {
	return look.Fit(c.connLine(), c.width) + "\n" + look.Fit(c.countsLine(), c.width)
}

// connLine is the header's first line: inflight, the target, the transport
// and era, the server, and the connection's state.
func (c chrome) connLine() string {
	st := c.env.Styles
	info, connected := c.env.Tracker.Conn()
	var state string
	switch c.state {
	case connConnecting:
		state = st.Warn.Render(look.Spinner(c.env.Now) + " connecting")
	case connUp:
		state = st.Good.Render("● connected")
	case connLost:
		state = st.Error.Render("↯ disconnected")
		switch {
		case c.onProxy:
			state = st.Error.Render("↯ proxy ended")
		case c.cleanEnd():
			state = st.Dim.Render("■ ended")
		}
	}
	// What matters most comes first; on a narrow terminal the target, then
	// the server's name, give way so the era and version stay readable.
	proto := c.transport
	if connected {
		proto = info.Transport.String() + " · " + info.Era.String()
		if info.ProtocolVersion != "" {
			proto += " " + info.ProtocolVersion
		}
	}
	protoShort := ""
	if seen := c.env.Tracker.ErasSeen(); len(seen) > 1 {
		// A proxy's hosts spoke more than one era (one modern, then one
		// legacy): each is said, not only the first's.
		eras := make([]string, len(seen))
		for i, e := range seen {
			eras[i] = strings.TrimSpace(e.Era.String() + " " + c.env.Line(e.Version))
		}
		proto = c.transport
		if connected {
			proto = info.Transport.String()
		}
		protoShort = proto
		names := []string{}
		for _, e := range seen {
			if n := e.Era.String(); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		proto += " · " + strings.Join(eras, " + ")
		protoShort += " · " + strings.Join(names, " + ")
	}
	server := ""
	if connected && info.ServerName != "" {
		server = c.env.Line(info.ServerName)
		if info.ServerVersion != "" {
			server += " " + c.env.Line(info.ServerVersion)
		}
	}
	if tr, _, _ := strings.Cut(proto, " · "); tr != "" && strings.HasSuffix(c.env.Line(c.target), " "+tr) {
		// The command's last argument is the transport's name too
		// (server-everything's "… index.js stdio"): say which is which.
		proto = "transport " + proto
	}
	sep := st.Dim.Render(" · ")
	room := c.width - lipgloss.Width(state) - 1
	build := func(proto string) string {
		// A long target (a command line, a URL) loses its middle before it
		// goes: its start and its end are what tell servers apart.
		target := c.env.Line(c.target)
		rest := lipgloss.Width(strings.Join([]string{"inflight", proto, server, ""}, " · "))
		if avail := room - rest; lipgloss.Width(target) > avail && avail >= look.MinHeaderTarget {
			target = look.MiddleEllipsis(target, avail)
		}
		// Without the server's name (which the server says of itself), the
		// target (which says where inflight is connected) has more room.
		target2 := c.env.Line(c.target)
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
		if c.onProxy {
			choices = c.proxy.HeaderParts(c.env, st.Title.Render("inflight"), proto, server, room)
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
		return left
	}
	left := build(proto)
	if protoShort != "" && (!strings.Contains(left, proto) || lipgloss.Width(left) > room) {
		// Too narrow for each era's version: the eras alone.
		left = build(protoShort)
	}
	return look.Fit(left, room) + " " + state
}

// countsLine is the header's second line: the requests in flight, waiting
// for you, cancelling, done and flagged, the violations, and how many rows
// the list shows when it hides some.
func (c chrome) countsLine() string {
	st := c.env.Styles
	n := c.env.Tracker.Counts()
	counts := []string{fmt.Sprintf("%d in flight", n.InFlight-c.waitingInput)}
	if c.waitingForYou > 0 {
		counts = append(counts, st.Warn.Render(fmt.Sprintf("? %d waiting for you", c.waitingForYou)))
	}
	counts = append(counts,
		fmt.Sprintf("%d cancelling", n.Cancelling),
		fmt.Sprintf("%d done", n.Done),
	)
	flagged := fmt.Sprintf("%d flagged", n.Flagged)
	if n.Flagged > 0 {
		flagged = st.Flag.Render("⚑ " + flagged)
	}
	counts = append(counts, flagged)
	var unfollowed []string
	if n.Unfollowed > 0 {
		// A proxy's bound on the host's requests it follows (the newest).
		unfollowed = append(unfollowed, fmt.Sprintf("%d older %s no longer followed", n.Unfollowed, look.CountNoun(n.Unfollowed, "request", "requests")))
	}
	line := st.Dim.Render(strings.Join(slices.Concat(counts, c.faultCounts(false), unfollowed), " · "))
	if lipgloss.Width(line) > c.width {
		line = st.Dim.Render(strings.Join(slices.Concat(counts, c.faultCounts(true), unfollowed), " · "))
	}
	if shown := c.list.ShownText(c.env, c.width-lipgloss.Width(line)-1); shown != "" {
		w := lipgloss.Width(shown)
		line = look.Fit(line, max(0, c.width-w-1)) + " " + shown
	}
	return line
}

// faultCounts are the header's counts of the server's violations and of
// the host's findings (a proxy's): different parties' faults, counted
// apart; narrow names only the parties ("⚠ 2 server · ⚑ 3 host").
func (c chrome) faultCounts(narrow bool) []string {
	st := c.env.Styles
	vl := c.env.Tracker.Violations()
	var out []string
	if vs := int(vl.Total() - vl.HostTotal()); vs > 0 {
		text := fmt.Sprintf("⚠ %d %s", vs, look.CountNoun(vs, "violation", "violations"))
		if narrow && vl.HostTotal() > 0 {
			text = fmt.Sprintf("⚠ %d server", vs)
		}
		out = append(out, st.Flag.Render(text))
	}
	if hs := int(vl.HostTotal()); hs > 0 {
		text := fmt.Sprintf("⚑ %d %s", hs, look.CountNoun(hs, "host finding", "host findings"))
		if narrow {
			text = fmt.Sprintf("⚑ %d host", hs)
		}
		out = append(out, st.Flag.Render(text))
	}
	return out
}

// footer is the one-line help of the keys as enabled now. When the usual
// keys do not fit, the essential ones are shown rather than the line cut
// before "? help" and "q quit".
func (c chrome) footer() string {
	// Unbounded (width 0): the fitting is done here, by choosing the keys.
	h, keys := help.New(), c.env.Keys
	h.Styles = c.env.Styles.Help
	// The widths are measured on the words, and only the line chosen is
	// drawn: drawing each candidate to measure it cost a frame a good
	// part of its time.
	for _, line := range [][]key.Binding{keys.ShortHelp(), keys.CompactHelp(), keys.EssentialHelp()} {
		if shortHelpWidth(line, lipgloss.Width(h.ShortSeparator)) <= c.width {
			return look.Fit(h.ShortHelpView(line), c.width)
		}
	}
	return look.Fit(h.ShortHelpView(keys.BareHelp()), c.width)
}

// cleanEnd reports whether a recorded run's connection closed without an
// error: the transport_closed of a client that closed it itself (a call
// that finished, a proxy whose host went), not one the server lost.
func (c chrome) cleanEnd() bool {
	return c.replay && c.state == connLost && c.everConnected && c.connErr == nil
}

// banner says the connection is gone and what to do.
func (c chrome) banner() string {
	if c.onProxy {
		return c.proxy.Banner(c.env, c.width)
	}
	st := c.env.Styles
	if c.cleanEnd() {
		// Not the red of a loss: nothing went wrong.
		return st.Status.Padding(0, 1).Render(look.Fit("■ the connection closed here without an error, in the recorded run", c.width-2))
	}
	head := "↯ connection lost"
	switch {
	case !c.everConnected:
		head = "↯ could not connect"
	case errors.Is(c.connErr, client.ErrUnreachable):
		head = "↯ server unreachable"
	}
	tail := " — press R to reconnect"
	if !c.everConnected {
		tail = " — press R to try again"
	}
	if c.transport == "stdio" {
		tail += " (restarts the server)"
	}
	if c.replay {
		// A recorded run has nothing to reconnect: the banner says what
		// happened to the connection then.
		head, tail = head+" here, in the recorded run", ""
	}
	if c.connErr == nil {
		return st.Banner.Render(look.Fit(head+tail, c.width-2))
	}
	cause := c.env.Line(c.connErr.Error())
	if one := head + ": " + cause + tail; lipgloss.Width(one) <= c.width-2 {
		return st.Banner.Render(look.Fit(one, c.width-2))
	}
	// Too long for one line: the cause gets a line of its own. It is
	// usually at the end of an error ("…: no such file or directory"), so a
	// long one loses its middle, not its end.
	room := c.width - 2
	if r := []rune(cause); len(r) > room && room > 10 {
		keep := room - 1
		front := keep / 3
		cause = string(r[:front]) + "…" + string(r[len(r)-(keep-front):])
	}
	return st.Banner.Render(look.Fit(head+tail, c.width-2)) + "\n" + st.Error.Render(look.Fit("  "+cause, c.width))
}

// statusLine draws the status line's message ("" for none).
func (c chrome) statusLine() string {
	st := c.env.Styles
	text, level := c.status.shown()
	if text == "" {
		return ""
	}
	text = c.env.Line(text)
	switch level {
	case levelWarn:
		return st.Warn.Render(look.Fit("! "+text, c.width))
	case levelError:
		return st.Error.Render(look.Fit("✗ "+text, c.width))
	}
	return st.Status.Render(look.Fit("› "+text, c.width))
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

// shortHelpWidth is the width bubbles' ShortHelpView draws bindings in:
// each enabled binding's key and description with a space between, sep
// cells between bindings.
func shortHelpWidth(bindings []key.Binding, sep int) int {
	w, n := 0, 0
	for _, b := range bindings {
		if !b.Enabled() {
			continue
		}
		if n > 0 {
			w += sep
		}
		w += lipgloss.Width(b.Help().Key) + 1 + lipgloss.Width(b.Help().Desc)
		n++
	}
	return w
}
