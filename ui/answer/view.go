package answer

import (
	"fmt"
	"strconv"
	"strings"

	"inflight/keymap"
	"inflight/ui/look"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/urlhost"
	"inflight/wire"
)

// Sized is the form with its inputs sized to width, and a sampling
// request's messages wrapped to it (only when the width or the question
// changed): the root calls it after every message, and View draws them
// as sized.
func (m Model) Sized(width int) Model {
	if len(m.lines) > 0 && m.wrap.width != width {
		m.wrap.width, m.wrap.lines = width, wrapLines(m.lines, width)
	}
	for i := range m.fields {
		if !m.fields[i].IsBool {
			m.fields[i].Input.SetWidth(max(10, min(40, width-schemaform.LabelWidth-30)))
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
	for _, w := range m.wrapped(width) {
		b.WriteString(look.Fit("  "+w, width) + "\n")
	}
	if len(m.lines) > 0 {
		b.WriteString("\n")
	}
	keys := schemaform.Keys{Toggle: keymap.Key(m.keys.Toggle), Choose: keymap.Keys(m.keys.PrevChoice, m.keys.NextChoice)}
	for i := range m.fields {
		f := &m.fields[i]
		b.WriteString(f.Line(st, env.Line, keys, i == m.focus, width) + "\n")
		if i == m.focus {
			for _, l := range f.Options(st, keys, width) {
				b.WriteString(l + "\n")
			}
		}
	}
	if m.defaulted() {
		b.WriteString(st.Dim.Render(look.Fit("  "+m.clearing(), width)) + "\n")
	}
	m.writeNotes(&b, env, width)
	return b.String()
}

// wrapped is a sampling request's lines wrapped to width: as Sized kept
// them, or (a width Sized was not given) wrapped now.
func (m Model) wrapped(width int) []string {
	if m.wrap.width == width {
		return m.wrap.lines
	}
	return wrapLines(m.lines, width)
}

// wrapLines wraps each of lines (sanitised already) to width.
func wrapLines(lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, wrapText(l, width-4)...)
	}
	return out
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

// hint is the form's key line, for the question it shows, in the key
// map's words.
func (m Model) hint(width int) string {
	k := m.keys
	key, says := keymap.Key, keymap.Says
	switch {
	case m.url != "" && len(m.fields) == 0:
		return says(k.Accept) + " (you opened it) · " + says(k.Decline) + " · " + says(k.Dismiss) + " · " + says(k.Details) + " · " + says(k.Later)
	case m.method == wire.MethodSamplingCreate:
		return key(k.Accept) + " send the reply · " + says(k.Decline) + " · " + says(k.Details) + " · " + key(k.Later) + " back (answer later)"
	case width < 110:
		return says(k.Accept) + " · " + says(k.Decline) + " · " + says(k.Dismiss) + " · " + says(k.Details) + " · " + says(k.Later)
	}
	return keymap.Keys(k.NextField, k.Down) + " next field · " + says(k.Accept) + " · " + says(k.Decline) + " · " + says(k.Dismiss) + " · " +
		says(k.Details) + " · " + key(k.Later) + " back (answer later)"
}

// writeURL shows a URL-mode elicitation's URL, its site first: the spec
// asks that the target's host be shown clearly, before the user consents
// to go there.
func (m Model) writeURL(b *strings.Builder, env screen.Env, width int) {
	st := env.Styles
	b.WriteString(st.Warn.Render(look.Fit("  open this URL yourself (inflight never opens it): ", width)) + "\n")
	if host := urlhost.Of(m.url); host.Name != "" {
		b.WriteString(look.Fit("  site  "+st.Bold.Render(env.Line(host.Name)), width) + "\n")
		if note := host.Note(); note != "" {
			b.WriteString(st.Warn.Render(look.Fit("  "+env.Line(note), width)) + "\n")
		}
	} else {
		b.WriteString(st.Warn.Render(look.Fit("  the server's URL has no host inflight can read: do not open it unchecked", width)) + "\n")
	}
	for _, l := range wrapText(env.Line(m.url), width-4) {
		b.WriteString(look.Fit("  "+l, width) + "\n")
	}
	b.WriteString("\n")
	k := m.keys
	b.WriteString(st.Dim.Render(look.Fit("  "+keymap.Key(k.Accept)+" says you did (accept); "+keymap.Key(k.Decline)+" declines; "+keymap.Key(k.Dismiss)+" cancels", width)) + "\n")
}

// writeNotes says what the form has to say under its fields: the schema's
// note, what changed under the form, and what is wrong.
func (m Model) writeNotes(b *strings.Builder, env screen.Env, width int) {
	st := env.Styles
	if m.form.Note != "" {
		b.WriteString(st.Warn.Render(look.Fit("  "+m.form.Note, width)) + "\n")
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

// defaulted reports whether the form has a field that takes a value (not
// a checkbox) and has a default: the form then says how defaults and
// clearing work. Without one there is nothing to say: an empty field
// sends nothing already.
func (m Model) defaulted() bool {
	if m.method != wire.MethodElicitationCreate {
		return false
	}
	for i := range m.fields {
		if f := &m.fields[i]; !f.IsBool && f.Default != nil {
			return true
		}
	}
	return false
}

// clearing says how a field's value goes: a default is sent unless
// replaced, and the clear key sends nothing instead.
func (m Model) clearing() string {
	return "(default) is sent unless replaced · " + keymap.Key(m.keys.Clear) + " clears a field: nothing sent"
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
