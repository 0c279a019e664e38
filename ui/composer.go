package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/wire"
)

// toolInfo is one tool from tools/list (strings raw; sanitise to show).
type toolInfo struct {
	Name        string
	Description string
	Schema      json.RawMessage
	// TaskSupport is the tool's execution.taskSupport ("required",
	// "optional", "forbidden" or "").
	TaskSupport string
	// form is Schema read for the composer, once.
	form toolForm
}

// parseTools reads a tools/list result; line sanitises the schemas' texts.
func parseTools(result json.RawMessage, line func(string) string) []toolInfo {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Execution   struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return nil
	}
	out := make([]toolInfo, 0, len(res.Tools))
	for _, t := range res.Tools {
		out = append(out, toolInfo{Name: t.Name, Description: t.Description, Schema: t.InputSchema, TaskSupport: t.Execution.TaskSupport,
			form: readSchema(t.InputSchema, line)})
	}
	return out
}

// composeKind is what the composer sends.
type composeKind uint8

const (
	kindTool composeKind = iota
	kindResource
	kindPrompt
	kindListen
	kindRaw
	numKinds
)

var kindNames = [numKinds]string{"tool call", "resource read", "prompt get", "subscriptions/listen", "raw request"}

// kindShort names the kinds on narrow terminals.
var kindShort = [numKinds]string{"tool", "resource", "prompt", "listen", "raw"}

// hasPicker reports whether a kind starts with a list to pick from.
func (k composeKind) hasPicker() bool { return k == kindTool || k == kindResource || k == kindPrompt }

type composerStep uint8

const (
	stepPick composerStep = iota // choosing a tool, resource or prompt
	stepForm                     // filling the fields
)

// field is one input of the form.
type field struct {
	name     string
	typ      string // string, integer, number, boolean, json, duration
	required bool
	hint     string
	input    textinput.Model
	on       bool // booleans
	isBool   bool
	// fallback: the placeholder is a real example, sent when the field is
	// left empty (the demo's resource and prompt, the raw method).
	fallback bool
	// tvar: the field is a URI template's variable.
	tvar bool
}

// formState is what the composer shows for one kind: kept per kind while
// the composer is open, so that switching kinds and back loses nothing
// typed.
type formState struct {
	step composerStep
	// res is the resource or template the form reads (nil: a typed URI);
	// prompt the prompt it gets (nil: a typed name and JSON arguments).
	res    *resourceInfo
	prompt *promptInfo

	fields []field // the kind's own fields, then the timeout settings
	focus  int
	// kindRow: the focus is on the row of kinds.
	kindRow bool
	// touched: the user changed something in this form. Until then ←/→
	// still switch kinds from an empty field, since there they would move
	// no cursor.
	touched  bool
	jsonMode bool
	json     textarea.Model
	err      string
	// editOf names the request this form is a copy of (E), "" for a new
	// one.
	editOf string
	// warn says why the tool's schema refuses the arguments as they stand,
	// checked in Update whenever they change. It warns and does not block:
	// sending a server what its schema forbids is a fair probe.
	warn string
}

// composer builds a request: pick a tool (with its description and input
// schema), a resource, a template or a prompt from the server's lists, and
// fill a form built from the schema's simple types, the template's
// variables or the prompt's arguments — or edit the arguments as JSON —
// then set this request's timeouts and late window and send.
type composer struct {
	keys  keymap.ComposerKeyMap
	kind  composeKind
	tools []toolInfo
	// pickers filter and select in the tool, resource and prompt lists.
	pickers [numKinds]picker
	cat     catalog

	formState
	// saved is each other kind's form, as the user left it.
	saved [numKinds]*formState
	// note says why the last key did nothing ("" when it did something).
	note string

	// Defaults for the next requests; a sent request's settings become them.
	timeout, maxTimeout, lateWindow time.Duration
	reset                           bool
	// logLevel is the level the next request asks the server to log at
	// ("": no logs asked for).
	logLevel string
	// asTask: run the tool call as a task (legacy era, a tool whose
	// taskSupport is optional; required ones always are); legacy says the
	// connection's era, read when the form is built.
	asTask, legacy bool
}

