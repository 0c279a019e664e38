package answer

import (
	"fmt"
	"strconv"
	"strings"

	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// labelWidth is the column the form's labels take (the composer's).
const labelWidth = 28

// Sized is the form with its inputs sized to width: the root calls it
// whenever the width may have changed, and View draws them as sized.
func (m Model) Sized(width int) Model {
	for i := range m.fields {
		if !m.fields[i].isBool {
			m.fields[i].input.SetWidth(max(10, min(40, width-labelWidth-30)))
		}
	}
	return m
}

// View draws the form, in the composer's style: what is asked and of
// which request, the keys, the question and its fields, and what the form
// has to say (a schema's note, a warning, an error).
func (m Model) View(env screen.Env, width, height int) string {
	st := env.Styles
	var b strings.Builder
	b.WriteString(look.Fit("  "+st.Title.Render("ANSWER THE SERVER ")+st.Dim.Render(m.about(env)), width) + "\n")
	b.WriteString(st.Dim.Render(look.Fit("  "+m.hint(width), width)) + "\n\n")
	if m.message != "" {
		for _, l := range wrapText(env.Line(m.message), width-4) {
			b.WriteString(look.Fit("  "+st.Bold.Render(l), width) + "\n")
		}
		b.WriteString("\n")
	}
	if m.url != "" {
		m.writeURL(&b, env, width)
	}
	for _, l := range m.lines {
		for _, w := range wrapText(env.Line(l), width-4) {
			b.WriteString(look.Fit("  "+w, width) + "\n")
		}
	}
	if len(m.lines) > 0 {
		b.WriteString("\n")
	}
	for i := range m.fields {
		b.WriteString(m.fieldLine(env, i, width) + "\n")
	}
	m.writeNotes(&b, env, width)
	return b.String()
}

// about says what the form answers: the request (and its round), the
// question's method and key, and which question of how many.
func (m Model) about(env screen.Env) string {
	about := env.Line(m.method)
	if m.legacy != nil {
		about = "↘ " + about + " from the server (its ID " + env.Line(m.legacy.ID.String()) + ")"
	} else {
		about += fmt.Sprintf(" · %s", env.Line(m.asked[m.cur].Key))
		// Roots are answered without a prompt: not counted.
		n, at := 0, 0
		for i, q := range m.asked {
			if q.Method != wire.MethodRootsList {
				n++
				if i <= m.cur {
					at++
				}
			}
		}
		if n > 1 {
			about += fmt.Sprintf(" · question %d of %d", at, n)
		}
	}
	if !m.id.IsZero() {
		if r, ok := env.Tracker.Get(m.id); ok {
			head := "#" + r.ID.String() + " " + look.RequestLabel(r, false, env.Line)
			if m.legacy == nil {
				head += " · round " + strconv.Itoa(r.Round())
			}
			about = head + " · " + about
		}
	}
	return about
}

// hint is the form's key line, for the question it shows.
func (m Model) hint(width int) string {
	switch {
	case m.url != "" && len(m.fields) == 0:
		return "enter accept (you opened it) · ctrl+d decline · ctrl+x cancel · ctrl+o details · esc later"
	case m.method == wire.MethodSamplingCreate:
		return "enter send the reply · ctrl+d decline · ctrl+o details · esc back (answer later)"
	case width < 110:
		return "enter accept · ctrl+d decline · ctrl+x cancel · ctrl+o details · esc later"
	}
	return "tab/↓ next field · enter accept · ctrl+d decline · ctrl+x cancel · ctrl+o details · esc back (answer later)"
}

// writeURL shows a URL-mode elicitation's URL, its site first: the spec
// asks that the target's host be shown clearly, before the user consents
// to go there.
func (m Model) writeURL(b *strings.Builder, env screen.Env, width int) {
	st := env.Styles
	b.WriteString(st.Warn.Render(look.Fit("  open this URL yourself (inflight never opens it): ", width)) + "\n")
	if host := look.URLHost(m.url); host != "" {
		b.WriteString(look.Fit("  site  "+st.Bold.Render(env.Line(host)), width) + "\n")
	} else {
		b.WriteString(st.Warn.Render(look.Fit("  the server's URL has no host inflight can read: do not open it unchecked", width)) + "\n")
	}
	for _, l := range wrapText(env.Line(m.url), width-4) {
		b.WriteString(look.Fit("  "+l, width) + "\n")
	}
	b.WriteString("\n")
	b.WriteString(st.Dim.Render(look.Fit("  enter says you did (accept); ctrl+d declines; ctrl+x cancels", width)) + "\n")
}

// writeNotes says what the form has to say under its fields: the schema's
// note, what changed under the form, and what is wrong.
func (m Model) writeNotes(b *strings.Builder, env screen.Env, width int) {
	st := env.Styles
	if m.schema.Note != "" {
		b.WriteString(st.Warn.Render(look.Fit("  "+m.schema.Note, width)) + "\n")
	}
	if m.warn != "" {
		b.WriteString("\n" + st.Warn.Render(look.Fit("  ⚑ "+env.Line(m.warn), width)) + "\n")
	}
	if m.err != "" {
		b.WriteString("\n")
		for i, l := range wrapText(env.Line(m.err), width-6) {
			mark := "  ✗ "
			if i > 0 {
				mark = "    "
			}
			b.WriteString(st.Error.Render(look.Fit(mark+l, width)) + "\n")
		}
	}
}

// fieldLine draws field i: the cursor, its label, its value and hints.
func (m Model) fieldLine(env screen.Env, i, width int) string {
	st := env.Styles
	f := m.fields[i]
	cursor := "  "
	if i == m.focus {
		cursor = st.Cursor.Render("▌ ")
	}
	label := env.Line(f.name)
	if f.required {
		label += "*"
	}
	var value string
	if f.isBool {
		value = "[ ]"
		if f.on {
			value = "[x]"
		}
		value += st.Dim.Render("  space toggles")
	} else {
		value = f.input.View()
	}
	hint := ""
	if f.typ != "" && !f.isBool {
		hint = st.Dim.Render("  " + f.typ)
	}
	if f.hint != "" {
		hint += st.Dim.Render(" · " + env.Line(f.hint))
	}
	return look.Fit(cursor+look.Fit(label, labelWidth)+value+hint, width)
}

// wrapText breaks s into lines of at most w runes, at spaces.
func wrapText(s string, w int) []string {
	if w < 10 {
		w = 10
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case len([]rune(line))+1+len([]rune(word)) > w:
				out = append(out, line)
				line = word
			default:
				line += " " + word
			}
		}
		out = append(out, line)
		if len(out) > 12 {
			return append(out[:12], "…")
		}
	}
	return out
}
