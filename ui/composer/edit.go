package composer

import (
	"encoding/json"
	"fmt"
	"strings"

	"inflight/session"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/wire"
)

// Edit fills the composer from a request r, sent with params: the form of
// its kind when the form can hold its params, else the JSON (a tool
// call's arguments) or the raw request, with r's own settings; enter sends
// it as a new request.
func (c Model) Edit(env screen.Env, r *session.Request, params json.RawMessage) (Model, screen.Action) {
	c.loadDefaults(env)
	c.saved = [numKinds]*formState{}
	c.note = ""
	for k := range c.pickers {
		c.pickers[k].filter.SetValue("")
	}
	c.formState = formState{}
	var obj map[string]json.RawMessage
	if len(params) > 0 && json.Unmarshal(params, &obj) != nil {
		obj = nil
	}
	if !c.editAs(env, r.Method, obj, params) {
		// Anything the forms cannot hold is edited as what it is: a
		// method and its params.
		c.kind = KindRaw
		c.res, c.prompt = nil, nil
		c.buildForm(env)
		c.fields[0].Input.SetValue(r.Method)
		if len(params) > 0 {
			c.fields[1].Input.SetValue(string(params))
		}
	}
	c.editSettings(r)
	c.touched = true
	c.editOf = fmt.Sprintf("#%s %s", r.ID, r.Method)
	c.checkArgs()
	if c.jsonMode {
		return c, run(c.json.Focus())
	}
	return c, run(c.focusField(0))
}

// editAs fills the form of method's kind from its params (obj, their
// object) and reports whether the form holds them.
func (c *Model) editAs(env screen.Env, method string, obj map[string]json.RawMessage, params json.RawMessage) bool {
	switch method {
	case wire.MethodToolsCall:
		return c.editTool(env, obj)
	case wire.MethodResourcesRead:
		if uri, ok := jsonString(obj, "uri"); ok && len(obj) == 1 {
			c.kind = KindResource
			c.buildForm(env)
			c.fields[0].Input.SetValue(uri)
			return true
		}
	case wire.MethodPromptsGet:
		return c.editPrompt(env, obj)
	case wire.MethodSubscriptionsListen:
		return c.editListen(env, obj, params)
	}
	return false
}

// jsonString is obj's member key when it is a string.
func jsonString(obj map[string]json.RawMessage, key string) (string, bool) {
	var s string
	err := json.Unmarshal(obj[key], &s)
	return s, err == nil
}

// editTool fills the form of a listed tool from a tools/call's params, or
// the JSON editor when the form cannot hold its arguments.
func (c *Model) editTool(env screen.Env, obj map[string]json.RawMessage) bool {
	name, ok := jsonString(obj, "name")
	if !ok {
		return false
	}
	for i, t := range c.tools {
		if t.Name != name {
			continue
		}
		args := map[string]json.RawMessage{}
		if a := obj["arguments"]; len(a) > 0 && string(a) != "null" {
			if json.Unmarshal(a, &args) != nil {
				return false // not an object: the raw request shows it as it was
			}
		}
		c.kind = KindTool
		c.pickers[KindTool].sel = i
		c.buildForm(env)
		// A call sent as a task is edited as one.
		_, c.asTask = obj["task"]
		if c.formHolds(args) {
			c.fillForm(args)
		} else {
			b, _ := json.MarshalIndent(args, "", "  ")
			c.openJSON(b)
		}
		return true
	}
	return false
}

