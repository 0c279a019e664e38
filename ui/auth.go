package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// The auth view (A): the steps of the connection's OAuth authorization as
// the client reported them (event.Auth), one after the other with their
// times, like a request's timeline. The steps never hold a token or a
// secret (package oauth keeps them out); what they hold is the servers'
// text, sanitised on the way to the screen like any other.

// maxAuthSteps bounds the steps kept; the oldest go first.
const maxAuthSteps = 500

// authStep is one step as the UI keeps it.
type authStep struct {
	step event.AuthStep
	// at is when the step began (the step's Start, else the event's time).
	at time.Time
	// req is the JSON-RPC request whose HTTP request caused the step (zero:
	// none, or the client's own housekeeping).
	req      wire.ID
	internal bool
}

// authState is what the UI knows of the connection's authorization.
type authState struct {
	steps   []authStep
	dropped int
	// challenged is when the last challenge came; pending says that no
	// token, retry or failure followed it yet (see pending).
	challenged time.Time
	open       bool
	// named are the requests the steps of the authorization in progress
	// named (the refused ones).
	named map[wire.ID]bool
	// retried are the requests sent again with a new token (the retry step
	// names them).
	retried map[wire.ID]bool
	// top is the first line shown; follow keeps the newest steps in view.
	top    int
	follow bool
}

// recordAuth keeps one step and follows what it says of the authorization.
//
// The judgement of "pending" is the UI's, and small: an authorization is
// in progress from a challenge (a 401, or a 403 asking for more scope)
// until a token is obtained or kept (token, refresh, stored without an
// error), the refused request is sent again (retry), the browser step
// ends in an error (cancelled or timed out), or the authorization fails.
func (m *Model) recordAuth(ev *event.Event) {
	if ev.AuthStep == nil {
		return
	}
	a := &m.auth
	s := authStep{step: *ev.AuthStep, at: ev.AuthStep.Start, req: ev.RequestID, internal: ev.Internal}
	if s.at.IsZero() {
		s.at = ev.Time
	}
	if len(a.steps) == 0 {
		a.follow = true
	}
	if len(a.steps) >= maxAuthSteps {
		a.steps = append(a.steps[:0], a.steps[1:]...)
		a.dropped++
	}
	a.steps = append(a.steps, s)
	defer func() {
		if a.open && !s.req.IsZero() {
			if a.named == nil {
				a.named = map[wire.ID]bool{}
			}
			a.named[s.req] = true
		}
	}()
	switch st := s.step; st.Kind {
	case event.AuthChallenge:
		if !a.open {
			// A second request refused meanwhile waits for the same
			// authorization: it began at the first challenge.
			a.challenged, a.open, a.named = ev.Time, true, nil
		}
	case event.AuthToken, event.AuthRefresh, event.AuthStored:
		if st.Err == "" {
			a.open = false
		}
	case event.AuthFailed:
		a.open = false
	case event.AuthBrowser:
		// The browser step cancelled (the request that waited for it gave
		// up) or timed out: no token is coming from it.
		if st.Err != "" {
			a.open = false
		}
	case event.AuthRetry:
		a.open = false
		if !ev.RequestID.IsZero() {
			if a.retried == nil {
				a.retried = map[wire.ID]bool{}
			}
			a.retried[ev.RequestID] = true
		}
	}
}

// authPending reports whether an authorization is in progress, and since when.
func (m *Model) authPending() (time.Time, bool) {
	return m.auth.challenged, m.auth.open
}

// waitingAuth reports whether r waits for the authorization: it is in
// flight with nothing received for it yet (pending), while an
// authorization is in progress, and it is the request that was refused or
// was created since the challenge (every HTTP request of the connection
// waits behind the one authorization).
func (m *Model) waitingAuth(r *session.Request) bool {
	since, ok := m.authPending()
	if !ok || r.State != session.StatePending {
		return false
	}
	return !r.Created.Before(since) || m.auth.named[r.ID]
}

// authCell is the row's last column, with what the authorization did to
// the request: waiting for it, or sent again with a new token.
func (m *Model) authCell(r *session.Request, c columns, now time.Time) string {
	st := m.styles
	if m.waitingAuth(r) {
		since, _ := m.authPending()
		s := "⧗ waiting for authorization"
		if c.detail >= len([]rune(s))+8 {
			s += " · " + look.Dur(now.Sub(since))
		}
		return st.Warn.Render(s)
	}
	cell := m.detailCellWithLogs(r, c, now)
	if m.auth.retried[r.ID] {
		mark := "↻ retried · "
		if c.detail < 30 {
			mark = "↻ "
		}
		return st.Warn.Render(mark) + cell
	}
	return cell
}

