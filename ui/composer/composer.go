// Package composer is the screen that builds a request: pick a tool, a
// resource, a template or a prompt from the server's lists (or type a
// method), fill the form its schema or arguments make, set the request's
// timeouts, and send. It holds no root model: it returns what the root
// must do (Send, Fetch a list's page, screen.Close) and is handed back the
// answers to its lists (Received).
package composer

import (
	"encoding/json"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/keymap"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/wire"
)

// Kind is what the composer sends.
type Kind uint8

// The kinds, in the order of the row of kinds.
const (
	KindTool Kind = iota
	KindResource
	KindPrompt
	KindListen
	KindRaw
	numKinds
)

var kindNames = [numKinds]string{"tool call", "resource read", "prompt get", "subscriptions/listen", "raw request"}

// kindShort names the kinds on narrow terminals.
var kindShort = [numKinds]string{"tool", "resource", "prompt", "listen", "raw"}

// hasPicker reports whether a kind starts with a list to pick from.
func (k Kind) hasPicker() bool { return k == KindTool || k == KindResource || k == KindPrompt }

type composerStep uint8

const (
	stepPick composerStep = iota // choosing a tool, resource or prompt
	stepForm                     // filling the fields
)

// formState is what the composer shows for one kind: kept per kind while
// the composer is open, so that switching kinds and back loses nothing
// typed.
type formState struct {
	step composerStep
	// res is the resource or template the form reads (nil: a typed URI);
	// prompt the prompt it gets (nil: a typed name and JSON arguments).
	res    *resourceInfo
	prompt *promptInfo

	fields []schemaform.Field // the kind's own fields, then the timeout settings
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
	// asTask: run the tool call as a task (legacy era, a tool whose
	// taskSupport is optional; required ones always are). It belongs to
	// this form: every form starts from its tool's own taskSupport, so a
	// ctrl+t given for one tool never carries over to the next.
	asTask bool
}

// Model builds a request: pick a tool (with its description and input
// schema), a resource, a template or a prompt from the server's lists, and
// fill a form built from the schema's simple types, the template's
// variables or the prompt's arguments — or edit the arguments as JSON —
// then set this request's timeouts and late window and send.
type Model struct {
	keys  keymap.ComposerKeyMap
	kind  Kind
	tools []Tool
	// toolsReq is the tools/list request whose answer lists the tools.
	toolsReq wire.ID
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
	// legacy says the connection's era, read when the form is built.
	legacy bool
}

// New is a composer whose requests ask the server for logs at logLevel
// ("": none) until the user sets another level.
func New(logLevel string) Model {
	c := Model{keys: keymap.DefaultComposer(), reset: true, logLevel: logLevel}
	c.pickers[KindTool] = newPicker("type to filter the tools")
	c.pickers[KindResource] = newPicker("type to filter, or a URI to read")
	c.pickers[KindPrompt] = newPicker("type to filter, or a prompt's name")
	return c
}

// setTools takes a new tools/list answer, keeping the tool chosen.
func (c *Model) setTools(tools []Tool) {
	prev, had := c.tool()
	c.tools = tools
	p := &c.pickers[KindTool]
	p.sel = 0
	for i, t := range tools {
		// Keep the tool the user had chosen; on first sight preselect the
		// demo's slow tool, the one that shows cancellation best.
		if (had && t.Name == prev.Name) || (!had && t.Name == "slow") {
			p.sel = i
		}
	}
}

// NewConnection forgets the lists of the last connection: the next
// connection's server may list other things.
func (c Model) NewConnection() Model {
	c.cat = catalog{}
	c.res, c.prompt = nil, nil
	c.saved = [numKinds]*formState{}
	return c
}

// ToolsAsked tells the composer that request id asks tools/list: its
// answer lists the tools (whoever sent it: on connecting, or a raw one).
func (c Model) ToolsAsked(id wire.ID) Model {
	c.toolsReq = id
	return c
}

// LogLevel is the level requests ask the server to log at now ("": none):
// the last one sent from the composer, else the one it was made with.
func (c Model) LogLevel() string { return c.logLevel }

// loadDefaults takes the tracker's settings the first time.
func (c *Model) loadDefaults(env screen.Env) {
	if c.timeout != 0 {
		return
	}
	cfg := env.Tracker.Config()
	c.timeout, c.maxTimeout, c.lateWindow = cfg.DefaultTimeout, cfg.MaxTimeout, cfg.LateWindow
	if cfg.ResetOnProgress != nil {
		c.reset = *cfg.ResetOnProgress
	}
}