// editPrompt fills the form of a listed prompt from a prompts/get's
// params, or the typed name and JSON arguments.
func (c *Model) editPrompt(env screen.Env, obj map[string]json.RawMessage) bool {
	name, ok := jsonString(obj, "name")
	if !ok {
		return false
	}
	args := map[string]string{}
	if a := obj["arguments"]; len(a) > 0 && string(a) != "null" && json.Unmarshal(a, &args) != nil {
		return false
	}
	c.kind = KindPrompt
	for i := range c.cat.prompts {
		if c.cat.prompts[i].Name == name {
			p := c.cat.prompts[i]
			c.prompt = &p
		}
	}
	if c.prompt != nil && c.promptHolds(args) {
		c.buildForm(env)
		for i := 0; i < c.settingsStart(); i++ {
			c.fields[i].Input.SetValue(args[c.fields[i].Name])
		}
		return true
	}
	c.prompt = nil
	c.buildForm(env)
	c.fields[0].Input.SetValue(name)
	if len(args) > 0 {
		b, _ := json.Marshal(args)
		c.fields[1].Input.SetValue(string(b))
	}
	return true
}

// editListen fills the listen form from a subscriptions/listen's params.
func (c *Model) editListen(env screen.Env, obj map[string]json.RawMessage, params json.RawMessage) bool {
	var p struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if json.Unmarshal(params, &p) != nil || len(obj) != 1 {
		return false
	}
	c.kind = KindListen
	c.buildForm(env)
	holds := true
	for k, v := range p.Notifications {
		switch k {
		case "toolsListChanged", "promptsListChanged", "resourcesListChanged":
			for i := 0; i < 3; i++ {
				if c.fields[i].Name == k {
					c.fields[i].On = string(v) == "true"
				}
			}
		case "resourceSubscriptions":
			var uris []string
			if json.Unmarshal(v, &uris) != nil {
				holds = false
			}
			c.fields[3].Input.SetValue(strings.Join(uris, ", "))
		default:
			holds = false
		}
	}
	return holds
}

// editSettings fills the setting fields with r's own settings, as it
// began (not a timeout shortened with - since).
func (c *Model) editSettings(r *session.Request) {
	i := c.settingsStart()
	asked := r.Timeout.Asked
	if asked == 0 {
		asked = r.Timeout.Timeout
	}
	if asked > 0 {
		c.fields[i].Input.SetValue(fmtSetting(asked))
	}
	if r.LateWindow > 0 {
		c.fields[i+1].Input.SetValue(fmtSetting(r.LateWindow))
	}
	c.fields[i+2].On = r.Timeout.ResetOnProgress
	if r.Timeout.Max > 0 {
		c.fields[i+3].Input.SetValue(fmtSetting(r.Timeout.Max))
	}
}

// formHolds reports whether the tool form's fields can hold args exactly:
// every argument has a field, of a type the field writes back the same.
func (c *Model) formHolds(args map[string]json.RawMessage) bool {
	for name, v := range args {
		f := c.fieldNamed(name)
		if f == nil {
			return false
		}
		var err error
		switch f.Type {
		case "boolean":
			var b bool
			err = json.Unmarshal(v, &b)
		case "string":
			var s string
			err = json.Unmarshal(v, &s)
			if err == nil && strings.TrimSpace(s) != s {
				return false // the form trims what it sends
			}
		case "integer", "number":
			var n json.Number
			err = json.Unmarshal(v, &n)
		}
		if err != nil {
			return false
		}
	}
	// A boolean left out and one set false read alike in the form.
	for i := 0; i < c.settingsStart(); i++ {
		f := &c.fields[i]
		if _, ok := args[f.Name]; !ok && f.IsBool && f.Required {
			return false
		}
	}
	return true
}

// promptHolds reports whether the chosen prompt's form holds args.
func (c *Model) promptHolds(args map[string]string) bool {
	for name, v := range args {
		found := false
		for _, a := range c.prompt.Args {
			found = found || a.Name == name
		}
		if !found || strings.TrimSpace(v) != v || v == "" {
			return false
		}
	}
	return true
}

func (c *Model) fieldNamed(name string) *schemaform.Field {
	for i := 0; i < c.settingsStart(); i++ {
		if c.fields[i].Name == name {
			return &c.fields[i]
		}
	}
	return nil
}
