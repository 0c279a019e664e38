package ui

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/schemaform"
)

// view draws the composer.
func (c *composer) view(m *Model, height int) string {
	st := m.styles
	var b strings.Builder
	// Kind tabs.
	var tabs []string
	for k := composeKind(0); k < numKinds; k++ {
		label := kindNames[k]
		if m.width < 100 {
			label = kindShort[k]
		}
		name := " " + label + " "
		if k == c.kind {
			// Brackets in place of the spaces: the kind being composed
			// reads in words without colour (NO_COLOR, a plain capture),
			// and the row keeps its width.
			name = "[" + label + "]"
			tabs = append(tabs, st.Selected.Inherit(st.Bold).Render(name))
		} else {
			tabs = append(tabs, st.Dim.Render(name))
		}
	}
	marker := "  "
	if c.kindRow {
		marker = st.Cursor.Render("▌ ")
	}
	b.WriteString(look.Fit(marker+st.Title.Render("NEW REQUEST ")+strings.Join(tabs, st.Dim.Render("│")), m.width))
	b.WriteString("\n")
	b.WriteString(st.Dim.Render(look.Fit("  "+c.hint(), m.width)))
	b.WriteString("\n\n")
	lines := 3
	if c.step == stepPick {
		b.WriteString(c.viewPick(m, height-lines))
		return b.String()
	}
	if c.editOf != "" {
		b.WriteString(st.Dim.Render(look.Fit("  editing a copy of "+m.line(c.editOf)+": enter sends it as a new request", m.width)) + "\n\n")
	}
	if note := c.lacks(m, c.kind); note != "" {
		what := map[composeKind]string{kindResource: "type the URI", kindPrompt: "type the prompt's name"}[c.kind]
		b.WriteString(st.Dim.Render(look.Fit("  "+note+": "+what, m.width)) + "\n\n")
	}
	switch {
	case c.kind == kindTool:
		if t, ok := c.tool(); ok {
			b.WriteString(look.Fit("  "+st.Bold.Render(m.line(t.Name))+"  "+st.Dim.Render(m.line(t.Description)), m.width))
			b.WriteString("\n\n")
		}
	case c.kind == kindResource && c.res != nil:
		head := "  " + st.Bold.Render(m.line(firstOf(c.res.Name, c.res.URI)))
		if d := firstOf(c.res.Description, c.res.Title); d != "" {
			head += "  " + st.Dim.Render(m.line(d))
		}
		b.WriteString(look.Fit(head, m.width) + "\n")
		if c.res.template != "" {
			uri, err := c.templateURI()
			if err != nil {
				uri = "…"
			}
			b.WriteString(st.Dim.Render(look.Fit("  template "+m.line(c.res.template)+"  →  reads "+m.line(uri), m.width)) + "\n")
		}
		b.WriteString("\n")
	case c.kind == kindPrompt && c.prompt != nil:
		head := "  " + st.Bold.Render(m.line(c.prompt.Name))
		if d := firstOf(c.prompt.Description, c.prompt.Title); d != "" {
			head += "  " + st.Dim.Render(m.line(d))
		}
		b.WriteString(look.Fit(head, m.width) + "\n\n")
	}
	if c.kind == kindListen && m.tracker.Era().String() == "legacy" {
		b.WriteString(st.Warn.Render(look.Fit("  this server is legacy: subscriptions/listen is a 2026-07-28 method, expect an error", m.width)) + "\n\n")
	}
	if c.jsonMode {
		b.WriteString(st.Dim.Render("  arguments (JSON):") + "\n")
		for _, l := range strings.Split(c.json.View(), "\n") {
			b.WriteString("  " + l + "\n")
		}
		b.WriteString("\n")
		for i := c.settingsStart(); i < len(c.fields); i++ {
			b.WriteString(c.fieldLine(m, i) + "\n")
		}
	} else {
		for i := range c.fields {
			if i == c.settingsStart() {
				b.WriteString("\n" + st.Dim.Render("  this request's timeouts (they become the defaults for the next):") + "\n")
			}
			b.WriteString(c.fieldLine(m, i) + "\n")
			if i == c.focus {
				b.WriteString(c.focusedHint(m))
			}
		}
		switch {
		case c.kind == kindTool:
			if t, ok := c.tool(); ok && c.taskLine(t) != "" {
				b.WriteString(st.Running.Render(look.Fit("  ⧗ "+c.taskLine(t), m.width)) + "\n")
			}
			if t, ok := c.tool(); ok && t.form.Note != "" {
				b.WriteString(st.Warn.Render(look.Fit("  "+m.line(t.form.Note), m.width)) + "\n")
			} else if c.settingsStart() == 0 {
				b.WriteString(st.Dim.Render("  (this tool takes no arguments)") + "\n")
			}
		case c.kind == kindPrompt && c.prompt != nil && c.settingsStart() == 0:
			b.WriteString(st.Dim.Render("  (this prompt takes no arguments)") + "\n")
		}
	}
	b.WriteString(c.viewMessage(m))
	return b.String()
}