func newComposer() composer {
	c := composer{keys: keymap.DefaultComposer(), reset: true}
	c.pickers[kindTool] = newPicker("type to filter the tools")
	c.pickers[kindResource] = newPicker("type to filter, or a URI to read")
	c.pickers[kindPrompt] = newPicker("type to filter, or a prompt's name")
	return c
}

func (c *composer) setTools(tools []toolInfo) {
	prev, had := c.tool()
	c.tools = tools
	p := &c.pickers[kindTool]
	p.sel = 0
	for i, t := range tools {
		// Keep the tool the user had chosen; on first sight preselect the
		// demo's slow tool, the one that shows cancellation best.
		if (had && t.Name == prev.Name) || (!had && t.Name == "slow") {
			p.sel = i
		}
	}
}

// newConnection forgets the lists of the last connection: the next
// connection's server may list other things.
func (c *composer) newConnection() {
	c.cat = catalog{}
	c.res, c.prompt = nil, nil
	c.saved = [numKinds]*formState{}
}

// loadDefaults takes the tracker's settings the first time.
func (c *composer) loadDefaults(m *Model) {
	if c.timeout != 0 {
		return
	}
	cfg := m.tracker.Config()
	c.timeout, c.maxTimeout, c.lateWindow = cfg.DefaultTimeout, cfg.MaxTimeout, cfg.LateWindow
	c.logLevel = m.opts.LogLevel
	if cfg.ResetOnProgress != nil {
		c.reset = *cfg.ResetOnProgress
	}
}

// open starts composing, on the kind's list when it has one, else in the
// first field of its form.
//
// It always opens on the tool call, whatever kind was sent last: what the
// user types next goes into the first field, and a tool's name typed into
// the raw kind's method field would be sent as a request of that method.
// Repeating the last request of another kind is r or E.
func (c *composer) open(m *Model) tea.Cmd {
	c.loadDefaults(m)
	c.kind = kindTool
	c.saved = [numKinds]*formState{}
	c.note = ""
	for k := range c.pickers {
		c.pickers[k].filter.SetValue("")
	}
	return c.enterKind(m)
}

// enterKind shows the current kind afresh: its list, or its form with the
// focus in the first field (what is typed goes where it shows).
func (c *composer) enterKind(m *Model) tea.Cmd {
	c.formState = formState{}
	fetch := c.fetchFor(m, c.kind)
	if c.kind.hasPicker() && c.lacks(m, c.kind) == "" {
		c.step = stepPick
		return fetch
	}
	return tea.Batch(fetch, c.buildForm(m))
}

// switchKind moves to the next or previous kind, keeping the form left.
func (c *composer) switchKind(m *Model, d int) tea.Cmd {
	s := c.formState
	c.saved[c.kind] = &s
	c.kind = composeKind((int(c.kind) + d + int(numKinds)) % int(numKinds))
	if s := c.saved[c.kind]; s != nil {
		c.formState = *s
		return c.fetchFor(m, c.kind) // if this connection has not asked yet
	}
	return c.enterKind(m)
}

// toKindRow moves the focus to the row of kinds.
func (c *composer) toKindRow() {
	for j := range c.fields {
		c.fields[j].input.Blur()
	}
	c.kindRow = true
}

// settingFields are the timeout settings every form ends with.
const settingFields = 5

