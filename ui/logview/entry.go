package logview

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// selected is the index in it of the selected entry.
func (m *Model) selected(it items) int {
	if it.n == 0 {
		return -1
	}
	if m.follow {
		return it.n - 1
	}
	i := sort.Search(it.n, func(i int) bool { return it.abs(i) >= m.sel })
	return min(i, it.n-1) // an evicted or filtered-out selection moves to the next one kept
}

// moveSelection handles the movement keys in the log: they move the
// selection, and the window follows it.
func (m *Model) moveSelection(env screen.Env, msg tea.KeyPressMsg, it items) bool {
	i, ok := moved(env.Keys, msg, m.selected(it), m.rows, it.n-1)
	if !ok {
		return false
	}
	m.selectRow(i, it)
	return true
}

// selectRow selects row i of it (clamped), and scrolls so it shows.
func (m *Model) selectRow(i int, it items) {
	if it.n == 0 {
		return
	}
	i = min(max(i, 0), it.n-1)
	m.sel = it.abs(i)
	rows := max(1, m.rows)
	from := m.start(it)
	switch {
	case i < from:
		from = i
	case i >= from+rows:
		from = i - rows + 1
	}
	m.follow = i == it.n-1
	m.top = it.abs(max(0, from))
}

// openEntry shows the selected entry whole: everything the row cuts.
func (m *Model) openEntry(env screen.Env, it items) {
	i := m.selected(it)
	if i < 0 {
		return
	}
	m.open, m.openAbs = true, it.abs(i)
	m.vp = viewport.New()
	m.vp.SetHorizontalStep(look.HorizontalStep)
	m.content, m.laidOut = entryText(env, m.openAbs), layoutKey{}
}

// layoutEntry lays out the open entry: wrapped to the width (long lines
// wrap rather than run off the screen, since the viewer is there to show
// all of it), or cut, with the viewport scrolling sideways.
func (m *Model) layoutEntry(env screen.Env, height int) {
	if !m.open {
		return
	}
	m.vp.SetWidth(m.width)
	m.vp.SetHeight(max(1, height-1))
	if want := (layoutKey{width: m.width, chop: env.Chop}); m.laidOut != want {
		if env.Chop {
			m.vp.SetContent(m.content)
		} else {
			m.vp.SetContent(ansi.Wrap(m.content, max(10, m.width), ""))
			m.vp.SetXOffset(0)
		}
		m.laidOut = want
	}
}

// entryKey is a key in the entry view: y, o and O act on the entry, esc
// goes back to the log, the others scroll it and w wraps or cuts its long
// lines. Any other key is left to the root's global keys, so that none is
// swallowed.
func (m *Model) entryKey(env screen.Env, msg tea.KeyPressMsg) screen.Action {
	open := func(screen.Env) (int64, bool) { return m.openAbs, true }
	if act, ok := payloadKey(env, msg, open); ok {
		return act
	}
	k, vp := env.Keys, &m.vp
	switch {
	case key.Matches(msg, k.Back):
		m.open = false
	case key.Matches(msg, k.Wrap):
		return ToggleWrap{}
	case screen.Scroll(k, msg, vp):
	default:
		return screen.Unused{}
	}
	return nil
}

// entryText is one log entry in full: its facts, then its bytes as indented
// JSON (or as text when they are not JSON), made inert.
func entryText(env screen.Env, abs int64) string {
	st := env.Styles
	lg := env.Tracker.Log()
	first := lg.Total() - int64(lg.Len())
	if abs < first {
		return st.Dim.Render("(this entry has left the bounded log)")
	}
	e := lg.At(int(abs - first))
	what, msg := describeEntry(e)
	var b strings.Builder
	b.WriteString(factsLine(env, e, what) + "\n")
	if v := verdictText(env, e); v != "" {
		b.WriteString(v + "\n")
	}
	if e.Coalesced > 0 {
		b.WriteString(st.Dim.Render(fmt.Sprintf("stands for %d progress notifications, until %s; the latest below", e.Coalesced+1, e.LastTime.Format("15:04:05.000"))) + "\n")
	}
	if e.Truncated > 0 {
		b.WriteString(st.Warn.Render(fmt.Sprintf("%d bytes were not kept", e.Truncated)) + "\n")
	}
	b.WriteString("\n")
	switch {
	case len(e.Raw) > 0 && json.Valid(e.Raw):
		b.WriteString(look.PrettyJSON(e.Raw, env.Block))
	case len(e.Raw) > 0:
		b.WriteString(env.Block(string(e.Raw)))
	default:
		b.WriteString(env.Block(msg))
	}
	return b.String()
}

// factsLine is the entry view's first line: when, which way, what, the
// ID, the HTTP status and the violation.
func factsLine(env screen.Env, e session.LogEntry, what string) string {
	// The facts are sanitised before the violation's styling is added:
	// sanitising styled text would draw our own escapes as ␛.
	facts := []string{e.Time.Format("15:04:05.000000"), Direction(e).String(), env.Line(what)}
	if id := logID(e.ID); id != "" {
		facts = append(facts, "id "+env.Line(id))
	}
	if e.Status != 0 {
		facts = append(facts, fmt.Sprintf("HTTP %d", e.Status))
	}
	if e.Violation != "" {
		facts = append(facts, env.Styles.Flag.Render("⚠ "+env.Line(e.Violation)))
	}
	return strings.Join(facts, " · ")
}

// verdictText is the entry view's line about the tracker's verdict on the
// entry, "" when there is none.
func verdictText(env screen.Env, e session.LogEntry) string {
	st := env.Styles
	since, fate := "the cancel", "ignored"
	if r, ok := env.Tracker.Get(e.ID); ok {
		if r.Cancel == nil {
			since = "the request was given up"
		}
		fate = look.LateFate(r)
	}
	switch e.Verdict {
	case session.VerdictLate:
		basis := look.CrossingBasis(env.Tracker, env.Line)
		return st.Flag.Render(fmt.Sprintf("⚑ late %s: arrived %s after %s, past the crossing window — flagged, and %s",
			look.Ago(e.AfterCancel), look.FineDur(e.AfterCancel), since, fate)) + st.Dim.Render(" · "+basis)
	case session.VerdictCrossed:
		basis := look.CrossingBasis(env.Tracker, env.Line)
		return st.Dim.Render(fmt.Sprintf("crossed the cancel in flight: arrived %s after %s, within the crossing window — not flagged, %s · %s",
			look.FineDur(e.AfterCancel), since, fate, basis))
	}
	return ""
}

// viewEntry draws the entry viewer (layoutEntry sized and filled it).
func (m *Model) viewEntry(env screen.Env, width int) string {
	how := "long lines wrapped (w: cut them)"
	if env.Chop {
		how = fmt.Sprintf("lines cut at column %d, ←/→ scroll (w: wrap)", m.vp.XOffset()+1)
	}
	title := fmt.Sprintf("LOG ENTRY · %d%% · %s · esc back to the log", int(m.vp.ScrollPercent()*100), how)
	return env.Styles.ColumnHeader.Render(look.Fit(title, width)) + "\n" + m.vp.View()
}
