// Package scrubber is the replay's scrubber: one line above the footer
// that says which moment of a recorded run the screens show, against the
// run's length, at what speed it plays, whether it plays, and the keys
// that move it. It holds the speed and whether the run plays; the root
// holds the replay and carries out the moves the scrubber asks for.
package scrubber

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/ui/look"
	"inflight/ui/screen"
)

// Speeds are the speeds < and > step through, 1 being as recorded.
var Speeds = []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50, 100}

// normal is the index of 1× in Speeds.
const normal = 3

// Model is the scrubber.
type Model struct {
	start, end, at time.Time
	// n of items are applied at the moment shown.
	n, items int
	speed    int // index in Speeds
	playing  bool
	// flags are the moments of the run's flags, drawn on the bar.
	flags []time.Time
	// note says what was wrong with the trace ("" when nothing was).
	note string
}

// New is the scrubber of a run from start to end, paused, at 1×.
func New(start, end time.Time, items int) Model {
	return Model{start: start, end: end, at: end, n: items, items: items, speed: normal}
}

// At returns the scrubber showing the moment at, with n items applied.
func (m Model) At(at time.Time, n int) Model {
	m.at, m.n = at, n
	return m
}

// WithFlags returns the scrubber marking the run's flags at their moments.
func (m Model) WithFlags(at []time.Time) Model {
	m.flags = at
	return m
}

// WithNote returns the scrubber saying what was wrong with the trace.
func (m Model) WithNote(note string) Model {
	m.note = note
	return m
}

// Paused returns the scrubber paused (the run played to its end).
func (m Model) Paused() Model {
	m.playing = false
	return m
}

// Playing reports whether the run plays.
func (m Model) Playing() bool { return m.playing }

// Speed is the speed the run plays at.
func (m Model) Speed() float64 { return Speeds[m.speed] }

// The moves the scrubber asks the root for.
type (
	// Seek shows the moment To.
	Seek struct{ To time.Time }
	// Step shows the next item (Delta 1) or the previous one (-1).
	Step struct{ Delta int }
	// Flag shows the next flag of the run, or the previous one.
	Flag struct{ Forward bool }
	// Play starts the run playing from the moment shown (On), or pauses
	// it.
	Play struct{ On bool }
	// Speed changes the speed the run plays at (the root plays on from
	// the moment shown at the new speed).
	Speed struct{ Speed float64 }
)

// Update turns the scrubber's keys into moves: screen.Unused for any
// other key.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	keys := env.Keys
	switch {
	case key.Matches(k, keys.ReplayStart):
		m.playing = false
		return m, Seek{To: m.start}
	case key.Matches(k, keys.ReplayEnd):
		m.playing = false
		return m, Seek{To: m.end}
	case key.Matches(k, keys.StepForward):
		m.playing = false
		return m, Step{Delta: 1}
	case key.Matches(k, keys.StepBack):
		m.playing = false
		return m, Step{Delta: -1}
	case key.Matches(k, keys.NextFlag):
		m.playing = false
		return m, Flag{Forward: true}
	case key.Matches(k, keys.PrevFlag):
		m.playing = false
		return m, Flag{Forward: false}
	case key.Matches(k, keys.PlayPause):
		m.playing = !m.playing
		return m, Play{On: m.playing}
	case key.Matches(k, keys.Slower):
		m.speed = max(m.speed-1, 0)
		return m, Speed{Speed: m.Speed()}
	case key.Matches(k, keys.Faster):
		m.speed = min(m.speed+1, len(Speeds)-1)
		return m, Speed{Speed: m.Speed()}
	}
	return m, screen.Unused{}
}

// SpeedText is a speed as the scrubber writes it ("0.25×", "10×").
func SpeedText(s float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", s), "0"), ".") + "×"
}

// View draws the scrubber in one line of width cells: the state, the
// moment against the run's length, the bar with the run's flags on it,
// the speed, the keys, and what was wrong with the trace. What does not
// fit goes, the keys first, then the note, then the bar.
func (m Model) View(env screen.Env, width, height int) string {
	if height < 1 || width < 1 {
		return ""
	}
	st := env.Styles
	icon, state := "⏸", "paused"
	if m.playing {
		icon, state = "▶", "playing"
	}
	clock := fmt.Sprintf("%s %s / %s", icon, look.Dur(m.at.Sub(m.start)), look.Dur(m.end.Sub(m.start)))
	tail := " " + SpeedText(m.Speed()) + " " + state
	keys := "  " + m.keysText(env)
	note := ""
	if m.note != "" {
		note = "  " + st.Warn.Render("⚠ "+env.Line(m.note))
	}
	fixed := lipgloss.Width(clock) + lipgloss.Width(tail)
	for _, parts := range [][2]string{{keys, note}, {"", note}, {"", ""}} {
		rest := width - fixed - lipgloss.Width(parts[0]) - lipgloss.Width(parts[1]) - 2
		if rest >= 10 || parts == [2]string{} {
			bar := ""
			if rest >= 10 {
				bar = " " + m.bar(env, rest) + " "
			}
			return look.Fit(st.Title.Render(clock)+bar+st.Dim.Render(tail)+st.Dim.Render(parts[0])+parts[1], width)
		}
	}
	return ""
}

// bar is the run drawn in w cells: the part played, the moment shown, the
// part to come, and a ⚑ where a flag is.
func (m Model) bar(env screen.Env, w int) string {
	st := env.Styles
	span := m.end.Sub(m.start)
	cell := func(t time.Time) int {
		if span <= 0 {
			return w - 1
		}
		return min(int(float64(t.Sub(m.start))/float64(span)*float64(w-1)+0.5), w-1)
	}
	cells := make([]string, w)
	here := cell(m.at)
	for i := range cells {
		switch {
		case i < here:
			cells[i] = st.BarFull.Render("━")
		case i == here:
			cells[i] = st.Title.Render("●")
		default:
			cells[i] = st.Dim.Render("─")
		}
	}
	for _, f := range m.flags {
		if i := cell(f); i != here {
			cells[i] = st.Flag.Render("⚑")
		}
	}
	return strings.Join(cells, "")
}

// keysText lists the scrubber's keys in pairs, shorter than their help
// says them (help lists them whole).
func (m Model) keysText(env screen.Env) string {
	k := env.Keys
	if !k.PlayPause.Enabled() {
		return ""
	}
	h := func(b key.Binding) string { return b.Help().Key }
	return fmt.Sprintf("%s play · %s%s step · %s%s flag · %s%s ends · %s%s speed",
		h(k.PlayPause), h(k.StepBack), h(k.StepForward), h(k.PrevFlag), h(k.NextFlag), h(k.ReplayStart), h(k.ReplayEnd), h(k.Slower), h(k.Faster))
}
