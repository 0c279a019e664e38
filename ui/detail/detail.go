// Package detail is the detail screen: one request, what it is and where
// it stands, what became of its cancel, its life on a timeline, and below
// them, in a viewport, the payloads that went back and forth.
package detail

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// Model is the detail of one request. It stays on the request it was
// opened on even when the list's selection follows newer requests.
type Model struct {
	id wire.ID
	vp viewport.Model
	// content is the body the viewport holds, built by Layout when built
	// (what it was built from) no longer matches the request: the
	// viewport keeps its scroll position while the request is unchanged,
	// and a payload is indented and sanitised once, not every frame.
	content string
	built   source
	// wrapped is the width content was cut to for the viewport (0: lay
	// it out again), and chop whether its long lines were cut rather
	// than wrapped.
	wrapped int
	chop    bool
	// trail is what the protocol log holds about the request that the
	// tracker's counts do not: when each message after the cancel came,
	// and a subscription's updates. Layout keeps it up to date.
	trail trail
	// host is what a proxy did to the request, as the root last said.
	host Host
}

// Input is what the root knows that the Env does not say, handed to
// Layout.
type Input struct {
	// Dark is the terminal's palette: the body is built again when it
	// changes (its styling is built in).
	Dark bool
	// Chop cuts long lines rather than wrapping them (w, shared by every
	// payload view).
	Chop bool
	// Host is what a proxy did to the request (inflight attach).
	Host Host
}

// Host is what inflight attach knows of a host's request from the proxy's
// own lines, which the tracker does not hold.
type Host struct {
	// Fact is the facts line's word on what the proxy did ("" for
	// nothing), as of the update that laid the detail out.
	Fact string
	// Acts are each step the proxy took, at its time: the timeline
	// reaches them all, and marks those with a label (⚑).
	Acts []Act
}

// Act is one step a proxy took on a request.
type Act struct {
	At time.Time
	// Label is the timeline's word for it ("⚑ held"); "" marks nothing.
	Label string
}

// ToggleWrap asks the root to switch every payload view between wrapping
// long lines and cutting them (w).
type ToggleWrap struct{}

// headerLines is the height of the part above the viewport: the summary,
// the cancel line, the timeline (bar and two label rows, a third when
// labels crowd) and a gap.
const headerLines = 8

// New opens the detail on request id, in a body of width × height.
func New(id wire.ID, width, height int) Model {
	m := Model{id: id, vp: viewport.New()}
	m.vp.SetHorizontalStep(look.HorizontalStep)
	m.vp.SetWidth(width)
	m.vp.SetHeight(max(1, height-headerLines))
	return m
}

// ID is the request shown (zero when none is).
func (m Model) ID() wire.ID { return m.id }

// Renamed follows the request shown when the tracker renames its ID (a
// host's session reusing it): was is the old ID, now the new one.
func (m Model) Renamed(was, now wire.ID) Model {
	if m.id == was {
		m.id = now
	}
	return m
}

// Update scrolls the body on the pager's keys and the wheel; w asks the
// root to wrap or cut long lines (ToggleWrap). Any other key is Unused:
// the root's global keys (c, esc, …) act on the request shown.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	wrap, act := screen.Page(env.Keys, msg, &m.vp)
	if wrap {
		return m, ToggleWrap{}
	}
	return m, act
}

// Layout sets what View reads: it brings the trail up to date, rebuilds
// the body when what it shows changed, cuts it to the width, and sizes the
// viewport to what the header above it takes. The root calls it after
// every update while the detail is open.
func (m Model) Layout(env screen.Env, in Input, width, height int) Model {
	r, ok := env.Tracker.Get(m.id)
	if !ok {
		return m
	}
	m.host = in.Host
	m.readTrail(env.Tracker, r)
	if src := m.sourceOf(env.Tracker, r, in.Dark); !src.same(&m.built) {
		m.built = src
		if body := m.body(env, r); body != m.content {
			// Following the end of a growing body stays at its end.
			atBottom := m.vp.AtBottom() && m.content != ""
			m.content = body
			m.vp.SetContentLines(look.PagerLines(body, width, in.Chop))
			m.wrapped, m.chop = width, in.Chop
			if atBottom {
				m.vp.GotoBottom()
			}
		}
	}
	if m.wrapped != width || m.chop != in.Chop {
		m.vp.SetContentLines(look.PagerLines(m.content, width, in.Chop))
		if !in.Chop {
			m.vp.SetXOffset(0)
		}
		m.wrapped, m.chop = width, in.Chop
	}
	m.vp.SetWidth(width)
	m.vp.SetHeight(viewportHeight(height, len(m.header(env, r, width))+len(m.timeline(env, r, width))))
	return m
}