// hint is the line of keys under the kinds.
func (c *composer) hint() string {
	if c.step == stepPick {
		what := map[composeKind]string{kindTool: "tool", kindResource: "resource", kindPrompt: "prompt"}[c.kind]
		return "↑/↓ " + what + " · ←/→ kind · enter choose · ctrl+s send · esc back"
	}
	if c.kindRow {
		return "←/→ kind · ↓ fields · enter send · esc back"
	}
	if c.jsonMode {
		// The editor keeps enter and tab for itself; the timeouts are
		// set in the form.
		return "JSON: enter new line · ctrl+s send · ctrl+e form and timeouts · esc back"
	}
	// esc is in the footer; these are the keys of the form.
	h := "tab/↓ next field · ↑ previous · enter send"
	if c.kind == kindTool {
		h += " · ctrl+e JSON"
	}
	if c.kindKeys() {
		return h + " · ←/→ kind"
	}
	return h + " · ↑ at the top: kinds"
}

// viewMessage is the line under the form: the error, the schema's
// objection, or why the last key did nothing.
func (c *composer) viewMessage(m *Model) string {
	st := m.styles
	switch {
	case c.err != "":
		// Errors name the fields, whose names are the server's.
		return "\n" + st.Error.Render(look.Fit("  ✗ "+m.line(c.err), m.width)) + "\n"
	case c.note != "":
		return "\n" + st.Warn.Render(look.Fit("  "+m.line(c.note), m.width)) + "\n"
	case c.warn != "":
		// So do the schema's objections, and they quote its values.
		anyway := " (enter sends it anyway)"
		if c.jsonMode {
			anyway = " (ctrl+s sends it anyway)"
		}
		return "\n" + st.Warn.Render(look.Fit("  ! "+m.line(c.warn)+anyway, m.width)) + "\n"
	}
	return ""
}

func (c *composer) fieldLine(m *Model, i int) string {
	st := m.styles
	f := &c.fields[i]
	cursor := "  "
	if i == c.focus && !c.jsonMode && !c.kindRow {
		cursor = st.Cursor.Render("▌ ")
	}
	// The name of a schema's property is the server's string.
	label := m.line(f.Name)
	if f.Required {
		label += "*"
	}
	var value string
	if f.IsBool {
		box := "[ ]"
		if f.On {
			box = "[x]"
		}
		value = box + st.Dim.Render("  space toggles")
	} else {
		value = f.Input.View()
	}
	hint := ""
	if f.Type != "" && !f.IsBool {
		hint = st.Dim.Render("  " + f.Type)
	}
	if f.Hint != "" {
		hint += st.Dim.Render(" · " + m.line(f.Hint))
	}
	return look.Fit(cursor+look.Fit(label, schemaform.LabelWidth)+value+hint, m.width)
}