// authLines are the auth view's lines, each step a first line (time, time
// since the first step, kind, HTTP exchange) and indented lines for what
// it said, wrapped to width.
func (m *Model) authLines(width int) []string {
	st := m.styles
	a := &m.auth
	if len(a.steps) == 0 {
		return []string{st.Dim.Render("  (no authorization steps on this connection)")}
	}
	const lead = 14 // "15:04:05.000  "
	indent := strings.Repeat(" ", lead+10+2)
	textW := max(10, width-len(indent))
	first := a.steps[0].at
	var out []string
	var prevReq wire.ID
	for _, s := range a.steps {
		p := s.step
		kind := p.Kind.String()
		head := st.Dim.Render(s.at.Format("15:04:05.000")) + "  " + look.FitLeft("+"+look.Dur(s.at.Sub(first)), 8) + "  "
		style := st.Running
		switch {
		case p.Err != "" || p.Kind == event.AuthFailed:
			style = st.Error
		case p.FellBack:
			style = st.Warn
		case p.Kind == event.AuthChallenge:
			style = st.Warn
		case p.Kind == event.AuthToken, p.Kind == event.AuthRefresh, p.Kind == event.AuthStored:
			style = st.Good
		}
		line := style.Render(strings.TrimSpace(kind))
		if p.Status != 0 {
			line += fmt.Sprintf(" → %d", p.Status)
		}
		if p.Duration > 0 {
			line += st.Dim.Render(" (" + look.Dur(p.Duration) + ")")
		}
		if p.FellBack {
			line += st.Warn.Render(" · fell back")
		}
		if !s.req.IsZero() && !s.internal && s.req != prevReq {
			line += st.Dim.Render(" · for #" + s.req.String())
		}
		prevReq = s.req
		out = append(out, look.Fit(head+line, width))
		var more []string
		if p.Method != "" || p.URL != "" {
			more = append(more, m.line(strings.TrimSpace(p.Method+" "+p.URL)))
		}
		if p.Text != "" {
			more = append(more, m.line(p.Text))
		}
		if len(p.Scopes) > 0 {
			w := "scopes "
			switch p.Kind {
			case event.AuthToken, event.AuthRefresh, event.AuthStored:
				w = "scopes granted "
			case event.AuthChallenge, event.AuthBrowser:
				w = "scopes asked "
			case event.AuthResourceMetadata, event.AuthServerMetadata:
				w = "scopes supported "
			}
			more = append(more, w+m.line(strings.Join(p.Scopes, " ")))
		}
		if p.Issuer != "" && p.Kind != event.AuthServerMetadata {
			more = append(more, "issuer "+m.line(p.Issuer))
		}
		if p.ClientID != "" {
			more = append(more, "client ID "+m.line(p.ClientID))
		}
		if !p.Expires.IsZero() {
			more = append(more, "token expires "+p.Expires.Local().Format("15:04:05")+" (tokens are never shown)")
		}
		if p.Err != "" {
			more = append(more, st.Error.Render("error: "+m.line(p.Err)))
		}
		for _, t := range more {
			for _, l := range strings.Split(ansi.Wrap(t, textW, ""), "\n") {
				out = append(out, look.Fit(indent+l, width))
			}
		}
	}
	return out
}

// viewAuth renders the auth view: a title, then the steps.
func (m *Model) viewAuth(height int) string {
	st := m.styles
	a := &m.auth
	rows := max(1, height-1)
	lines := m.authLines(m.width)
	last := max(0, len(lines)-rows)
	if a.follow {
		a.top = last
	}
	a.top = min(max(a.top, 0), last)
	title := fmt.Sprintf("AUTHORIZATION · %d %s", len(a.steps), look.CountNoun(len(a.steps), "step", "steps"))
	if since, ok := m.authPending(); ok {
		title += " · in progress for " + look.Dur(m.now().Sub(since))
	}
	if a.dropped > 0 {
		title += fmt.Sprintf(" · %d older dropped", a.dropped)
	}
	if a.top > 0 {
		title += " · ↑ more"
	}
	if a.top < last {
		title += " · ↓ more"
	}
	var b strings.Builder
	b.WriteString(st.ColumnHeader.Render(look.Fit(title, m.width)))
	for i := a.top; i < min(len(lines), a.top+rows); i++ {
		b.WriteByte('\n')
		b.WriteString(lines[i])
	}
	return b.String()
}

// handleAuthKey scrolls the auth view.
func (m *Model) handleAuthKey(msg tea.KeyPressMsg) bool {
	a := &m.auth
	k := m.keys
	page := max(1, m.bodyHeight()-2)
	switch {
	case key.Matches(msg, k.Up):
		m.scrollAuth(-1)
	case key.Matches(msg, k.Down):
		m.scrollAuth(1)
	case key.Matches(msg, k.PageUp):
		m.scrollAuth(-page)
	case key.Matches(msg, k.PageDown):
		m.scrollAuth(page)
	case key.Matches(msg, k.Top):
		a.top, a.follow = 0, false
		m.scrollAuth(0)
	case key.Matches(msg, k.Bottom):
		a.follow = true
	default:
		return false
	}
	return true
}

// scrollAuth moves the auth view by d lines (the keys, the mouse wheel);
// at the bottom it follows the new steps again.
func (m *Model) scrollAuth(d int) {
	a := &m.auth
	if d < 0 {
		a.follow = false
	}
	last := max(0, len(m.authLines(m.width))-max(1, m.bodyHeight()-1))
	if a.follow {
		a.top = last
	}
	a.top = min(max(a.top+d, 0), last)
	a.follow = a.top == last
}