// Open starts composing, on the kind's list when it has one, else in the
// first field of its form.
//
// It always opens on the tool call, whatever kind was sent last: what the
// user types next goes into the first field, and a tool's name typed into
// the raw kind's method field would be sent as a request of that method.
// Repeating the last request of another kind is r or E.
func (c Model) Open(env screen.Env) (Model, screen.Action) {
	c.loadDefaults(env)
	c.kind = KindTool
	c.saved = [numKinds]*formState{}
	c.note = ""
	for k := range c.pickers {
		c.pickers[k].filter.SetValue("")
	}
	act := c.enterKind(env)
	return c, act
}

// enterKind shows the current kind afresh: its list, or its form with the
// focus in the first field (what is typed goes where it shows).
func (c *Model) enterKind(env screen.Env) screen.Action {
	c.formState = formState{}
	fetch := c.fetchFor(env, c.kind)
	if c.kind.hasPicker() && c.lacks(env, c.kind) == "" {
		c.step = stepPick
		return fetch
	}
	return batch(fetch, run(c.buildForm(env)))
}

// switchKind moves to the next or previous kind, keeping the form left.
func (c *Model) switchKind(env screen.Env, d int) screen.Action {
	s := c.formState
	c.saved[c.kind] = &s
	c.kind = Kind((int(c.kind) + d + int(numKinds)) % int(numKinds))
	if s := c.saved[c.kind]; s != nil {
		c.formState = *s
		return c.fetchFor(env, c.kind) // if this connection has not asked yet
	}
	return c.enterKind(env)
}

// toKindRow moves the focus to the row of kinds.
func (c *Model) toKindRow() {
	for j := range c.fields {
		c.fields[j].Input.Blur()
	}
	c.kindRow = true
}

// numSettings is how many setting fields every form ends with.
const numSettings = 5

// buildForm lays out the form for the current kind (and its choice).
func (c *Model) buildForm(env screen.Env) tea.Cmd {
	c.step = stepForm
	c.editOf = ""
	c.focus = 0
	c.kindRow = false
	c.touched = false
	c.jsonMode = false
	c.err = ""
	c.warn = ""
	c.asTask = false
	// The demo's resource and prompt make ready examples; another server's
	// are its own, so its fields start empty.
	info, _ := env.Tracker.Conn()
	demo := info.ServerName == DemoServerName
	c.legacy = info.Era == event.EraLegacy
	c.fields = append(c.kindFields(demo), c.settingFields()...)
	c.checkArgs()
	return c.focusField(0)
}

// kindFields are the current kind's own fields (demo: the server is
// inflight's demo, whose resource and prompt make ready examples).
func (c *Model) kindFields(demo bool) []schemaform.Field {
	switch c.kind {
	case KindTool:
		if t, ok := c.tool(); ok {
			return schemaform.Fields(t.Form.Params)
		}
	case KindResource:
		return c.resourceFields(demo)
	case KindPrompt:
		return c.promptFields(demo)
	case KindListen:
		fields := []schemaform.Field{
			schemaform.BoolField("toolsListChanged", false), schemaform.BoolField("promptsListChanged", false), schemaform.BoolField("resourcesListChanged", false),
			schemaform.TextField("resourceSubscriptions", "string", false, "e.g. file:///a, file:///b", "comma-separated resource URIs"),
		}
		if demo {
			fields[3].Input.SetValue("demo://clock")
		}
		return fields
	case KindRaw:
		return []schemaform.Field{
			example(schemaform.TextField("method", "string", true, "tools/list", "any JSON-RPC method")),
			schemaform.TextField("params", "json", false, `{}`, "a JSON object (protocol _meta is added for you)"),
		}
	}
	return nil
}

// resourceFields are a template's variables, the chosen resource's URI,
// or a URI to type.
func (c *Model) resourceFields(demo bool) []schemaform.Field {
	switch {
	case c.res != nil && c.res.template != "":
		var fields []schemaform.Field
		for _, v := range c.res.vars {
			fields = append(fields, schemaform.TextField(v.name, "string", !v.optional(), "", "a variable of the template"))
		}
		return fields
	case c.res != nil:
		uri := schemaform.TextField("uri", "string", true, "", "the resource URI")
		uri.Input.SetValue(c.res.URI)
		return []schemaform.Field{uri}
	case demo:
		return []schemaform.Field{example(schemaform.TextField("uri", "string", true, "demo://clock", "the resource URI"))}
	}
	return []schemaform.Field{schemaform.TextField("uri", "string", true, "e.g. file:///path/to/file", "the resource URI")}
}

