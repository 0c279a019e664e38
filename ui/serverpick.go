package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"inflight/termsafe"
	"inflight/ui/look"
)

// PickServer is a server the picker offers: its name in the config file,
// its transport, and what it runs or where it is (already redacted, as
// target.Describe says it), or why it cannot be opened.
type PickServer struct {
	Name, Transport, Describe string
	Err                       error
}

// Picker offers a config file's servers before the TUI opens: space
// chooses one, a chooses all (or none), enter opens the ones chosen (the
// one under the cursor when none is), q or esc opens nothing. It is a
// program of its own, run before the TUI.
type Picker struct {
	servers []PickServer
	chosen  []bool
	cursor  int
	done    bool
	open    []string
	width   int
	styles  look.Styles
}

// NewPicker offers servers.
func NewPicker(servers []PickServer, dark bool) *Picker {
	return &Picker{servers: servers, chosen: make([]bool, len(servers)), width: 80, styles: look.NewStyles(dark)}
}

// Chosen is the servers to open, in the file's order (none when the user
// left).
func (p *Picker) Chosen() []string { return p.open }

// Init asks nothing.
func (p *Picker) Init() tea.Cmd { return nil }

// Update moves, chooses and ends.
func (p *Picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.width = msg.Width
	case tea.KeyPressMsg:
		return p, p.key(msg.String())
	}
	return p, nil
}

func (p *Picker) key(k string) tea.Cmd {
	switch k {
	case "up", "k":
		p.cursor = max(0, p.cursor-1)
	case "down", "j":
		p.cursor = min(len(p.servers)-1, p.cursor+1)
	case "space", " ":
		p.chosen[p.cursor] = !p.chosen[p.cursor]
	case "a":
		all := !p.allChosen()
		for i := range p.chosen {
			p.chosen[i] = all
		}
	case "enter":
		for i, c := range p.chosen {
			if c {
				p.open = append(p.open, p.servers[i].Name)
			}
		}
		if len(p.open) == 0 && len(p.servers) > 0 {
			p.open = []string{p.servers[p.cursor].Name}
		}
		p.done = true
		return tea.Quit
	case "q", "esc", "ctrl+c":
		p.done = true
		return tea.Quit
	}
	return nil
}

func (p *Picker) allChosen() bool {
	for _, c := range p.chosen {
		if !c {
			return false
		}
	}
	return true
}

// View lists the servers, a line each.
func (p *Picker) View() tea.View {
	if p.done {
		return tea.NewView("")
	}
	st := p.styles
	var b strings.Builder
	b.WriteString(st.Title.Render("inflight") + fmt.Sprintf(" · this config has %d servers: choose the ones to open\n\n", len(p.servers)))
	nameW := 4
	for _, s := range p.servers {
		nameW = min(max(nameW, len(termsafe.Line(s.Name))), 24)
	}
	for i, s := range p.servers {
		mark := "[ ]"
		if p.chosen[i] {
			mark = "[x]"
		}
		cursor := "  "
		if i == p.cursor {
			cursor = st.Cursor.Render("▌ ")
		}
		what := termsafe.Line(s.Describe)
		if s.Err != nil {
			what = st.Error.Render("✗ " + termsafe.Line(s.Err.Error()))
		}
		line := fmt.Sprintf("%s%s %s  %-5s  %s", cursor, mark, look.Fit(termsafe.Line(s.Name), nameW), s.Transport, what)
		b.WriteString(look.Fit(line, p.width) + "\n")
	}
	b.WriteString("\n" + st.Dim.Render(look.Fit(pickKeys(p.width), p.width)))
	v := tea.NewView(look.FrameFilter().Clean(b.String()))
	v.AltScreen = true
	return v
}

// pickKeys is the picker's key line for width w: the widest wording that
// fits, so that q leave is never the part cut off.
func pickKeys(w int) string {
	keys := []string{
		"space choose · a all · enter open (the one under the cursor when none is chosen) · q leave",
		"space choose · a all · enter open (none chosen: the one under the cursor) · q leave",
		"space choose · a all · enter open (none chosen: this one) · q leave",
		"space choose · a all · enter open · q leave",
	}
	for _, k := range keys {
		if lipgloss.Width(k) <= w {
			return k
		}
	}
	return keys[len(keys)-1]
}
