package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/schemaform"
	"inflight/wire"
)

// edit opens the selected request in the composer, its method, arguments
// and settings filled in, to change and send as a new request (r sends it
// again as it is).
func (m *Model) edit() tea.Cmd {
	r, params, ok := m.selectedToSendAgain()
	if !ok {
		return nil
	}
	m.mode = keymap.ModeComposer
	// The composer says what is edited, in the form it fills: a status
	// line would outlive it.
	m.status = statusLine{}
	return m.composer.edit(m, r, params)
}

// selectedToSendAgain is the selected request with the params it would be
// sent again with (r, E); its bytes gone from the store, that is said.
func (m *Model) selectedToSendAgain() (*session.Request, json.RawMessage, bool) {
	r, ok := m.selectedRequest()
	if !ok {
		return nil, nil, false
	}
	raw, ok := m.tracker.RawRequest(r.ID)
	if !ok {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: its bytes are no longer in the store; compose it again with n", r.ID))
		return nil, nil, false
	}
	return r, paramsForReissue(raw), true
}

// edit fills the composer from a request: the form of its kind when the
// form can hold its params, else the JSON (a tool call's arguments) or the
// raw request.
func (c *composer) edit(m *Model, r *session.Request, params json.RawMessage) tea.Cmd {
	c.loadDefaults(m)
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
	str := func(key string) (string, bool) {
		var s string
		err := json.Unmarshal(obj[key], &s)
		return s, err == nil
	}
	done := false
	switch r.Method {
	case wire.MethodToolsCall:
		name, ok := str("name")
		if !ok {
			break
		}
		for i, t := range c.tools {
			if t.Name != name {
				continue
			}
			args := map[string]json.RawMessage{}
			if a := obj["arguments"]; len(a) > 0 && string(a) != "null" {
				if json.Unmarshal(a, &args) != nil {
					break // not an object: the raw request shows it as it was
				}
			}
			c.kind = kindTool
			c.pickers[kindTool].sel = i
			c.buildForm(m)
			// A call sent as a task is edited as one.
			_, c.asTask = obj["task"]
			if c.formHolds(args) {
				c.fillForm(args)
			} else {
				b, _ := json.MarshalIndent(args, "", "  ")
				c.openJSON(b)
			}
			done = true
			break
		}
	case wire.MethodResourcesRead:
		if uri, ok := str("uri"); ok && len(obj) == 1 {
			c.kind = kindResource
			c.buildForm(m)
			c.fields[0].Input.SetValue(uri)
			done = true
		}
	case wire.MethodPromptsGet:
		name, ok := str("name")
		if !ok {
			break
		}
		args := map[string]string{}
		if a := obj["arguments"]; len(a) > 0 && string(a) != "null" && json.Unmarshal(a, &args) != nil {
			break
		}
		c.kind = kindPrompt
		for i := range c.cat.prompts {
			if c.cat.prompts[i].Name == name {
				p := c.cat.prompts[i]
				c.prompt = &p
			}
		}
		if c.prompt != nil && c.promptHolds(args) {
			c.buildForm(m)
			for i := 0; i < c.settingsStart(); i++ {
				c.fields[i].Input.SetValue(args[c.fields[i].Name])
			}
		} else {
			c.prompt = nil
			c.buildForm(m)
			c.fields[0].Input.SetValue(name)
			if len(args) > 0 {
				b, _ := json.Marshal(args)
				c.fields[1].Input.SetValue(string(b))
			}
		}
		done = true
	case wire.MethodSubscriptionsListen:
		var p struct {
			Notifications map[string]json.RawMessage `json:"notifications"`
		}
		if json.Unmarshal(params, &p) != nil || len(obj) != 1 {
			break
		}
		c.kind = kindListen
		c.buildForm(m)
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
		done = holds
	}
	if !done {
		// Anything the forms cannot hold is edited as what it is: a
		// method and its params.
		c.kind = kindRaw
		c.res, c.prompt = nil, nil
		c.buildForm(m)
		c.fields[0].Input.SetValue(r.Method)
		if len(params) > 0 {
			c.fields[1].Input.SetValue(string(params))
		}
	}
	// Its own settings, as it began (not a timeout shortened with - since).
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
	c.touched = true
	c.editOf = fmt.Sprintf("#%s %s", r.ID, r.Method)
	c.checkArgs()
	if c.jsonMode {
		return c.json.Focus()
	}
	return c.focusField(0)
}

// formHolds reports whether the tool form's fields can hold args exactly:
// every argument has a field, of a type the field writes back the same.
func (c *composer) formHolds(args map[string]json.RawMessage) bool {
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
func (c *composer) promptHolds(args map[string]string) bool {
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

func (c *composer) fieldNamed(name string) *schemaform.Field {
	for i := 0; i < c.settingsStart(); i++ {
		if c.fields[i].Name == name {
			return &c.fields[i]
		}
	}
	return nil
}