// buildForm lays out the form for the current kind (and its choice).
func (c *composer) buildForm(m *Model) tea.Cmd {
	c.step = stepForm
	c.editOf = ""
	c.focus = 0
	c.kindRow = false
	c.touched = false
	c.jsonMode = false
	c.err = ""
	c.warn = ""
	c.fields = nil
	// The demo's resource and prompt make ready examples; another server's
	// are its own, so its fields start empty.
	info, _ := m.tracker.Conn()
	demo := info.ServerName == demoServerName
	c.legacy = info.Era == event.EraLegacy
	switch c.kind {
	case kindTool:
		if t, ok := c.tool(); ok {
			c.fields = formFields(t.form.params)
		}
	case kindResource:
		switch {
		case c.res != nil && c.res.template != "":
			for _, v := range c.res.vars {
				f := textField(v.name, "string", !v.optional(), "", "a variable of the template")
				f.tvar = true
				c.fields = append(c.fields, f)
			}
		case c.res != nil:
			uri := textField("uri", "string", true, "", "the resource URI")
			uri.input.SetValue(c.res.URI)
			c.fields = []field{uri}
		default:
			uri := textField("uri", "string", true, "e.g. file:///path/to/file", "the resource URI")
			if demo {
				uri = example(textField("uri", "string", true, "demo://clock", "the resource URI"))
			}
			c.fields = []field{uri}
		}
	case kindPrompt:
		if c.prompt != nil {
			for _, a := range c.prompt.Args {
				c.fields = append(c.fields, textField(a.Name, "string", a.Required, "", a.Description))
			}
			break
		}
		name := textField("name", "string", true, "the prompt's name", "the prompt name")
		argsHint := `e.g. {"name":"value"}`
		if demo {
			name = example(textField("name", "string", true, "explain_cancellation", "the prompt name"))
			argsHint = `{"transport":"stdio"}`
		}
		c.fields = []field{name, textField("arguments", "json", false, argsHint, "a JSON object of string arguments")}
	case kindListen:
		c.fields = []field{
			boolField("toolsListChanged", false), boolField("promptsListChanged", false), boolField("resourcesListChanged", false),
			textField("resourceSubscriptions", "string", false, "e.g. file:///a, file:///b", "comma-separated resource URIs"),
		}
		if demo {
			c.fields[3].input.SetValue("demo://clock")
		}
	case kindRaw:
		c.fields = []field{
			example(textField("method", "string", true, "tools/list", "any JSON-RPC method")),
			textField("params", "json", false, `{}`, "a JSON object (protocol _meta is added for you)"),
		}
	}
	c.fields = append(c.fields,
		textField("timeout", "duration", false, fmtSetting(c.timeout), "this request's timeout"),
		textField("late window", "duration", false, fmtSetting(c.lateWindow), "how long to watch for late traffic after a cancel"),
		boolField("reset timeout on progress", c.reset),
		textField("max timeout", "duration", false, fmtSetting(c.maxTimeout), "never exceeded, whatever the progress"),
		textField("log level", "string", false, fmtLogLevel(c.logLevel), "the server's log lines for this request: debug…emergency, or none"),
	)
	c.checkArgs()
	return c.focusField(0)
}

// checkArgs checks a tool call's arguments against the tool's schema as
// they stand, for the form to warn (an argument the form cannot read yet
// is told by err when sending, not here).
func (c *composer) checkArgs() {
	c.warn = ""
	t, ok := c.tool()
	if c.kind != kindTool || c.step != stepForm || !ok {
		return
	}
	args, err := c.toolArgs()
	if err != nil {
		return
	}
	if err := t.form.validate(args); err != nil {
		c.warn = err.Error()
	}
}

// toolArgs are the arguments of a tool call, from the form or the JSON.
func (c *composer) toolArgs() (map[string]json.RawMessage, error) {
	if c.jsonMode {
		return jsonObject(c.json.Value())
	}
	return c.formArgs()
}

