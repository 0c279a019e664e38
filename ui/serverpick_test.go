package ui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The picker lists each server with its transport and what it runs (as
// given: already redacted), says why one cannot open, and returns what
// was chosen: space one, a all, enter the chosen or the one under the
// cursor; q nothing.
func TestPickerChooses(t *testing.T) {
	offer := []PickServer{
		{Name: "alpha", Transport: "stdio", Describe: `"alpha": demo-server`},
		{Name: "beta", Transport: "http", Describe: `"beta": https://example.com/mcp (headers: Authorization)`},
		{Name: "gamma", Transport: "stdio", Err: errors.New("${input:token} cannot be answered")},
	}
	pick := func(keys ...string) (*Picker, string) {
		p := NewPicker(offer, true)
		p.Update(tea.WindowSizeMsg{Width: 100, Height: 10})
		view := ansi.Strip(p.View().Content)
		for _, k := range keys {
			p.Update(keyMsg(k))
		}
		return p, view
	}
	p, view := pick("down", "enter")
	if got := p.Chosen(); len(got) != 1 || got[0] != "beta" {
		t.Errorf("enter on beta chose %q", got)
	}
	for _, want := range []string{"3 servers", "[ ] beta", "http", "https://example.com/mcp", "✗ ${input:token} cannot be answered"} {
		if !strings.Contains(view, want) {
			t.Errorf("the picker lacks %q:\n%s", want, view)
		}
	}
	if p, _ = pick("space", "down", "down", "space", "enter"); strings.Join(p.Chosen(), ",") != "alpha,gamma" {
		t.Errorf("space on alpha and gamma chose %q", p.Chosen())
	}
	if p, _ = pick("a", "enter"); len(p.Chosen()) != 3 {
		t.Errorf("a chose %q", p.Chosen())
	}
	if p, _ = pick("a", "a", "q"); len(p.Chosen()) != 0 {
		t.Errorf("q chose %q", p.Chosen())
	}
}

// The picker's key line keeps q leave at 80 columns and less: a shorter
// wording of enter rather than the line cut.
func TestPickerKeysFitNarrow(t *testing.T) {
	offer := []PickServer{{Name: "alpha", Transport: "stdio", Describe: `"alpha": demo-server`}}
	for _, w := range []int{120, 80, 60, 46} {
		p := NewPicker(offer, true)
		p.Update(tea.WindowSizeMsg{Width: w, Height: 10})
		lines := strings.Split(ansi.Strip(p.View().Content), "\n")
		last := strings.TrimRight(lines[len(lines)-1], " ")
		if !strings.HasSuffix(last, "· q leave") || !strings.Contains(last, "enter open") || strings.Contains(last, "…") {
			t.Errorf("at %d columns the key line reads %q", w, last)
		}
	}
}
