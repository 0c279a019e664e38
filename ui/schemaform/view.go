package schemaform

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"inflight/ui/look"
)

// Keys are the key words a form's lines name, as the form's key map has
// them: Toggle ticks a checkbox, Choose moves through choices.
type Keys struct {
	Toggle, Choose string
}

// maxOptionsShown is how many of a focused field's choices are listed
// under it at once.
const maxOptionsShown = 8

// Line draws the field on one line of width: the cursor when focused, its
// label, its value (what was typed, chosen or ticked; the default or
// "nothing sent" dimmed when it stands) and its type and hint. line
// sanitises the server's strings.
func (f *Field) Line(st look.Styles, line func(string) string, keys Keys, focused bool, width int) string {
	cursor := "  "
	if focused {
		cursor = st.Cursor.Render("▌ ")
	}
	label := line(f.Name)
	if f.Required {
		label += "*"
	}
	var value string
	switch {
	case f.IsBool:
		box := "[ ]"
		if f.On {
			box = "[x]"
		}
		value = box + st.Dim.Render("  "+keys.Toggle+" toggles")
	case f.IsChoice() && f.Input.Value() == "":
		value = look.Fit(f.choiceText(st), lipgloss.Width(f.Input.View()))
	default:
		value = f.Input.View()
	}
	hint := ""
	if f.Type != "" && !f.IsBool {
		hint = st.Dim.Render("  " + f.Type)
	}
	if f.Hint != "" {
		hint += st.Dim.Render(" · " + line(f.Hint))
	}
	return look.Fit(cursor+look.Fit(label, LabelWidth)+value+hint, width)
}

// choiceText is a picker's or multi-select's value in words: what was
// chosen or ticked, else, dimmed, the default that stands or that nothing
// is sent.
func (f *Field) choiceText(st look.Styles) string {
	titles := func(on func(i int) bool) string {
		var ts []string
		for i, c := range f.Choices {
			if on(i) {
				ts = append(ts, c.Title)
			}
		}
		return strings.Join(ts, ", ")
	}
	switch {
	case f.Multi && f.Ticked != nil:
		if t := titles(func(i int) bool { return f.Ticked[i] }); t != "" {
			return t
		}
		return "none ticked"
	case !f.Multi && f.Pick >= 0:
		return f.Choices[f.Pick].Title
	case f.Cleared:
		return st.Dim.Render(nothingSent)
	case f.Multi && f.Default != nil:
		return st.Dim.Render(titles(func(i int) bool { return f.inDefault(f.Choices[i].Value) }) + " (default)")
	case f.defaultPick() >= 0:
		return st.Dim.Render(f.Choices[f.defaultPick()].Title + " (default)")
	case f.Multi:
		return st.Dim.Render("none ticked")
	}
	return st.Dim.Render("none chosen")
}

// Options are the lines under a focused picker or multi-select: its
// choices, the one chosen or those ticked marked, at most
// maxOptionsShown of them around the cursor, and the keys that choose.
func (f *Field) Options(st look.Styles, keys Keys, width int) []string {
	if !f.IsChoice() {
		return nil
	}
	cur := f.At
	if !f.Multi {
		cur = max(f.Pick, f.defaultPick(), 0)
	}
	start := min(max(0, cur-maxOptionsShown/2), max(0, len(f.Choices)-maxOptionsShown))
	end := min(len(f.Choices), start+maxOptionsShown)
	indent := strings.Repeat(" ", 2+LabelWidth)
	var out []string
	if start > 0 {
		out = append(out, st.Dim.Render(look.Fit(indent+strconv.Itoa(start)+" more ↑", width)))
	}
	for i := start; i < end; i++ {
		out = append(out, look.Fit(indent+f.option(st, i), width))
	}
	if end < len(f.Choices) {
		out = append(out, st.Dim.Render(look.Fit(indent+strconv.Itoa(len(f.Choices)-end)+" more ↓", width)))
	}
	// The choices are the schema's own (an enum, consts): typing is left
	// as a way to probe the server with a value off the list, and said as
	// such, not offered as an equal choice.
	how := keys.Choose + " choose · typing sends a value off the list"
	if f.Multi {
		how = keys.Choose + " move · " + keys.Toggle + " ticks"
	}
	return append(out, st.Dim.Render(look.Fit(indent+how, width)))
}

// option is choice i as its line shows it: (•) chosen, [x] ticked, the
// default's marks dimmed while it stands, the multi-select's cursor ▸.
func (f *Field) option(st look.Styles, i int) string {
	c := f.Choices[i]
	if !f.Multi {
		switch {
		case f.Pick == i:
			return st.Bold.Render("(•) " + c.Title)
		case f.Pick < 0 && !f.Cleared && f.Input.Value() == "" && f.defaultPick() == i:
			return st.Dim.Render("(•) " + c.Title + " (default)")
		}
		return "( ) " + c.Title
	}
	mark := "  "
	if i == f.At {
		mark = st.Cursor.Render("▸ ")
	}
	switch {
	case f.Ticked != nil && f.Ticked[i]:
		return mark + "[x] " + c.Title
	case f.Ticked == nil && !f.Cleared && f.inDefault(c.Value):
		return mark + st.Dim.Render("[x] "+c.Title+" (default)")
	}
	return mark + "[ ] " + c.Title
}
