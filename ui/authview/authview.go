// Package authview is the authorization screen (A): the steps of the
// connection's OAuth authorization as the client reported them
// (event.Auth), one after the other with their times, like a request's
// timeline. The steps never hold a token or a secret (package oauth keeps
// them out); what they hold is the servers' text, sanitised on the way to
// the screen like any other.
package authview

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
	"inflight/ui/screen"
	"inflight/wire"
)

// maxSteps bounds the steps kept; the oldest go first.
const maxSteps = 500

// step is one step as the screen keeps it.
type step struct {
	step event.AuthStep
	// at is when the step began (the step's Start, else the event's time).
	at time.Time
	// req is the JSON-RPC request whose HTTP request caused the step (zero:
	// none, or the client's own housekeeping).
	req      wire.ID
	internal bool
}

// Model is what the UI knows of the connection's authorization, and the
// screen that shows it.
type Model struct {
	steps   []step
	dropped int
	// challenged is when the last challenge came; open says that no
	// token, retry or failure followed it yet (see Record).
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
	// width and rows are the screen's size (SetSize): scrolling needs
	// them between frames.
	width, rows int
}

// Record keeps one step and follows what it says of the authorization.
//
// The judgement of "pending" is the UI's, and small: an authorization is
// in progress from a challenge (a 401, or a 403 asking for more scope)
// until a token is obtained or kept (token, refresh, stored without an
// error), the refused request is sent again (retry), the browser step
// ends in an error (cancelled or timed out), or the authorization fails.
func (m *Model) Record(ev *event.Event) {
	if ev.AuthStep == nil {
		return
	}
	a := m
	s := step{step: *ev.AuthStep, at: ev.AuthStep.Start, req: ev.RequestID, internal: ev.Internal}
	if s.at.IsZero() {
		s.at = ev.Time
	}
	if len(a.steps) == 0 {
		a.follow = true
	}
	if len(a.steps) >= maxSteps {
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

// Steps is how many steps are kept.
func (m *Model) Steps() int { return len(m.steps) }

// Pending reports whether an authorization is in progress, and since when.
func (m *Model) Pending() (time.Time, bool) { return m.challenged, m.open }

// Waiting reports whether r waits for the authorization: it is in flight
// with nothing received for it yet (pending), while an authorization is in
// progress, and it is the request that was refused or was created since
// the challenge (every HTTP request of the connection waits behind the one
// authorization).
func (m *Model) Waiting(r *session.Request) bool {
	if !m.open || r.State != session.StatePending {
		return false
	}
	return !r.Created.Before(m.challenged) || m.named[r.ID]
}

// Retried reports whether the request id was sent again with a new token.
func (m *Model) Retried(id wire.ID) bool { return m.retried[id] }

// lines are the screen's lines, each step a first line (time, time since
// the first step, kind, HTTP exchange) and indented lines for what it
// said, wrapped to width.
func (m Model) lines(env screen.Env, width int) []string {
	st := env.Styles
	a := &m
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
			more = append(more, env.Line(strings.TrimSpace(p.Method+" "+p.URL)))
		}
		if p.Text != "" {
			more = append(more, env.Line(p.Text))
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
			more = append(more, w+env.Line(strings.Join(p.Scopes, " ")))
		}
		if p.Issuer != "" && p.Kind != event.AuthServerMetadata {
			more = append(more, "issuer "+env.Line(p.Issuer))
		}
		if p.ClientID != "" {
			more = append(more, "client ID "+env.Line(p.ClientID))
		}
		if !p.Expires.IsZero() {
			more = append(more, "token expires "+p.Expires.Local().Format("15:04:05")+" (tokens are never shown)")
		}
		if p.Err != "" {
			more = append(more, st.Error.Render("error: "+env.Line(p.Err)))
		}
		for _, t := range more {
			for _, l := range strings.Split(ansi.Wrap(t, textW, ""), "\n") {
				out = append(out, look.Fit(indent+l, width))
			}
		}
	}
	return out
}

// SetSize sets the screen's size: width cells and height lines, the title
// included. The root calls it whenever the window or the body changes.
func (m *Model) SetSize(width, height int) { m.width, m.rows = width, max(1, height-1) }

// Top is the first line shown when not following.
func (m *Model) Top() int { return m.top }

// View draws a title, then the steps from the top line (the newest ones
// while following).
func (m Model) View(env screen.Env, width, height int) string {
	st := env.Styles
	rows := max(1, height-1)
	lines := m.lines(env, width)
	last := max(0, len(lines)-rows)
	top := m.top
	if m.follow {
		top = last
	}
	top = min(max(top, 0), last)
	title := fmt.Sprintf("AUTHORIZATION · %d %s", len(m.steps), look.CountNoun(len(m.steps), "step", "steps"))
	if since, ok := m.Pending(); ok {
		title += " · in progress for " + look.Dur(env.Now.Sub(since))
	}
	if m.dropped > 0 {
		title += fmt.Sprintf(" · %d older dropped", m.dropped)
	}
	if top > 0 {
		title += " · ↑ more"
	}
	if top < last {
		title += " · ↓ more"
	}
	var b strings.Builder
	b.WriteString(st.ColumnHeader.Render(look.Fit(title, width)))
	for i := top; i < min(len(lines), top+rows); i++ {
		b.WriteByte('\n')
		b.WriteString(lines[i])
	}
	return b.String()
}

// Update scrolls the screen with the movement keys; any other key is the
// root's.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	keys := env.Keys
	page := max(1, m.rows-1)
	switch {
	case key.Matches(k, keys.Up):
		m.scroll(env, -1)
	case key.Matches(k, keys.Down):
		m.scroll(env, 1)
	case key.Matches(k, keys.PageUp):
		m.scroll(env, -page)
	case key.Matches(k, keys.PageDown):
		m.scroll(env, page)
	case key.Matches(k, keys.Top):
		m.top, m.follow = 0, false
		m.scroll(env, 0)
	case key.Matches(k, keys.Bottom):
		m.follow = true
	default:
		return m, screen.Unused{}
	}
	return m, nil
}

// Wheel scrolls by d lines (the mouse wheel).
func (m Model) Wheel(env screen.Env, d int) Model {
	m.scroll(env, d)
	return m
}

// scroll moves the screen by d lines; at the bottom it follows the new
// steps again.
func (m *Model) scroll(env screen.Env, d int) {
	if d < 0 {
		m.follow = false
	}
	last := max(0, len(m.lines(env, m.width))-m.rows)
	if m.follow {
		m.top = last
	}
	m.top = min(max(m.top+d, 0), last)
	m.follow = m.top == last
}