// viewPick draws the kind's list: the filter, the rows, and what the
// selected row is.
func (c *composer) viewPick(m *Model, height int) string {
	st := m.styles
	p := &c.pickers[c.kind]
	items := c.items(c.kind)
	var b strings.Builder
	b.WriteString(look.Fit("  "+p.filter.View()+st.Dim.Render("  "+c.pickCount(items)), m.width) + "\n")
	var status []string
	switch c.kind {
	case kindTool:
		if len(c.tools) == 0 {
			if r, ok := m.tracker.Get(m.toolsReq); ok && r.IsActive() {
				status = append(status, look.Spinner(m.now())+" asking the server for its tools (tools/list)…")
			} else {
				status = append(status, "The server listed no tools. Use → to send another kind of request.")
			}
		}
	case kindResource:
		status = c.listStatus(m, listResources, listTemplates)
	case kindPrompt:
		status = c.listStatus(m, listPrompts)
	}
	for _, s := range status {
		b.WriteString(st.Dim.Render(look.Fit("  "+m.line(s), m.width)) + "\n")
	}
	if c.note != "" {
		b.WriteString(st.Warn.Render(look.Fit("  "+m.line(c.note), m.width)) + "\n")
	}
	about := c.pickAbout(m, items)
	used := 1 + len(status) + 1
	if c.note != "" {
		used++
	}
	if len(about) > 0 {
		used += 1 + len(about)
	}
	b.WriteString(p.view(m, items, max(3, height-used)))
	if len(about) > 0 {
		b.WriteString("\n")
		for _, l := range about {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// pickCount says how many rows the filter keeps.
func (c *composer) pickCount(items []pickItem) string {
	p := &c.pickers[c.kind]
	n, total := 0, 0
	for _, i := range p.matches(items) {
		if !items[i].typed {
			n++
		}
	}
	for _, it := range items {
		if !it.typed {
			total++
		}
	}
	var what string
	switch c.kind {
	case kindTool:
		what = plural(total, "tool")
	case kindResource:
		what = plural(len(c.cat.resources), "resource") + ", " + plural(len(c.cat.templates), "template")
	case kindPrompt:
		what = plural(total, "prompt")
	}
	if p.filter.Value() == "" {
		return what
	}
	return strconv.Itoa(n) + " of " + what + " match"
}

// plural counts things: 1 tool, 2 tools.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// listStatus says where the lists a picker shows stand: asked, failed,
// empty, cut short.
func (c *composer) listStatus(m *Model, lists ...catalogList) []string {
	var out []string
	if c.fetching(m, lists...) {
		var names []string
		for _, l := range lists {
			names = append(names, listMethods[l])
		}
		out = append(out, look.Spinner(m.now())+" asking the server ("+strings.Join(names, ", ")+")…")
	}
	empty := true
	for _, l := range lists {
		f := c.cat.fetch[l]
		r, asked := m.tracker.Get(f.req)
		switch {
		case !f.asked:
			out = append(out, listMethods[l]+" was not asked on this connection: ← then → asks")
			empty = false
		case f.err != "":
			out = append(out, f.err)
		case asked && !r.IsActive() && r.State != session.StateCompleted:
			// No answer came: say how it ended, not that the list is empty.
			out = append(out, listMethods[l]+" is "+look.StateName(r.State)+": nothing was listed")
		case f.more:
			out = append(out, listMethods[l]+": the first "+strconv.Itoa(maxListPages)+" pages are shown; the server has more")
		}
		switch l {
		case listResources:
			empty = empty && len(c.cat.resources) == 0
		case listTemplates:
			empty = empty && len(c.cat.templates) == 0
		case listPrompts:
			empty = empty && len(c.cat.prompts) == 0
		}
	}
	if empty && !c.fetching(m, lists...) && len(out) == 0 {
		what := map[composeKind]string{kindResource: "no resources or templates", kindPrompt: "no prompts"}[c.kind]
		out = append(out, "The server listed "+what+".")
	}
	return out
}

// pickAbout is what the selected row is, wrapped: the description and
// what the form will ask for.
func (c *composer) pickAbout(m *Model, items []pickItem) []string {
	st := m.styles
	i := c.pickers[c.kind].selected(items)
	if i < 0 || items[i].typed {
		return nil // the typed entry says what it is on its row
	}
	var desc, args string
	switch c.kind {
	case kindTool:
		if i >= len(c.tools) {
			return nil
		}
		t := c.tools[i]
		desc = t.Description
		if len(t.Schema) > 0 {
			args = toolArgsText(m, t)
		}
	case kindResource:
		nr := len(c.cat.resources)
		switch {
		case i < nr:
			r := c.cat.resources[i]
			desc = firstOf(r.Description, r.Title)
			args = "reads " + r.URI
			if r.MIMEType != "" {
				args += " (" + r.MIMEType + ")"
			}
		case i < nr+len(c.cat.templates):
			r := c.cat.templates[i-nr]
			desc = firstOf(r.Description, r.Title)
			var vars []string
			for _, v := range r.vars {
				vars = append(vars, v.name)
			}
			args = "template " + r.template
			if len(vars) > 0 {
				args += " · the form asks for " + strings.Join(vars, ", ")
			}
		}
	case kindPrompt:
		if i < len(c.cat.prompts) {
			p := c.cat.prompts[i]
			desc = firstOf(p.Description, p.Title)
			var as []string
			for _, a := range p.Args {
				s := a.Name
				if a.Required {
					s += "* (required)"
				}
				if a.Description != "" {
					s += ": " + a.Description
				}
				as = append(as, s)
			}
			if len(as) > 0 {
				args = "arguments: " + strings.Join(as, " · ")
			} else {
				args = "takes no arguments"
			}
		}
	}
	var out []string
	wrap := func(s string, dim bool) {
		if s == "" {
			return
		}
		w := lipgloss.NewStyle().Width(max(20, m.width-4)).Render(m.line(s))
		ls := strings.Split(w, "\n")
		if len(ls) > 4 {
			ls = append(ls[:3], look.Trunc(ls[3], max(20, m.width-5))+"…")
		}
		for _, l := range ls {
			if dim {
				out = append(out, st.Dim.Render("  "+l))
			} else {
				out = append(out, "  "+l)
			}
		}
	}
	wrap(desc, false)
	wrap(args, true)
	return out
}

// toolArgsText is a tool's arguments as the form will ask for them,
// rather than the schema's JSON cut at the screen's edge.
func toolArgsText(m *Model, t toolInfo) string {
	var args []string
	for _, p := range t.form.Params {
		a := m.line(p.Name)
		if p.Required {
			a += "*"
		}
		a += " (" + p.Type
		if p.Default != "" && p.Type != "boolean" {
			a += ", default " + p.Default
		}
		args = append(args, a+")")
	}
	switch {
	case len(args) > 0 && t.form.Note != "":
		return "arguments: " + strings.Join(args, " · ") + " · " + t.form.Note
	case len(args) > 0:
		return "arguments: " + strings.Join(args, " · ")
	case t.form.Note != "":
		return t.form.Note
	}
	return "takes no arguments"
}

// focusedHint is the focused field's description in full, wrapped, when
// its line cuts it ("" when the line shows it whole).
func (c *composer) focusedHint(m *Model) string {
	if c.kindRow || c.jsonMode || c.focus >= len(c.fields) {
		return ""
	}
	f := &c.fields[c.focus]
	if f.Hint == "" || !strings.HasSuffix(strings.TrimRight(ansi.Strip(c.fieldLine(m, c.focus)), " "), "…") {
		return ""
	}
	w := lipgloss.NewStyle().Width(max(20, m.width-6)).Render(m.line(f.Name) + ": " + m.line(f.Hint))
	var b strings.Builder
	for i, l := range strings.Split(w, "\n") {
		if i == 3 {
			break
		}
		b.WriteString(m.styles.Dim.Render("    "+l) + "\n")
	}
	return b.String()
}