// fmtSetting writes a duration as a person types it: 30s, 1m, 1m30s, 2h.
func fmtSetting(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func textField(name, typ string, required bool, placeholder, hint string) field {
	in := look.NewTextInput()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.CharLimit = 4096
	return field{name: name, typ: typ, required: required, hint: hint, input: in}
}

// example marks a field's placeholder as the value sent when it is left
// empty.
func example(f field) field {
	f.fallback = true
	return f
}

// demoServerName is the serverInfo name of inflight's own demo server.
const demoServerName = "inflight-demo"

func boolField(name string, on bool) field {
	return field{name: name, typ: "boolean", isBool: true, on: on}
}

// formFields are the form's inputs for a tool's parameters.
func formFields(params []param) []field {
	out := make([]field, 0, len(params))
	for _, p := range params {
		if p.typ == "boolean" {
			f := boolField(p.name, p.def == "true")
			f.hint, f.required = p.hint, p.required
			out = append(out, f)
			continue
		}
		out = append(out, textField(p.name, p.typ, p.required, p.def, p.hint))
	}
	return out
}

// tool is the tool the tool picker has selected.
func (c *composer) tool() (toolInfo, bool) {
	i := c.pickers[kindTool].selected(c.items(kindTool))
	if i < 0 || i >= len(c.tools) {
		return toolInfo{}, false
	}
	return c.tools[i], true
}

// items are the rows of kind's picker.
func (c *composer) items(kind composeKind) []pickItem {
	var out []pickItem
	switch kind {
	case kindTool:
		for _, t := range c.tools {
			out = append(out, pickItem{name: t.Name, desc: t.Description})
		}
	case kindResource:
		for _, r := range c.cat.resources {
			name := r.Name
			if name == "" {
				name = r.URI
			}
			out = append(out, pickItem{name: name, detail: r.URI, desc: firstOf(r.Title, r.Description)})
		}
		for _, r := range c.cat.templates {
			out = append(out, pickItem{name: r.Name, detail: "template " + r.template, desc: firstOf(r.Title, r.Description)})
		}
		out = append(out, pickItem{name: "✎ type a URI", desc: "read a URI you type (the filter's text fills it)", typed: true})
	case kindPrompt:
		for _, p := range c.cat.prompts {
			out = append(out, pickItem{name: p.Name, detail: promptArgsText(p.Args), desc: firstOf(p.Title, p.Description)})
		}
		out = append(out, pickItem{name: "✎ type a prompt name", desc: "get a prompt you name (the filter's text fills it)", typed: true})
	}
	return out
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// promptArgsText lists a prompt's arguments, the required ones marked.
func promptArgsText(args []promptArg) string {
	if len(args) == 0 {
		return "no arguments"
	}
	names := make([]string, 0, len(args))
	for _, a := range args {
		n := a.Name
		if a.Required {
			n += "*"
		}
		names = append(names, n)
	}
	return "args " + strings.Join(names, ", ")
}

// settingsStart is the index of the first timeout setting field.
func (c *composer) settingsStart() int { return len(c.fields) - settingFields }

func (c *composer) focusField(i int) tea.Cmd {
	if len(c.fields) == 0 {
		return nil
	}
	i = (i + len(c.fields)) % len(c.fields)
	for j := range c.fields {
		c.fields[j].input.Blur()
	}
	c.focus = i
	c.kindRow = false
	if !c.fields[i].isBool {
		return c.fields[i].input.Focus()
	}
	return nil
}

// kindKeys reports whether ←/→ switch kinds now: on a list, on the row of
// kinds, and in a form not yet changed whose focused field has no text for
// them to move through.
func (c *composer) kindKeys() bool {
	if c.step == stepPick || c.kindRow {
		return true
	}
	if c.jsonMode || c.touched || c.focus >= len(c.fields) {
		return false
	}
	f := &c.fields[c.focus]
	return f.isBool || f.input.Value() == ""
}

// backToPicker reports whether esc in the form goes back to the kind's list.
func (c *composer) backToPicker(m *Model) bool {
	switch c.kind {
	case kindTool:
		return len(c.tools) > 0
	case kindResource, kindPrompt:
		return c.lacks(m, c.kind) == ""
	}
	return false
}

// update handles a message while the composer is open.
func (c *composer) update(m *Model, msg tea.Msg) tea.Cmd {
	if wm, ok := msg.(tea.MouseWheelMsg); ok {
		if c.step == stepPick {
			c.pickers[c.kind].move(c.items(c.kind), wheelDelta(wm))
		}
		return nil
	}
	k := c.keys
	kp, isKey := msg.(tea.KeyPressMsg)
	if !isKey {
		// A paste, or what an input asked for (a cursor's blink): to the
		// input that has the focus, as a key would go.
		return c.toInput(msg)
	}
	c.note = ""
	switch {
	case key.Matches(kp, k.Back):
		switch {
		case c.step == stepPick && c.pickers[c.kind].filter.Value() != "":
			c.pickers[c.kind].filter.SetValue("")
		case c.step == stepForm && c.backToPicker(m):
			c.step, c.err, c.warn = stepPick, "", ""
		default:
			m.mode = keymap.ModeList
		}
		return nil
	case (key.Matches(kp, k.NextKind) || key.Matches(kp, k.PrevKind)) && c.kindKeys():
		d := 1
		if key.Matches(kp, k.PrevKind) {
			d = -1
		}
		return c.switchKind(m, d)
	case c.step == stepPick:
		return c.updatePick(m, kp)
	case c.kindRow:
		return c.updateKindRow(m, kp)
	}
	return c.updateForm(m, kp)
}

// updatePick handles a key on a list: ↑/↓ select, enter chooses, ctrl+s
// sends with the defaults, and anything else edits the filter.
func (c *composer) updatePick(m *Model, kp tea.KeyPressMsg) tea.Cmd {
	k := c.keys
	p := &c.pickers[c.kind]
	items := c.items(c.kind)
	switch {
	case key.Matches(kp, k.Up):
		p.move(items, -1)
		return nil
	case key.Matches(kp, k.Down):
		p.move(items, 1)
		return nil
	case key.Matches(kp, k.Select), key.Matches(kp, k.Send):
		i := p.selected(items)
		if i < 0 {
			if len(items) == 0 {
				c.note = "there is nothing to choose: use ← or → for another kind of request"
			} else {
				c.note = fmt.Sprintf("nothing matches %q: backspace widens the filter", p.filter.Value())
			}
			return nil
		}
		p.sel = i
		cmd := c.choose(m, i)
		if key.Matches(kp, k.Send) {
			return tea.Batch(cmd, c.send(m))
		}
		return cmd
	case key.Matches(kp, k.NextField), key.Matches(kp, k.PrevField):
		c.note = "tab does nothing on a list: enter chooses, ↑/↓ move"
		return nil
	}
	return p.update(items, kp)
}

// choose opens the form for item i of the kind's list.
func (c *composer) choose(m *Model, i int) tea.Cmd {
	typed := c.pickers[c.kind].filter.Value()
	c.res, c.prompt = nil, nil
	switch c.kind {
	case kindResource:
		nr, nt := len(c.cat.resources), len(c.cat.templates)
		switch {
		case i < nr:
			r := c.cat.resources[i]
			c.res = &r
		case i < nr+nt:
			r := c.cat.templates[i-nr]
			c.res = &r
		}
	case kindPrompt:
		if i < len(c.cat.prompts) {
			p := c.cat.prompts[i]
			c.prompt = &p
		}
	}
	cmd := c.buildForm(m)
	// The filter's text is what the user typed: it becomes the typed URI or
	// prompt name rather than vanish.
	if (c.kind == kindResource && c.res == nil) || (c.kind == kindPrompt && c.prompt == nil) {
		if typed = strings.TrimSpace(typed); typed != "" {
			c.fields[0].input.SetValue(typed)
			c.touched = true
		}
	}
	return cmd
}

// updateKindRow handles a key while the focus is on the row of kinds.
func (c *composer) updateKindRow(m *Model, kp tea.KeyPressMsg) tea.Cmd {
	k := c.keys
	switch {
	case key.Matches(kp, k.Send), key.Matches(kp, k.Select):
		return c.send(m)
	case key.Matches(kp, k.NextField), key.Matches(kp, k.Down):
		return c.focusField(0)
	case key.Matches(kp, k.PrevField), key.Matches(kp, k.Up):
		return c.focusField(len(c.fields) - 1)
	case key.Matches(kp, k.JSONMode) && c.kind == kindTool:
		c.kindRow = false
		return c.toggleJSON()
	}
	if kp.Text != "" {
		// Typing on the row of kinds types into the first field that
		// takes text, rather than nowhere.
		for i := range c.fields {
			if !c.fields[i].isBool {
				cmd := c.focusField(i)
				c.fields[i].input.CursorEnd()
				return tea.Batch(cmd, c.updateForm(m, kp))
			}
		}
	}
	c.note = "←/→ choose the kind · ↓ or tab to the fields · enter sends"
	return nil
}

// updateForm handles a key in the form or the JSON editor.
func (c *composer) updateForm(m *Model, kp tea.KeyPressMsg) tea.Cmd {
	k := c.keys
	switch {
	case key.Matches(kp, k.AsTask):
		c.note = c.toggleTask()
		return nil
	case key.Matches(kp, k.Send), key.Matches(kp, k.Select) && !c.jsonMode:
		return c.send(m)
	case key.Matches(kp, k.JSONMode):
		if c.kind == kindTool {
			return c.toggleJSON()
		}
		c.note = "ctrl+e edits a tool call's arguments as JSON; this kind's form is all there is"
		return nil
	case (key.Matches(kp, k.NextField) || key.Matches(kp, k.Down)) && !c.jsonMode:
		if c.focus == len(c.fields)-1 {
			c.toKindRow()
			return nil
		}
		return c.focusField(c.focus + 1)
	case (key.Matches(kp, k.PrevField) || key.Matches(kp, k.Up)) && !c.jsonMode:
		if c.focus == 0 {
			c.toKindRow()
			return nil
		}
		return c.focusField(c.focus - 1)
	case !c.jsonMode && c.focus < len(c.fields) && c.fields[c.focus].isBool:
		f := &c.fields[c.focus]
		if key.Matches(kp, k.Toggle) {
			f.on = !f.on
			c.touched = true
			c.checkArgs()
			return nil
		}
		if kp.Text != "" {
			c.note = fmt.Sprintf("%q was not typed: %s is a checkbox (space toggles it, tab moves on)", kp.Text, m.line(f.name))
		}
		return nil
	}
	return c.toInput(kp)
}

// toInput hands a message to the input that has the focus.
func (c *composer) toInput(msg tea.Msg) tea.Cmd {
	switch {
	case c.step == stepPick:
		return c.pickers[c.kind].update(c.items(c.kind), msg)
	case c.jsonMode:
		before := c.json.Value()
		var cmd tea.Cmd
		c.json, cmd = c.json.Update(msg)
		if c.json.Value() != before {
			c.touched = true
		}
		c.err = ""
		if _, err := jsonObject(c.json.Value()); err != nil {
			c.err = err.Error()
		}
		c.checkArgs()
		return cmd
	case c.kindRow:
		if _, ok := msg.(tea.PasteMsg); ok {
			for i := range c.fields {
				if !c.fields[i].isBool {
					return tea.Batch(c.focusField(i), c.toInput(msg))
				}
			}
		}
		return nil
	case c.focus < len(c.fields) && c.fields[c.focus].isBool:
		if _, ok := msg.(tea.PasteMsg); ok {
			c.note = "the paste was not typed: " + c.fields[c.focus].name + " is a checkbox (tab moves to a text field)"
		}
		return nil
	case c.focus < len(c.fields):
		f := &c.fields[c.focus]
		before := f.input.Value()
		var cmd tea.Cmd
		f.input, cmd = f.input.Update(msg)
		if f.input.Value() != before {
			c.touched = true
			c.err = ""
		}
		c.checkArgs()
		return cmd
	}
	return nil
}

// toggleJSON switches between the form and the JSON editor, carrying the
// arguments across.
func (c *composer) toggleJSON() tea.Cmd {
	if !c.jsonMode {
		args, err := c.formArgs()
		if err != nil {
			c.err = err.Error()
			return nil
		}
		b, _ := json.MarshalIndent(args, "", "  ")
		c.openJSON(b)
		return c.json.Focus()
	}
	args, err := jsonObject(c.json.Value())
	if err != nil {
		c.err = "fix the JSON first: " + err.Error()
		return nil
	}
	c.fillForm(args)
	c.jsonMode = false
	c.checkArgs()
	return c.focusField(0)
}

// openJSON opens the JSON editor on a tool call's arguments.
func (c *composer) openJSON(b []byte) {
	ta := look.NewTextArea()
	ta.ShowLineNumbers = false
	ta.SetWidth(60)
	ta.SetHeight(8)
	// The keys are the schema's property names: Go's encoder leaves
	// their C1 and bidi controls raw, so they are escaped for the
	// editor (the JSON means the same).
	ta.SetValue(string(termsafe.EscapeJSON(b)))
	c.json = ta
	c.jsonMode = true
	c.kindRow = false
	c.err = ""
	c.checkArgs()
}

// fillForm sets the kind's own fields from a JSON object of arguments.
func (c *composer) fillForm(args map[string]json.RawMessage) {
	for i := 0; i < c.settingsStart(); i++ {
		f := &c.fields[i]
		v, ok := args[f.name]
		if f.isBool {
			f.on = ok && string(v) == "true"
			continue
		}
		if !ok {
			f.input.SetValue("")
			continue
		}
		var s string
		if f.typ == "string" && json.Unmarshal(v, &s) == nil {
			f.input.SetValue(s)
		} else {
			f.input.SetValue(string(v))
		}
	}
}

// parseSetting reads a duration field: a bare number is seconds; empty
// is def.
func parseSetting(f *field, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(f.input.Value())
	if v == "" {
		return def, nil
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		// A bare number is seconds.
		if !(n > 0) {
			return 0, fmt.Errorf("%s: %q must be longer than zero (try 30s or 2m)", f.name, v)
		}
		if math.IsInf(n, 0) || n > 1e9 {
			return 0, fmt.Errorf("%s: %q seconds is too long (try 30s or 2m)", f.name, v)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration (try 30s or 2m)", f.name, v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: %q must be longer than zero (try 30s or 2m)", f.name, v)
	}
	return d, nil
}

// settings reads the timeout fields, remembering them as the defaults for
// the next requests.
func (c *composer) settings() (session.RequestOptions, error) {
	i := c.settingsStart()
	timeout, err := parseSetting(&c.fields[i], c.timeout)
	if err != nil {
		return session.RequestOptions{}, err
	}
	late, err := parseSetting(&c.fields[i+1], c.lateWindow)
	if err != nil {
		return session.RequestOptions{}, err
	}
	maxTimeout, err := parseSetting(&c.fields[i+3], c.maxTimeout)
	if err != nil {
		return session.RequestOptions{}, err
	}
	if timeout > maxTimeout {
		return session.RequestOptions{}, fmt.Errorf("the timeout (%s) exceeds the max timeout (%s)", timeout, maxTimeout)
	}
	level := c.logLevel
	if v := c.fields[i+4].input.Value(); strings.TrimSpace(v) != "" {
		if level, err = parseLogLevel(v); err != nil {
			return session.RequestOptions{}, err
		}
	}
	c.logLevel = level
	reset := c.fields[i+2].on
	c.timeout, c.maxTimeout, c.lateWindow, c.reset = timeout, maxTimeout, late, reset
	return session.RequestOptions{Timeout: timeout, MaxTimeout: maxTimeout, ResetOnProgress: &reset, LateWindow: late}, nil
}

// send validates the form and sends the request.
func (c *composer) send(m *Model) tea.Cmd {
	method, params, err := c.request()
	if err != nil {
		c.err = err.Error()
		return nil
	}
	opts, err := c.settings()
	if err != nil {
		c.err = err.Error()
		return nil
	}
	m.mode = keymap.ModeList
	m.list = m.list.Follow()
	cmd := m.sendLogged(method, params, opts, c.logLevel)
	if c.kind == kindTool && c.warn != "" {
		// The schema's objection goes with it: the answer may be about it.
		m.setStatus(levelWarn, fmt.Sprintf("sent #%s %s although %s — press c to cancel it", m.list.Selected(), method, c.warn))
	} else {
		m.setStatus(levelInfo, fmt.Sprintf("sent #%s %s — press c to cancel it", m.list.Selected(), method))
	}
	m.status.about = m.list.Selected()
	// The next time the composer opens, it opens afresh.
	c.saved = [numKinds]*formState{}
	return cmd
}

// request builds the method and params of the composed request.
func (c *composer) request() (string, json.RawMessage, error) {
	str := func(i int) (string, error) {
		f := &c.fields[i]
		v := strings.TrimSpace(f.input.Value())
		if v == "" && f.fallback {
			v = f.input.Placeholder
		}
		if v == "" && f.required {
			return "", fmt.Errorf("%s is required", f.name)
		}
		return v, nil
	}
	switch c.kind {
	case kindTool:
		t, ok := c.tool()
		if !ok {
			return "", nil, fmt.Errorf("no tool chosen")
		}
		args, err := c.toolArgs()
		if err != nil {
			return "", nil, err
		}
		p := map[string]any{"name": t.Name, "arguments": args}
		if c.taskCall(t) {
			// The legacy tasks utility: the request asks for a task. (A
			// modern server decides itself; the client declares the
			// extension on every tools/call.)
			p["task"] = map[string]any{}
		}
		params, _ := json.Marshal(p)
		return wire.MethodToolsCall, params, nil
	case kindResource:
		var uri string
		var err error
		if c.res != nil && c.res.template != "" {
			uri, err = c.templateURI()
		} else {
			uri, err = str(0)
		}
		if err != nil {
			return "", nil, err
		}
		params, _ := json.Marshal(map[string]string{"uri": uri})
		return wire.MethodResourcesRead, params, nil
	case kindPrompt:
		if c.prompt != nil {
			args := map[string]string{}
			for i := 0; i < c.settingsStart(); i++ {
				v, err := str(i)
				if err != nil {
					return "", nil, err
				}
				if v != "" {
					args[c.fields[i].name] = v
				}
			}
			params, _ := json.Marshal(map[string]any{"name": c.prompt.Name, "arguments": args})
			return wire.MethodPromptsGet, params, nil
		}
		args, err := jsonObject(c.fields[1].input.Value())
		if err != nil {
			return "", nil, fmt.Errorf("arguments: %v", err)
		}
		name, err := str(0)
		if err != nil {
			return "", nil, err
		}
		params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
		return wire.MethodPromptsGet, params, nil
	case kindListen:
		filter := map[string]any{}
		for i := 0; i < 3; i++ {
			if c.fields[i].on {
				filter[c.fields[i].name] = true
			}
		}
		var uris []string
		for _, u := range strings.Split(c.fields[3].input.Value(), ",") {
			if u = strings.TrimSpace(u); u != "" {
				uris = append(uris, u)
			}
		}
		if len(uris) > 0 {
			filter["resourceSubscriptions"] = uris
		}
		params, _ := json.Marshal(map[string]any{"notifications": filter})
		return wire.MethodSubscriptionsListen, params, nil
	case kindRaw:
		method, err := str(0)
		if err != nil {
			return "", nil, err
		}
		p := strings.TrimSpace(c.fields[1].input.Value())
		if p == "" {
			return method, nil, nil
		}
		if _, err := jsonObject(p); err != nil {
			return "", nil, fmt.Errorf("params: %v", err)
		}
		return method, json.RawMessage(p), nil
	}
	return "", nil, fmt.Errorf("unknown kind")
}

// templateURI expands the chosen template with the form's variables.
func (c *composer) templateURI() (string, error) {
	values := map[string]string{}
	for i := 0; i < c.settingsStart(); i++ {
		f := &c.fields[i]
		v := f.input.Value()
		if v == "" && f.required {
			return "", fmt.Errorf("%s is required", f.name)
		}
		values[f.name] = v
	}
	return expandTemplate(c.res.template, values), nil
}

// fieldLabelWidth is the column the form's labels take.
const fieldLabelWidth = 28

// layout sizes the form's inputs and the JSON editor to the width, for
// view to draw.
func (c *composer) layout(width int) {
	for i := range c.fields {
		if !c.fields[i].isBool {
			c.fields[i].input.SetWidth(max(10, min(40, width-fieldLabelWidth-30)))
		}
	}
	for k := range c.pickers {
		c.pickers[k].filter.SetWidth(max(10, min(40, width-44)))
	}
	if c.jsonMode {
		c.json.SetWidth(min(80, width-4))
	}
}

func jsonObject(s string) (map[string]json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]json.RawMessage{}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if obj == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return obj, nil
}

// formArgs converts the kind's own fields to a JSON object; empty fields
// are left out so the server's defaults apply.
func (c *composer) formArgs() (map[string]json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	for i := 0; i < c.settingsStart(); i++ {
		f := &c.fields[i]
		if f.isBool {
			if f.on {
				args[f.name] = json.RawMessage("true")
			} else if f.required {
				args[f.name] = json.RawMessage("false")
			}
			continue
		}
		v := strings.TrimSpace(f.input.Value())
		if v == "" {
			if f.required && f.fallback {
				v = f.input.Placeholder
			} else if f.required && c.kind == kindTool {
				return nil, fmt.Errorf("%s is required", f.name)
			} else {
				continue
			}
		}
		raw, err := fieldJSON(f.typ, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.name, err)
		}
		args[f.name] = raw
	}
	return args, nil
}

func fieldJSON(typ, v string) (json.RawMessage, error) {
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return json.RawMessage(strconv.FormatInt(n, 10)), nil
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return json.Marshal(f)
	case "json":
		if !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("not valid JSON")
		}
		return json.RawMessage(v), nil
	}
	return json.Marshal(v)
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
