package composer

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
)

// View draws the composer in width × height; it changes nothing.
func (c Model) View(env screen.Env, width, height int) string {
	st := env.Styles
	var b strings.Builder
	b.WriteString(c.viewKinds(env, width))
	b.WriteString("\n")
	b.WriteString(st.Dim.Render(look.Fit("  "+c.hint(), width)))
	b.WriteString("\n\n")
	lines := 3
	if c.step == stepPick {
		b.WriteString(c.viewPick(env, width, height-lines))
		return b.String()
	}
	if c.editOf != "" {
		b.WriteString(st.Dim.Render(look.Fit("  editing a copy of "+env.Line(c.editOf)+": "+c.sendKey()+" sends it as a new request", width)) + "\n\n")
	}
	if note := c.lacks(env, c.kind); note != "" {
		what := map[Kind]string{KindResource: "type the URI", KindPrompt: "type the prompt's name"}[c.kind]
		b.WriteString(st.Dim.Render(look.Fit("  "+note+": "+what, width)) + "\n\n")
	}
	b.WriteString(c.viewChoice(env, width))
	if c.kind == KindListen && env.Tracker.Era().String() == "legacy" {
		b.WriteString(st.Warn.Render(look.Fit("  this server is legacy: subscriptions/listen is a 2026-07-28 method, expect an error", width)) + "\n\n")
	}
	if c.jsonMode {
		b.WriteString(st.Dim.Render("  arguments (JSON):") + "\n")
		for _, l := range strings.Split(c.json.View(), "\n") {
			b.WriteString("  " + l + "\n")
		}
		b.WriteString("\n")
		for i := c.settingsStart(); i < len(c.fields); i++ {
			b.WriteString(c.fieldLine(env, width, i) + "\n")
		}
	} else {
		b.WriteString(c.viewFields(env, width))
	}
	b.WriteString(c.viewMessage(env, width))
	return b.String()
}