// viewportHeight is what is left for the body under a header of
// headLines lines: four of facts when none wraps, a timeline of three
// (a third row of labels when they crowd, a legend) and a gap.
func viewportHeight(height, headLines int) int {
	return max(1, height-headerLines-(headLines-7))
}

// maxFactRows is how many rows one of the header's facts may wrap to: a
// fact cut mid-word ("reason \"user requested cancellatio…") says less
// than one on two rows, and a third would take the body's room.
const maxFactRows = 2

// header is the part above the timeline: the summary, the facts, the
// cancel's two lines (one row each, even when empty, so that the timeline
// stays where the eye expects it). A line too long for the width wraps at
// its words onto a second row, and is cut only past that.
func (m *Model) header(env screen.Env, r *session.Request, width int) []string {
	st := env.Styles
	sl := look.StateLookOf(r.State)
	title := fmt.Sprintf("#%s %s", r.ID, look.RequestLabel(r, true, env.Line))
	out := []string{look.Fit(st.Title.Render(title)+"  "+sl.Style(st).Render(sl.Icon+" "+look.StateName(r.State))+
		st.Dim.Render("  ·  "+look.Dur(look.Elapsed(r, env.Now))), width)}
	cancelLine, flagLine := m.cancelFacts(env, r)
	for _, line := range []string{m.facts(env, r, width), cancelLine, flagLine} {
		out = append(out, wrapFact(line, width)...)
	}
	return out
}

// wrapFact is one of the header's lines in width: as it is when it fits,
// else wrapped at its words onto at most maxFactRows rows, the last cut
// with "…" when even they do not hold it.
func wrapFact(line string, width int) []string {
	if lipgloss.Width(line) <= width || width < 20 {
		return []string{look.Fit(line, width)}
	}
	rows := strings.Split(lipgloss.Wrap(line, width, ""), "\n")
	if len(rows) > maxFactRows {
		rest := strings.Join(rows[maxFactRows-1:], " ")
		rows = append(rows[:maxFactRows-1], rest)
	}
	for i := range rows {
		rows[i] = look.Fit(rows[i], width)
	}
	return rows
}

// View draws the header (the summary, the facts, the cancel's two lines
// and the timeline) over the body, in width × height. It draws nothing
// when the tracker no longer holds the request.
func (m Model) View(env screen.Env, width, height int) string {
	r, ok := env.Tracker.Get(m.id)
	if !ok {
		return ""
	}
	var b strings.Builder
	head := m.header(env, r, width)
	for _, line := range head {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	tl := m.timeline(env, r, width)
	for _, line := range tl {
		b.WriteString(look.Fit(line, width))
		b.WriteByte('\n')
	}
	// Layout built the body and sized the viewport for the timeline as it
	// was then; should the clock have moved a label onto a third row
	// since, this frame draws a copy one row shorter, so the screen stays
	// exact without View changing the model.
	vp := m.vp
	if h := viewportHeight(height, len(head)+len(tl)); h != vp.Height() {
		vp.SetHeight(h)
	}
	b.WriteByte('\n')
	b.WriteString(vp.View())
	return b.String()
}

// startOf is when the request's life began: when it was sent, else when
// it was made.
func startOf(r *session.Request) time.Time {
	if !r.Sent.IsZero() {
		return r.Sent
	}
	return r.Created
}
