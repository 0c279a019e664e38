package logview

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/ui/look"
	"inflight/ui/screen"
)

// stamp is the width of the time before each stderr line ("15:04:05.000  ").
const stamp = 14

// Stderr is the stdio server's stderr, newest at the bottom. Long lines
// wrap, or, cut (screen.Env.Chop), scroll sideways.
type Stderr struct {
	scrollView
	// xoff is how far cut lines are scrolled sideways.
	xoff int
	// width is the width Layout was given; chop the preference it saw,
	// so that a new layout starts again at the first column.
	width int
	chop  bool
}

// NewStderr is the stderr view following the newest lines.
func NewStderr() Stderr { return Stderr{scrollView: scrollView{follow: true}} }

// Following reports whether the view follows the newest lines.
func (s Stderr) Following() bool { return s.follow }

// Layout sizes the view to width × height (a title above the lines).
func (s Stderr) Layout(env screen.Env, width, height int) Stderr {
	s.width = width
	s.rows = height - 1
	if s.chop != env.Chop {
		s.chop, s.xoff = env.Chop, 0
	}
	return s
}

// Update scrolls stderr with the keys and the wheel; w asks the root to
// wrap or cut long lines. Keys it does not use come back as screen.Unused.
func (s Stderr) Update(env screen.Env, msg tea.Msg) (Stderr, screen.Action) {
	var act screen.Action
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		act = s.key(env, msg)
	case tea.MouseWheelMsg:
		s.wheel(env, msg)
	}
	return s, act
}

func (s *Stderr) key(env screen.Env, msg tea.KeyPressMsg) screen.Action {
	switch k := env.Keys; {
	case key.Matches(msg, k.Wrap):
		return ToggleWrap{}
	case key.Matches(msg, k.Left):
		s.xoff = max(0, s.xoff-look.HorizontalStep)
	case key.Matches(msg, k.Right):
		s.scrollRight(env)
	default:
		if !s.scrollKey(k, msg, s.items(env)) {
			return screen.Unused{}
		}
	}
	return nil
}

// wheel scrolls by rows, or, with lines cut, sideways.
func (s *Stderr) wheel(env screen.Env, msg tea.MouseWheelMsg) {
	switch d := wheelStep(msg); {
	case d != 0:
		it := s.items(env)
		s.scrollTo(s.start(it)+d, it)
	case msg.Button == tea.MouseWheelLeft && env.Chop:
		s.xoff = max(0, s.xoff-look.HorizontalStep)
	case msg.Button == tea.MouseWheelRight && env.Chop:
		s.scrollRight(env)
	}
}

// scrollRight scrolls cut lines a step sideways, no further than half the
// screen past the end of the widest line shown.
func (s *Stderr) scrollRight(env screen.Env) {
	s.xoff = min(s.xoff+look.HorizontalStep, max(0, s.widest(env)-s.width/2))
}

// items is stderr as the view shows it.
func (s *Stderr) items(env screen.Env) items {
	sl := env.Tracker.Stderr()
	first := sl.Total() - int64(sl.Len())
	return items{n: sl.Len(), abs: func(i int) int64 { return first + int64(i) }}
}

// widest is the width of the widest stderr line kept on screen.
func (s *Stderr) widest(env screen.Env) int {
	sl := env.Tracker.Stderr()
	it := s.items(env)
	first := sl.Total() - int64(sl.Len())
	w := 0
	from := s.start(it)
	for i := from; i < min(it.n, from+max(1, s.rows)); i++ {
		w = max(w, ansi.StringWidth(env.Line(sl.At(int(it.abs(i)-first)).Text))+stamp)
	}
	return w
}

// View shows the server's stderr, newest at the bottom, each line after
// its time.
func (s Stderr) View(env screen.Env, width, height int) string {
	st := env.Styles
	sl := env.Tracker.Stderr()
	rows := height - 1
	it := s.items(env)
	first := sl.Total() - int64(sl.Len())
	lines := s.lines(env, it, width)
	from := s.start(it)
	if !env.Chop {
		// Wrapped lines take more than a row: the bottom page starts where
		// the last lines fill the screen.
		need, i := 0, it.n-1
		for ; i >= 0 && need+len(lines(i)) <= rows; i-- {
			need += len(lines(i))
		}
		from = min(from, max(0, i+1))
	}
	var b strings.Builder
	b.WriteString(st.ColumnHeader.Render(look.Fit(s.title(env, it, from), width)))
	n := 0
	for i := from; i < it.n && n < rows; i++ {
		t := sl.At(int(it.abs(i) - first)).Time.Format("15:04:05.000")
		for j, l := range lines(i) {
			if n == rows {
				break
			}
			lead := strings.Repeat(" ", stamp)
			if j == 0 {
				lead = st.Dim.Render(t) + "  "
			}
			b.WriteByte('\n')
			b.WriteString(look.Fit(lead+l, width))
			n++
		}
	}
	if sl.Len() == 0 {
		b.WriteByte('\n')
		b.WriteString(st.Dim.Render("  (nothing yet)"))
		n++
	}
	for ; n < rows; n++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// lines lays out item i of it as the screen shows it: cut at the sideways
// scroll, or wrapped.
func (s *Stderr) lines(env screen.Env, it items, width int) func(i int) []string {
	sl := env.Tracker.Stderr()
	first := sl.Total() - int64(sl.Len())
	textW := max(10, width-stamp)
	return func(i int) []string {
		text := env.Line(sl.At(int(it.abs(i) - first)).Text)
		if env.Chop {
			return []string{ansi.Cut(text, s.xoff, s.xoff+textW)}
		}
		// Wrapped at spaces where it can be: these are sentences.
		return strings.Split(ansi.Wrap(text, textW, ""), "\n")
	}
}

// title is stderr's title line: how many lines, how they are laid out,
// where the view starts once scrolled back, and what stderr is.
func (s *Stderr) title(env screen.Env, it items, from int) string {
	title := fmt.Sprintf("SERVER STDERR · %d lines", env.Tracker.Stderr().Len())
	if env.Chop {
		title += fmt.Sprintf(" · cut at column %d, ←/→ scroll, w wraps", s.xoff+1)
	}
	if !s.follow && it.n > 0 {
		title += fmt.Sprintf(" · from line %d (G: newest)", from+1)
	}
	return title + " (the server's own log; not an error by itself)"
}
