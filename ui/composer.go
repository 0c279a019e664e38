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
	"charm.land/lipgloss/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/wire"
)

// toolInfo is one tool from tools/list (strings raw; sanitise to show).
type toolInfo struct {
	Name        string
	Description string
	Schema      json.RawMessage
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
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return nil
	}
	out := make([]toolInfo, 0, len(res.Tools))
	for _, t := range res.Tools {
		out = append(out, toolInfo{Name: t.Name, Description: t.Description, Schema: t.InputSchema, form: readSchema(t.InputSchema, line)})
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

type composerStep uint8

const (
	stepPick composerStep = iota // choosing a tool
	stepForm                     // filling the fields
)

// field is one input of the form.
type field struct {
	name     string
	typ      string // string, integer, number, boolean, json
	required bool
	hint     string
	input    textinput.Model
	on       bool // booleans
	isBool   bool
	// fallback: the placeholder is a real example, sent when the field is
	// left empty (the demo's resource and prompt, the raw method).
	fallback bool
}

// composer builds a request: pick a tool (with its description and input
// schema) and fill a form built from the schema's simple types — or edit
// the arguments as JSON — then set this request's timeouts and send.
type composer struct {
	keys    keymap.ComposerKeyMap
	kind    composeKind
	step    composerStep
	tools   []toolInfo
	toolSel int

	fields []field // the kind's own fields, then the timeout settings
	focus  int
	// kindRow: the focus is on the row of kinds (←/→ switch kinds there;
	// in a text field they move the cursor).
	kindRow  bool
	jsonMode bool
	json     textarea.Model
	err      string
	// warn says why the tool's schema refuses the arguments as they stand,
	// checked in Update whenever they change. It warns and does not block:
	// sending a server what its schema forbids is a fair probe.
	warn string

	// Defaults for the next requests; a sent request's settings become them.
	timeout, maxTimeout time.Duration
	reset               bool
}

func newComposer() composer {
	return composer{keys: keymap.DefaultComposer(), reset: true}
}

func (c *composer) setTools(tools []toolInfo) {
	prev, had := c.tool()
	c.tools = tools
	c.toolSel = 0
	for i, t := range tools {
		// Keep the tool the user had chosen; on first sight preselect the
		// demo's slow tool, the one that shows cancellation best.
		if (had && t.Name == prev.Name) || (!had && t.Name == "slow") {
			c.toolSel = i
		}
	}
}

// open starts composing, on the tool list when the server has tools.
func (c *composer) open(m *Model) tea.Cmd {
	if c.timeout == 0 {
		cfg := m.tracker.Config()
		c.timeout, c.maxTimeout = cfg.DefaultTimeout, cfg.MaxTimeout
		if cfg.ResetOnProgress != nil {
			c.reset = *cfg.ResetOnProgress
		}
	}
	c.err = ""
	c.jsonMode = false
	if c.kind == kindTool {
		c.step = stepPick
		return nil
	}
	cmd := c.buildForm(m)
	c.toKindRow()
	return cmd
}

// toKindRow moves the focus to the row of kinds.
func (c *composer) toKindRow() {
	for j := range c.fields {
		c.fields[j].input.Blur()
	}
	c.kindRow = true
}

// buildForm lays out the form for the current kind (and tool).
func (c *composer) buildForm(m *Model) tea.Cmd {
	c.step = stepForm
	c.focus = 0
	c.kindRow = false
	c.jsonMode = false
	c.err = ""
	c.warn = ""
	c.fields = nil
	// The demo's resource and prompt make ready examples; another server's
	// are its own, so its fields start empty.
	info, _ := m.tracker.Conn()
	demo := info.ServerName == demoServerName
	switch c.kind {
	case kindTool:
		if t, ok := c.tool(); ok {
			c.fields = formFields(t.form.params)
		}
	case kindResource:
		uri := textField("uri", "string", true, "e.g. file:///path/to/file", "the resource URI")
		if demo {
			uri = example(textField("uri", "string", true, "demo://clock", "the resource URI"))
		}
		c.fields = []field{uri}
	case kindPrompt:
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
		boolField("reset timeout on progress", c.reset),
		textField("max timeout", "duration", false, fmtSetting(c.maxTimeout), "never exceeded, whatever the progress"),
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
	in := newTextInput()
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

func (c *composer) tool() (toolInfo, bool) {
	if c.toolSel < 0 || c.toolSel >= len(c.tools) {
		return toolInfo{}, false
	}
	return c.tools[c.toolSel], true
}

// settingsStart is the index of the first timeout setting field.
func (c *composer) settingsStart() int { return len(c.fields) - 3 }

func (c *composer) focusField(i int) tea.Cmd {
	if len(c.fields) == 0 {
		return nil
	}
	i = (i + len(c.fields)) % len(c.fields)
	for j := range c.fields {
		c.fields[j].input.Blur()
	}
	c.focus = i
	if !c.fields[i].isBool {
		return c.fields[i].input.Focus()
	}
	return nil
}

// update handles a message while the composer is open.
func (c *composer) update(m *Model, msg tea.Msg) tea.Cmd {
	k := c.keys
	kp, isKey := msg.(tea.KeyPressMsg)
	if isKey && key.Matches(kp, k.Back) {
		if c.step == stepForm && c.kind == kindTool && len(c.tools) > 0 {
			c.step = stepPick
			c.err = ""
			return nil
		}
		m.mode = keymap.ModeList
		return nil
	}
	if isKey && (key.Matches(kp, k.NextKind) || key.Matches(kp, k.PrevKind)) && (c.step == stepPick || c.kindRow) {
		d := 1
		if key.Matches(kp, k.PrevKind) {
			d = -1
		}
		c.kind = composeKind((int(c.kind) + d + int(numKinds)) % int(numKinds))
		if c.kind == kindTool {
			// Back on the tool list: its keys pick a tool, not a field.
			c.step, c.kindRow = stepPick, false
			return nil
		}
		cmd := c.buildForm(m)
		c.toKindRow()
		return cmd
	}
	if isKey && c.kindRow {
		switch {
		case key.Matches(kp, k.Send), key.Matches(kp, k.Select):
			return c.send(m)
		case key.Matches(kp, k.NextField), key.Matches(kp, k.Down):
			c.kindRow = false
			return c.focusField(0)
		case key.Matches(kp, k.PrevField), key.Matches(kp, k.Up):
			c.kindRow = false
			return c.focusField(len(c.fields) - 1)
		}
		return nil
	}
	if c.step == stepPick {
		if !isKey {
			return nil
		}
		switch {
		case key.Matches(kp, k.Up):
			c.toolSel = max(0, c.toolSel-1)
		case key.Matches(kp, k.Down):
			c.toolSel = min(len(c.tools)-1, c.toolSel+1)
		case key.Matches(kp, k.Select):
			if len(c.tools) > 0 {
				return c.buildForm(m)
			}
		case key.Matches(kp, k.Send):
			if len(c.tools) > 0 {
				c.buildForm(m)
				return c.send(m)
			}
		}
		return nil
	}
	if isKey {
		switch {
		case key.Matches(kp, k.Send), key.Matches(kp, k.Select) && !c.jsonMode:
			return c.send(m)
		case key.Matches(kp, k.JSONMode) && c.kind == kindTool:
			return c.toggleJSON()
		case (key.Matches(kp, k.NextField) || key.Matches(kp, k.Down)) && !c.jsonMode:
			if c.kind != kindTool && c.focus == len(c.fields)-1 {
				c.toKindRow()
				return nil
			}
			return c.focusField(c.focus + 1)
		case (key.Matches(kp, k.PrevField) || key.Matches(kp, k.Up)) && !c.jsonMode:
			if c.kind != kindTool && c.focus == 0 {
				c.toKindRow()
				return nil
			}
			return c.focusField(c.focus - 1)
		case key.Matches(kp, k.Toggle) && !c.jsonMode && c.focus < len(c.fields) && c.fields[c.focus].isBool:
			c.fields[c.focus].on = !c.fields[c.focus].on
			c.checkArgs()
			return nil
		}
	}
	if c.jsonMode {
		var cmd tea.Cmd
		c.json, cmd = c.json.Update(msg)
		c.err = ""
		if _, err := jsonObject(c.json.Value()); err != nil {
			c.err = err.Error()
		}
		c.checkArgs()
		return cmd
	}
	if c.focus < len(c.fields) && !c.fields[c.focus].isBool {
		var cmd tea.Cmd
		c.fields[c.focus].input, cmd = c.fields[c.focus].input.Update(msg)
		c.err = ""
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
		ta := newTextArea()
		ta.ShowLineNumbers = false
		ta.SetWidth(60)
		ta.SetHeight(8)
		// The keys are the schema's property names: Go's encoder leaves
		// their C1 and bidi controls raw, so they are escaped for the
		// editor (the JSON means the same).
		ta.SetValue(string(termsafe.EscapeJSON(b)))
		c.json = ta
		c.jsonMode = true
		c.err = ""
		c.checkArgs()
		return c.json.Focus()
	}
	args, err := jsonObject(c.json.Value())
	if err != nil {
		c.err = "fix the JSON first: " + err.Error()
		return nil
	}
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
	c.jsonMode = false
	c.checkArgs()
	return c.focusField(0)
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

// settings reads the timeout fields, remembering them as the defaults for
// the next requests.
func (c *composer) settings() (session.RequestOptions, error) {
	i := c.settingsStart()
	parse := func(f *field, def time.Duration) (time.Duration, error) {
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
	timeout, err := parse(&c.fields[i], c.timeout)
	if err != nil {
		return session.RequestOptions{}, err
	}
	maxTimeout, err := parse(&c.fields[i+2], c.maxTimeout)
	if err != nil {
		return session.RequestOptions{}, err
	}
	if timeout > maxTimeout {
		return session.RequestOptions{}, fmt.Errorf("the timeout (%s) exceeds the max timeout (%s)", timeout, maxTimeout)
	}
	reset := c.fields[i+1].on
	c.timeout, c.maxTimeout, c.reset = timeout, maxTimeout, reset
	return session.RequestOptions{Timeout: timeout, MaxTimeout: maxTimeout, ResetOnProgress: &reset}, nil
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
	m.list.follow = true
	cmd := m.send(method, params, opts)
	if c.kind == kindTool && c.warn != "" {
		// The schema's objection goes with it: the answer may be about it.
		m.setStatus(levelWarn, fmt.Sprintf("sent #%s %s although %s — press c to cancel it", m.list.selected, method, c.warn))
	} else {
		m.setStatus(levelInfo, fmt.Sprintf("sent #%s %s — press c to cancel it", m.list.selected, method))
	}
	m.status.about = m.list.selected
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
		params, _ := json.Marshal(map[string]any{"name": t.Name, "arguments": args})
		return wire.MethodToolsCall, params, nil
	case kindResource:
		uri, err := str(0)
		if err != nil {
			return "", nil, err
		}
		params, _ := json.Marshal(map[string]string{"uri": uri})
		return wire.MethodResourcesRead, params, nil
	case kindPrompt:
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
	if c.jsonMode {
		c.json.SetWidth(min(80, width-4))
	}
}

// view draws the composer.
func (c *composer) view(m *Model, height int) string {
	st := m.styles
	var b strings.Builder
	// Kind tabs.
	var tabs []string
	for k := composeKind(0); k < numKinds; k++ {
		name := " " + kindNames[k] + " "
		if m.width < 100 {
			name = " " + kindShort[k] + " "
		}
		if k == c.kind {
			tabs = append(tabs, st.Selected.Inherit(st.Bold).Render(name))
		} else {
			tabs = append(tabs, st.Dim.Render(name))
		}
	}
	marker := "  "
	if c.kindRow || c.step == stepPick {
		marker = st.Cursor.Render("▌ ")
	}
	b.WriteString(fit(marker+st.Title.Render("NEW REQUEST ")+strings.Join(tabs, st.Dim.Render("│")), m.width))
	b.WriteString("\n")
	hint := "  ←/→ kind · ↓ fields · enter send · esc back"
	if c.step == stepPick {
		hint = "  ↑/↓ tool · ←/→ kind · enter choose · ctrl+s send with defaults · esc back"
	}
	if !c.kindRow && c.step == stepForm {
		hint = "  tab/↓ next field · ↑ previous · enter send · esc back"
		if c.kind == kindTool {
			hint += " · ctrl+e form ⇄ JSON"
		} else {
			hint += " · ↑ from the first field: kinds"
		}
		if c.jsonMode {
			// The editor keeps enter and tab for itself; the timeouts are
			// set in the form.
			hint = "  JSON: enter new line · ctrl+s send · ctrl+e form and timeouts · esc back"
		}
	}
	b.WriteString(st.Dim.Render(fit(hint, m.width)))
	b.WriteString("\n\n")
	lines := 3
	if c.step == stepPick {
		b.WriteString(c.viewPick(m, height-lines))
		return b.String()
	}
	if c.kind == kindTool {
		if t, ok := c.tool(); ok {
			b.WriteString(fit("  "+st.Bold.Render(m.line(t.Name))+"  "+st.Dim.Render(m.line(t.Description)), m.width))
			b.WriteString("\n\n")
		}
	}
	if c.kind == kindListen && m.tracker.Era().String() == "legacy" {
		b.WriteString(st.Warn.Render(fit("  this server is legacy: subscriptions/listen is a 2026-07-28 method, expect an error", m.width)) + "\n\n")
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
		}
		if t, ok := c.tool(); ok && c.kind == kindTool && t.form.note != "" {
			b.WriteString(st.Warn.Render(fit("  "+m.line(t.form.note), m.width)) + "\n")
		} else if len(c.fields) == 3 && c.kind == kindTool {
			b.WriteString(st.Dim.Render("  (this tool takes no arguments)") + "\n")
		}
	}
	switch {
	case c.err != "":
		// Errors name the fields, whose names are the server's.
		b.WriteString("\n" + st.Error.Render(fit("  ✗ "+m.line(c.err), m.width)) + "\n")
	case c.warn != "":
		// So do the schema's objections, and they quote its values.
		anyway := " (enter sends it anyway)"
		if c.jsonMode {
			anyway = " (ctrl+s sends it anyway)"
		}
		b.WriteString("\n" + st.Warn.Render(fit("  ! "+m.line(c.warn)+anyway, m.width)) + "\n")
	}
	return b.String()
}

func (c *composer) fieldLine(m *Model, i int) string {
	st := m.styles
	f := &c.fields[i]
	cursor := "  "
	if i == c.focus && !c.jsonMode && !c.kindRow {
		cursor = st.Cursor.Render("▌ ")
	}
	// The name of a schema's property is the server's string.
	label := m.line(f.name)
	if f.required {
		label += "*"
	}
	labelW := fieldLabelWidth
	var value string
	if f.isBool {
		box := "[ ]"
		if f.on {
			box = "[x]"
		}
		value = box + st.Dim.Render("  space toggles")
	} else {
		value = f.input.View()
	}
	hint := ""
	if f.typ != "" && !f.isBool {
		hint = st.Dim.Render("  " + f.typ)
	}
	if f.hint != "" {
		hint += st.Dim.Render(" · " + f.hint)
	}
	return fit(cursor+fit(label, labelW)+value+hint, m.width)
}

func (c *composer) viewPick(m *Model, height int) string {
	st := m.styles
	var b strings.Builder
	if len(c.tools) == 0 {
		if r, ok := m.tracker.Get(m.toolsReq); ok && r.IsActive() {
			return st.Dim.Render("  " + spinnerAt(m.now()) + " asking the server for its tools (tools/list)…")
		}
		return st.Dim.Render("  The server listed no tools. Use → to send another kind of request.")
	}
	listH := max(3, height-6)
	start := 0
	if c.toolSel >= listH {
		start = c.toolSel - listH + 1
	}
	for i := start; i < len(c.tools) && i < start+listH; i++ {
		t := c.tools[i]
		name := fit(m.line(t.Name), 20)
		desc := st.Dim.Render(m.line(t.Description))
		if i == c.toolSel {
			b.WriteString(st.Selected.Render(fit(st.Cursor.Render("▌ ")+st.Bold.Render(name)+" "+desc, m.width)))
		} else {
			b.WriteString(fit("  "+name+" "+desc, m.width))
		}
		b.WriteByte('\n')
	}
	if t, ok := c.tool(); ok {
		desc := lipgloss.NewStyle().Width(max(20, m.width-4)).Render(m.line(t.Description))
		b.WriteString("\n")
		for _, l := range strings.Split(desc, "\n") {
			b.WriteString("  " + l + "\n")
		}
		if len(t.Schema) > 0 {
			// The arguments as the form will ask for them, rather than the
			// schema's JSON cut at the screen's edge.
			var args []string
			for _, p := range t.form.params {
				a := m.line(p.name)
				if p.required {
					a += "*"
				}
				a += " (" + p.typ
				if p.def != "" && p.typ != "boolean" {
					a += ", default " + p.def
				}
				args = append(args, a+")")
			}
			text := "takes no arguments"
			switch {
			case len(args) > 0 && t.form.note != "":
				text = "arguments: " + strings.Join(args, " · ") + " · " + t.form.note
			case len(args) > 0:
				text = "arguments: " + strings.Join(args, " · ")
			case t.form.note != "":
				text = t.form.note
			}
			wrapped := lipgloss.NewStyle().Width(max(20, m.width-4)).Render(text)
			for _, l := range strings.Split(wrapped, "\n") {
				b.WriteString(st.Dim.Render("  "+l) + "\n")
			}
		}
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