// viewKinds is the title and the row of kinds, the one being composed
// marked.
func (c *Model) viewKinds(env screen.Env, width int) string {
	st := env.Styles
	var tabs []string
	for k := Kind(0); k < numKinds; k++ {
		label := kindNames[k]
		if width < 100 {
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
	return look.Fit(marker+st.Title.Render("NEW REQUEST ")+strings.Join(tabs, st.Dim.Render("│")), width)
}

// viewChoice says what the form is for: the tool, the resource or
// template (with the URI it reads), the prompt.
func (c *Model) viewChoice(env screen.Env, width int) string {
	st := env.Styles
	switch {
	case c.kind == KindTool:
		if t, ok := c.tool(); ok {
			return look.Fit("  "+st.Bold.Render(env.Line(t.Name))+"  "+st.Dim.Render(env.Line(t.Description)), width) + "\n\n"
		}
	case c.kind == KindResource && c.res != nil:
		head := "  " + st.Bold.Render(env.Line(firstOf(c.res.Name, c.res.URI)))
		if d := firstOf(c.res.Description, c.res.Title); d != "" {
			head += "  " + st.Dim.Render(env.Line(d))
		}
		out := look.Fit(head, width) + "\n"
		if c.res.template != "" {
			uri, err := c.templateURI()
			if err != nil {
				uri = "…"
			}
			out += st.Dim.Render(look.Fit("  template "+env.Line(c.res.template)+"  →  reads "+env.Line(uri), width)) + "\n"
		}
		return out + "\n"
	case c.kind == KindPrompt && c.prompt != nil:
		head := "  " + st.Bold.Render(env.Line(c.prompt.Name))
		if d := firstOf(c.prompt.Description, c.prompt.Title); d != "" {
			head += "  " + st.Dim.Render(env.Line(d))
		}
		return look.Fit(head, width) + "\n\n"
	}
	return ""
}

// viewFields is the form: the kind's own fields, the settings, and what
// the tool or prompt takes.
func (c *Model) viewFields(env screen.Env, width int) string {
	st := env.Styles
	var b strings.Builder
	for i := range c.fields {
		if i == c.settingsStart() {
			b.WriteString("\n" + st.Dim.Render("  this request's timeouts (they become the defaults for the next):") + "\n")
		}
		b.WriteString(c.fieldLine(env, width, i) + "\n")
		if i == c.focus && !c.kindRow {
			b.WriteString(c.focusedHint(env, width))
			for _, l := range c.fields[i].Options(env.Styles, c.fieldKeys(), width) {
				b.WriteString(l + "\n")
			}
		}
	}
	switch {
	case c.kind == KindTool:
		if t, ok := c.tool(); ok && c.taskLine(t) != "" {
			b.WriteString(st.Running.Render(look.Fit("  ⧗ "+c.taskLine(t), width)) + "\n")
		}
		if t, ok := c.tool(); ok && t.Form.Note != "" {
			b.WriteString(st.Warn.Render(look.Fit("  "+env.Line(t.Form.Note), width)) + "\n")
		} else if c.settingsStart() == 0 {
			b.WriteString(st.Dim.Render("  (this tool takes no arguments)") + "\n")
		}
	case c.kind == KindPrompt && c.prompt != nil && c.settingsStart() == 0:
		b.WriteString(st.Dim.Render("  (this prompt takes no arguments)") + "\n")
	}
	return b.String()
}

// hint is the line of keys under the kinds. Its key words are the key
// map's, as every note of the composer's: one vocabulary for one key.
func (c *Model) hint() string {
	k := c.keys
	if c.step == stepPick {
		what := map[Kind]string{KindTool: "tool", KindResource: "resource", KindPrompt: "prompt"}[c.kind]
		return keymap.Keys(k.Up, k.Down) + " " + what + " · " + c.kindWord() + " · " + keymap.Says(k.Select) + " · " + keymap.Says(k.Send) + " · " + keymap.Says(k.Back)
	}
	if c.kindRow {
		return c.kindWord() + " · " + keymap.Key(k.Down) + " fields · " + keymap.Key(k.Select) + " send · " + keymap.Says(k.Back)
	}
	if c.jsonMode {
		// The editor keeps enter and tab for itself; the timeouts are
		// set in the form.
		return "JSON: " + keymap.Key(k.Select) + " new line · " + keymap.Says(k.Send) + " · " + keymap.Key(k.JSONMode) + " form and timeouts · " + keymap.Says(k.Back)
	}
	// esc is in the footer; these are the keys of the form. While ←/→
	// move through the text, the kinds are on the row above the first
	// field, where ←/→ switch them again.
	up := keymap.Key(k.Up) + " previous"
	if !c.kindKeys() {
		up += ", at the top " + c.kindWord()
	}
	h := keymap.Keys(k.NextField, k.Down) + " next field · " + up + " · " + keymap.Key(k.Select) + " send"
	if c.kind == KindTool {
		h += " · " + keymap.Key(k.JSONMode) + " JSON"
	}
	if c.kindKeys() {
		return h + " · " + c.kindWord()
	}
	return h
}

// kindWord is the keys that switch kinds, in the hint's words ("←/→
// kind").
func (c *Model) kindWord() string { return keymap.Keys(c.keys.PrevKind, c.keys.NextKind) + " kind" }

// sendKey is the key that sends the request from where the focus is:
// enter in the form, ctrl+s in the JSON editor (whose enter is a new
// line).
func (c *Model) sendKey() string {
	if c.jsonMode {
		return keymap.Key(c.keys.Send)
	}
	return keymap.Key(c.keys.Select)
}

// viewMessage is the line under the form: the error, the schema's
// objection, or why the last key did nothing.
func (c *Model) viewMessage(env screen.Env, width int) string {
	st := env.Styles
	switch {
	case c.err != "":
		// Errors name the fields, whose names are the server's.
		return "\n" + st.Error.Render(look.Fit("  ✗ "+env.Line(c.err), width)) + "\n"
	case c.note != "":
		return "\n" + st.Warn.Render(look.Fit("  "+env.Line(c.note), width)) + "\n"
	case c.warn != "":
		// So do the schema's objections, and they quote its values.
		anyway := " (" + c.sendKey() + " sends it anyway)"
		return "\n" + st.Warn.Render(look.Fit("  ! "+env.Line(c.warn)+anyway, width)) + "\n"
	}
	return ""
}

// fieldLine draws field i on its line.
func (c *Model) fieldLine(env screen.Env, width int, i int) string {
	focused := i == c.focus && !c.jsonMode && !c.kindRow
	return c.fields[i].Line(env.Styles, env.Line, c.fieldKeys(), focused, width)
}

// fieldKeys are the key words a field's line and choices name.
func (c *Model) fieldKeys() schemaform.Keys {
	return schemaform.Keys{Toggle: keymap.Key(c.keys.Toggle), Choose: keymap.Keys(c.keys.PrevKind, c.keys.NextKind)}
}

// viewPick draws the kind's list: the filter, the rows, and what the
// selected row is.
func (c *Model) viewPick(env screen.Env, width int, height int) string {
	st := env.Styles
	p := &c.pickers[c.kind]
	items := c.items(c.kind)
	var b strings.Builder
	b.WriteString(look.Fit("  "+p.filter.View()+st.Dim.Render("  "+c.pickCount(items)), width) + "\n")
	var status []string
	switch c.kind {
	case KindTool:
		if len(c.tools) == 0 {
			if r, ok := env.Tracker.Get(c.toolsReq); ok && r.IsActive() {
				status = append(status, look.Spinner(env.Now)+" asking the server for its tools (tools/list)…")
			} else {
				status = append(status, "The server listed no tools. Use "+keymap.Key(c.keys.NextKind)+" to send another kind of request.")
			}
		}
	case KindResource:
		status = c.listStatus(env, listResources, listTemplates)
	case KindPrompt:
		status = c.listStatus(env, listPrompts)
	}
	for _, s := range status {
		b.WriteString(st.Dim.Render(look.Fit("  "+env.Line(s), width)) + "\n")
	}
	if c.note != "" {
		b.WriteString(st.Warn.Render(look.Fit("  "+env.Line(c.note), width)) + "\n")
	}
	about := c.pickAbout(env, width, items)
	used := 1 + len(status) + 1
	if c.note != "" {
		used++
	}
	if len(about) > 0 {
		used += 1 + len(about)
	}
	b.WriteString(p.view(env, width, items, max(3, height-used)))
	if len(about) > 0 {
		b.WriteString("\n")
		for _, l := range about {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// pickCount says how many rows the filter keeps.
func (c *Model) pickCount(items []pickItem) string {
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
	case KindTool:
		what = plural(total, "tool")
	case KindResource:
		what = plural(len(c.cat.resources), "resource") + ", " + plural(len(c.cat.templates), "template")
	case KindPrompt:
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
func (c *Model) listStatus(env screen.Env, lists ...catalogList) []string {
	var out []string
	if c.fetching(env, lists...) {
		var names []string
		for _, l := range lists {
			names = append(names, listMethods[l])
		}
		out = append(out, look.Spinner(env.Now)+" asking the server ("+strings.Join(names, ", ")+")…")
	}
	empty := true
	for _, l := range lists {
		f := c.cat.fetch[l]
		r, asked := env.Tracker.Get(f.req)
		switch {
		case !f.asked:
			out = append(out, listMethods[l]+" was not asked on this connection: "+keymap.Key(c.keys.PrevKind)+" then "+keymap.Key(c.keys.NextKind)+" asks")
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
	if empty && !c.fetching(env, lists...) && len(out) == 0 {
		what := map[Kind]string{KindResource: "no resources or templates", KindPrompt: "no prompts"}[c.kind]
		out = append(out, "The server listed "+what+".")
	}
	return out
}

// pickAbout is what the selected row is, wrapped: the description and
// what the form will ask for.
func (c *Model) pickAbout(env screen.Env, width int, items []pickItem) []string {
	st := env.Styles
	i := c.pickers[c.kind].selected(items)
	if i < 0 || items[i].typed {
		return nil // the typed entry says what it is on its row
	}
	desc, args := c.about(env, i)
	var out []string
	wrap := func(s string, dim bool) {
		if s == "" {
			return
		}
		w := lipgloss.NewStyle().Width(max(20, width-4)).Render(env.Line(s))
		ls := strings.Split(w, "\n")
		if len(ls) > 4 {
			ls = append(ls[:3], look.Trunc(ls[3], max(20, width-5))+"…")
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

// about is item i of the kind's list in words, raw: its description, and
// what the form will ask for.
func (c *Model) about(env screen.Env, i int) (desc, args string) {
	switch c.kind {
	case KindTool:
		if i >= len(c.tools) {
			return "", ""
		}
		t := c.tools[i]
		if len(t.Schema) > 0 {
			args = toolArgsText(env, t)
		}
		return t.Description, args
	case KindResource:
		nr := len(c.cat.resources)
		switch {
		case i < nr:
			return resourceAbout(c.cat.resources[i], false)
		case i < nr+len(c.cat.templates):
			return resourceAbout(c.cat.templates[i-nr], true)
		}
	case KindPrompt:
		if i < len(c.cat.prompts) {
			return promptAbout(c.cat.prompts[i])
		}
	}
	return "", ""
}

// resourceAbout is a resource's description and what it reads, or a
// template's and the variables the form asks for.
func resourceAbout(r resourceInfo, template bool) (desc, args string) {
	desc = firstOf(r.Description, r.Title)
	if !template {
		args = "reads " + r.URI
		if r.MIMEType != "" {
			args += " (" + r.MIMEType + ")"
		}
		return desc, args
	}
	var vars []string
	for _, v := range r.vars {
		vars = append(vars, v.name)
	}
	args = "template " + r.template
	if len(vars) > 0 {
		args += " · the form asks for " + strings.Join(vars, ", ")
	}
	return desc, args
}

// promptAbout is a prompt's description and its arguments.
func promptAbout(p promptInfo) (desc, args string) {
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
	if len(as) == 0 {
		return firstOf(p.Description, p.Title), "takes no arguments"
	}
	return firstOf(p.Description, p.Title), "arguments: " + strings.Join(as, " · ")
}

// toolArgsText is a tool's arguments as the form will ask for them,
// rather than the schema's JSON cut at the screen's edge.
func toolArgsText(env screen.Env, t Tool) string {
	var args []string
	for _, p := range t.Form.Params {
		a := env.Line(p.Name)
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
	case len(args) > 0 && t.Form.Note != "":
		return "arguments: " + strings.Join(args, " · ") + " · " + t.Form.Note
	case len(args) > 0:
		return "arguments: " + strings.Join(args, " · ")
	case t.Form.Note != "":
		return t.Form.Note
	}
	return "takes no arguments"
}

// focusedHint is the focused field's description in full, wrapped, when
// its line cuts it ("" when the line shows it whole).
func (c *Model) focusedHint(env screen.Env, width int) string {
	if c.kindRow || c.jsonMode || c.focus >= len(c.fields) {
		return ""
	}
	f := &c.fields[c.focus]
	if f.Hint == "" || !strings.HasSuffix(strings.TrimRight(ansi.Strip(c.fieldLine(env, width, c.focus)), " "), "…") {
		return ""
	}
	w := lipgloss.NewStyle().Width(max(20, width-6)).Render(env.Line(f.Name) + ": " + env.Line(f.Hint))
	var b strings.Builder
	for i, l := range strings.Split(w, "\n") {
		if i == 3 {
			break
		}
		b.WriteString(env.Styles.Dim.Render("    "+l) + "\n")
	}
	return b.String()
}
