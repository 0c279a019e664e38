package attach

import (
	"strings"

	"charm.land/lipgloss/v2"

	"inflight/event"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// HelpIntro is the help screen's opening lines on a proxy: whose cancels
// the view shows, what it flags, and what its keys do.
func (m Model) HelpIntro(env screen.Env) []string {
	st := env.Styles
	last := "  This view sends nothing: q or ctrl+c detaches; the proxy runs on."
	switch {
	case m.ended:
		last = "  The proxy ended: this is its recorded run, and no key acts through it."
	case m.proxy.InProcess && m.proxy.Acts:
		last = "  The keys below act through the proxy; this is its own process: q stops it."
	case m.proxy.InProcess:
		last = "  This view only watches. It is the proxy's own process: q or ctrl+c stops it."
	case m.proxy.Acts:
		last = "  The keys below act through the proxy; q or ctrl+c detaches, the proxy runs on."
	}
	head := st.Title.Render("inflight") + " watches the proxy " + env.Line(m.proxy.Name) + ": the host's requests, marked ⇄."
	flagged := st.Flag.Render("⚑ flagged")
	if m.transport(env) == event.TransportHTTP.String() {
		return []string{head,
			"  On HTTP the host cancels by closing its request's stream (modern era) or",
			"  with notifications/cancelled (legacy). " + flagged + ": a cancel of an unknown",
			"  ID or of initialize, a legacy stream closed and not resumed, a request the",
			"  host left in flight when it went, what the server sends after its cancel.",
			last,
			"",
		}
	}
	return []string{head,
		"  On stdio the host cancels with notifications/cancelled. " + flagged + ":",
		"  a cancel of an unknown ID or of initialize, a request the host left in",
		"  flight when it went, and what the server sends after the host's cancel.",
		last,
		"",
	}
}

// transport is the host's transport to the proxy: the connection's once
// the proxy saw it, else what the view was told when it attached.
func (m Model) transport(env screen.Env) string {
	if info, ok := env.Tracker.Conn(); ok {
		return info.Transport.String()
	}
	return m.proxy.Transport
}

// Banner says, once the proxy's stream ended, that the proxy is gone and
// that what it saw stays, in a screen width wide.
func (m Model) Banner(env screen.Env, width int) string {
	text := "↯ the proxy ended — what it recorded stays here; q to leave"
	if !m.serverGone {
		// A proxy that ends says its server's end first: without it, the
		// stream stopped short, and only that was seen.
		text = "↯ the proxy's stream stopped before the proxy's end (it was killed, or dropped this view for falling behind) — q to leave"
	}
	if err := m.endErr; err != nil {
		text = "↯ the proxy's stream broke (" + env.Line(err.Error()) + ") — what came before stays here; q to leave"
	}
	return env.Styles.Banner.Render(look.Fit(text, width-2))
}

// HeaderParts are the header's choices on a proxy, widest first, for
// room cells, after title: "attach NAME · host <-> CMD" keeps its place
// longest (the command losing its middle first), then the proxy's name
// alone, since it is what the view is on. proto is the transport and era,
// server the server's name ("" when unknown).
func (m Model) HeaderParts(env screen.Env, title, proto, server string, room int) [][]string {
	name := "attach " + env.Line(m.proxy.Name)
	prefix := name + " · host <-> "
	cmd := env.Line(m.proxy.Command)
	var choices [][]string
	era := proto // "stdio · modern 2026-07-28" without its version
	if i := strings.LastIndexByte(proto, ' '); i > 0 && strings.Count(proto, " ") > 2 && i+1 < len(proto) && proto[i+1] >= '0' && proto[i+1] <= '9' {
		// Its last word is the version ("2026-07-28"), not an era of a
		// proxy that saw two ("modern + legacy").
		era = proto[:i]
	}
	rests := [][]string{{proto, server}, {proto}, {era}}
	if m.proxy.InProcess {
		// The command is the URL to give the host: it is shown whole
		// while it fits, before the server's name and the era's version.
		for _, rest := range append(rests, nil) {
			parts := append([]string{title, prefix + cmd}, rest...)
			if lipgloss.Width(strings.Join(parts, " · ")) <= room {
				choices = append(choices, parts)
			}
		}
	}
	for _, rest := range rests {
		parts := append([]string{title, ""}, rest...)
		fixed := lipgloss.Width(strings.Join(parts, " · "))
		avail := room - fixed - lipgloss.Width(prefix)
		if avail >= lipgloss.Width(cmd) || avail >= look.MinHeaderTarget {
			parts[1] = prefix + look.MiddleEllipsis(cmd, avail)
			choices = append(choices, parts)
		}
	}
	return append(choices, []string{title, name, proto, server}, []string{title, name, proto}, []string{title, name})
}
