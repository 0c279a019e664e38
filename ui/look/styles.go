package look

import (
	"image/color"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// Styles is every style the UI draws with. Colour always accompanies an
// icon and a word, never replaces them: with NO_COLOR (or a monochrome
// terminal) the screen still says everything.
type Styles struct {
	Title, Dim, Faint, Bold lipgloss.Style
	Header                  lipgloss.Style
	ColumnHeader            lipgloss.Style
	Selected                lipgloss.Style
	Cursor                  lipgloss.Style

	Pending, Running, Cancelling, Completed, Failed, Cancelled, TimedOut, Lost, Listening lipgloss.Style

	Flag              lipgloss.Style // late traffic and violations
	Warn, Error, Good lipgloss.Style
	BarFull, BarEmpty lipgloss.Style
	Banner            lipgloss.Style
	Status            lipgloss.Style
	Key               lipgloss.Style
	Box               lipgloss.Style
	Help              help.Styles
	// Off draws a key, and its words, that does nothing now: fainter than
	// Help.FullKey and Help.FullDesc, which draw those that act, on a dark
	// background as on a light one.
	Off            lipgloss.Style
	Out, In, Local lipgloss.Style

	// selectedOn is the escape sequence that turns Selected's background
	// on, for highlight.
	selectedOn string
}

// NewStyles returns the styles for a dark or light terminal background.
func NewStyles(dark bool) Styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, dark string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(dark)) }
	fg := func(light, dark string) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(light, dark)) }

	accent := c("#5A3FC0", "#B4A7FF")
	amber := c("#9A5B00", "#FFB454")
	red := c("#B3261E", "#FF6B6B")
	green := c("#1E7B34", "#7EE081")
	blue := c("#1F5FBF", "#7FB2FF")
	grey := c("#6B6B6B", "#8A8A8A")

	s := Styles{
		Title:        lipgloss.NewStyle().Bold(true).Foreground(accent),
		Dim:          lipgloss.NewStyle().Foreground(grey),
		Faint:        lipgloss.NewStyle().Faint(true),
		Bold:         lipgloss.NewStyle().Bold(true),
		Header:       lipgloss.NewStyle(),
		ColumnHeader: lipgloss.NewStyle().Foreground(grey).Bold(true),
		Selected:     lipgloss.NewStyle().Background(c("#E8E4FF", "#2E2A47")),
		Cursor:       lipgloss.NewStyle().Foreground(accent).Bold(true),

		Pending:    fg("#6B6B6B", "#A0A0A0"),
		Running:    lipgloss.NewStyle().Foreground(blue),
		Listening:  lipgloss.NewStyle().Foreground(blue),
		Cancelling: lipgloss.NewStyle().Foreground(amber).Bold(true),
		Completed:  lipgloss.NewStyle().Foreground(green),
		Failed:     lipgloss.NewStyle().Foreground(red),
		Cancelled:  lipgloss.NewStyle().Foreground(amber),
		TimedOut:   lipgloss.NewStyle().Foreground(red),
		Lost:       lipgloss.NewStyle().Foreground(red),

		Flag:     lipgloss.NewStyle().Foreground(amber).Bold(true),
		Warn:     lipgloss.NewStyle().Foreground(amber),
		Error:    lipgloss.NewStyle().Foreground(red),
		Good:     lipgloss.NewStyle().Foreground(green),
		BarFull:  lipgloss.NewStyle().Foreground(blue),
		BarEmpty: fg("#D0D0D0", "#3C3C3C"),
		Banner:   lipgloss.NewStyle().Bold(true).Foreground(c("#FFFFFF", "#1A1A1A")).Background(red).Padding(0, 1),
		Status:   lipgloss.NewStyle().Foreground(grey),
		Key:      lipgloss.NewStyle().Foreground(accent).Bold(true),
		Box:      lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(grey).Padding(0, 1),
		Help:     help.DefaultStyles(dark),
		Out:      lipgloss.NewStyle().Foreground(blue),
		In:       lipgloss.NewStyle().Foreground(green),
		Local:    lipgloss.NewStyle().Foreground(grey),
	}
	// What Selected draws before its text is what turns it on.
	if on, _, ok := strings.Cut(s.Selected.Render("x"), "x"); ok {
		s.selectedOn = on
	}
	s.Help.ShortKey = s.Help.ShortKey.Foreground(accent)
	s.Help.FullKey = s.Help.FullKey.Foreground(accent)
	// bubbles' full help draws every description in its faintest grey
	// (#4A4A4A on dark), darker than Dim: the keys that act would look
	// less lit than those that do not. What acts reads as plain text.
	s.Help.FullDesc = s.Help.FullDesc.Foreground(c("#303030", "#D0D0D0"))
	s.Off = lipgloss.NewStyle().Foreground(c("#B0B0B0", "#5A5A5A"))
	return s
}

// NewTextInput returns a text input with a steady cursor: a blinking one
// would need its own timer, and inflight keeps a single clock.
func NewTextInput() textinput.Model {
	in := textinput.New()
	s := in.Styles()
	s.Cursor.Blink = false
	in.SetStyles(s)
	return in
}

// NewTextArea returns a JSON editor with a steady cursor.
func NewTextArea() textarea.Model {
	ta := textarea.New()
	s := ta.Styles()
	s.Cursor.Blink = false
	ta.SetStyles(s)
	return ta
}

// Highlight draws a whole (already styled, fitted) line on the Selected
// background. Rendering the line with Selected is not enough: every styled
// part inside it ends with a reset, which would turn the background off
// for the rest of the row, so the background is turned on again after each.
func (s Styles) Highlight(line string) string {
	if s.selectedOn == "" {
		return line
	}
	const reset, reset0 = "\x1b[m", "\x1b[0m"
	line = strings.ReplaceAll(line, reset0, reset)
	return s.selectedOn + strings.ReplaceAll(line, reset, reset+s.selectedOn) + reset
}