// promptFields are the chosen prompt's arguments, or a name and JSON
// arguments to type.
func (c *Model) promptFields(demo bool) []schemaform.Field {
	if c.prompt != nil {
		var fields []schemaform.Field
		for _, a := range c.prompt.Args {
			fields = append(fields, schemaform.TextField(a.Name, "string", a.Required, "", a.Description))
		}
		return fields
	}
	name := schemaform.TextField("name", "string", true, "the prompt's name", "the prompt name")
	argsHint := `e.g. {"name":"value"}`
	if demo {
		name = example(schemaform.TextField("name", "string", true, "explain_cancellation", "the prompt name"))
		argsHint = `{"transport":"stdio"}`
	}
	return []schemaform.Field{name, schemaform.TextField("arguments", "json", false, argsHint, "a JSON object of string arguments")}
}

// settingFields are this request's timeouts, late window and log level,
// which every form ends with (numSettings of them).
func (c *Model) settingFields() []schemaform.Field {
	return []schemaform.Field{
		schemaform.TextField("timeout", "duration", false, fmtSetting(c.timeout), "this request's timeout"),
		schemaform.TextField("late window", "duration", false, fmtSetting(c.lateWindow), "how long to watch for late traffic after a cancel"),
		schemaform.BoolField("reset timeout on progress", c.reset),
		schemaform.TextField("max timeout", "duration", false, fmtSetting(c.maxTimeout), "never exceeded, whatever the progress"),
		schemaform.TextField("log level", "string", false, fmtLogLevel(c.logLevel), "the server's log lines for this request: debug…emergency, or none"),
	}
}

// checkArgs checks a tool call's arguments against the tool's schema as
// they stand, for the form to warn (an argument the form cannot read yet
// is told by err when sending, not here).
func (c *Model) checkArgs() {
	c.warn = ""
	t, ok := c.tool()
	if c.kind != KindTool || c.step != stepForm || !ok {
		return
	}
	args, err := c.toolArgs()
	if err != nil {
		return
	}
	if err := t.Form.Validate(args); err != nil {
		c.warn = err.Error()
	}
}

// toolArgs are the arguments of a tool call, from the form or the JSON.
func (c *Model) toolArgs() (map[string]json.RawMessage, error) {
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

// example marks a field's placeholder as the value sent when it is left
// empty.
func example(f schemaform.Field) schemaform.Field {
	f.Example = true
	return f
}

// tool is the tool the tool picker has selected.
func (c *Model) tool() (Tool, bool) {
	i := c.pickers[KindTool].selected(c.items(KindTool))
	if i < 0 || i >= len(c.tools) {
		return Tool{}, false
	}
	return c.tools[i], true
}

// items are the rows of kind's picker.
func (c *Model) items(kind Kind) []pickItem {
	var out []pickItem
	switch kind {
	case KindTool:
		for _, t := range c.tools {
			out = append(out, pickItem{name: t.Name, desc: t.Description})
		}
	case KindResource:
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
	case KindPrompt:
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
func (c *Model) settingsStart() int { return len(c.fields) - numSettings }

func (c *Model) focusField(i int) tea.Cmd {
	if len(c.fields) == 0 {
		return nil
	}
	i = (i + len(c.fields)) % len(c.fields)
	for j := range c.fields {
		c.fields[j].Input.Blur()
	}
	c.focus = i
	c.kindRow = false
	if !c.fields[i].IsBool {
		return c.fields[i].Input.Focus()
	}
	return nil
}

// kindKeys reports whether ←/→ switch kinds now: on a list, on the row of
// kinds, and in a form not yet changed whose focused field has no text for
// them to move through.
func (c *Model) kindKeys() bool {
	if c.step == stepPick || c.kindRow {
		return true
	}
	if c.jsonMode || c.touched || c.focus >= len(c.fields) {
		return false
	}
	f := &c.fields[c.focus]
	// A picker's ←/→ move through its choices.
	return f.IsBool || (!f.IsChoice() && f.Input.Value() == "")
}

// backToPicker reports whether esc in the form goes back to the kind's list.
func (c *Model) backToPicker(env screen.Env) bool {
	switch c.kind {
	case KindTool:
		return len(c.tools) > 0
	case KindResource, KindPrompt:
		return c.lacks(env, c.kind) == ""
	}
	return false
}

// Layout sizes the form's inputs and the JSON editor to the width, for
// View to draw (View changes nothing).
func (c Model) Layout(width int) Model {
	for i := range c.fields {
		if !c.fields[i].IsBool {
			c.fields[i].Input.SetWidth(max(10, min(40, width-schemaform.LabelWidth-30)))
		}
	}
	for k := range c.pickers {
		c.pickers[k].filter.SetWidth(max(10, min(40, width-44)))
	}
	if c.jsonMode {
		c.json.SetWidth(min(80, width-4))
	}
	return c
}
