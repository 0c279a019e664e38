package composer

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"inflight/session"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/wire"
)

// parseSetting reads a duration field: a bare number is seconds; empty
// is def.
func parseSetting(f *schemaform.Field, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(f.Input.Value())
	if v == "" {
		return def, nil
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		// A bare number is seconds.
		if !(n > 0) {
			return 0, fmt.Errorf("%s: %q must be longer than zero (try 30s or 2m)", f.Name, v)
		}
		if math.IsInf(n, 0) || n > 1e9 {
			return 0, fmt.Errorf("%s: %q seconds is too long (try 30s or 2m)", f.Name, v)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration (try 30s or 2m)", f.Name, v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: %q must be longer than zero (try 30s or 2m)", f.Name, v)
	}
	return d, nil
}

// settings reads the timeout fields, remembering them as the defaults for
// the next requests.
func (c *Model) settings() (session.RequestOptions, error) {
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
	if v := c.fields[i+4].Input.Value(); strings.TrimSpace(v) != "" {
		if level, err = ParseLogLevel(v); err != nil {
			return session.RequestOptions{}, err
		}
	}
	c.logLevel = level
	reset := c.fields[i+2].On
	c.timeout, c.maxTimeout, c.lateWindow, c.reset = timeout, maxTimeout, late, reset
	return session.RequestOptions{Timeout: timeout, MaxTimeout: maxTimeout, ResetOnProgress: &reset, LateWindow: late}, nil
}

// send validates the form and asks the root to send the request.
func (c *Model) send() screen.Action {
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
	s := Send{Method: method, Params: params, Options: opts, LogLevel: c.logLevel}
	if c.kind == KindTool {
		// The schema's objection goes with it: the answer may be about it.
		s.Objection = c.warn
	}
	// The next time the composer opens, it opens afresh.
	c.saved = [numKinds]*formState{}
	return s
}

// request builds the method and params of the composed request.
func (c *Model) request() (string, json.RawMessage, error) {
	switch c.kind {
	case KindTool:
		return c.toolRequest()
	case KindResource:
		return c.resourceRequest()
	case KindPrompt:
		return c.promptRequest()
	case KindListen:
		return c.listenRequest()
	case KindRaw:
		return c.rawRequest()
	}
	return "", nil, fmt.Errorf("unknown kind")
}

// text is field i's text as it is sent: trimmed, its example when left
// empty, an error when it is required and empty.
func (c *Model) text(i int) (string, error) {
	f := &c.fields[i]
	v := strings.TrimSpace(f.Input.Value())
	if v == "" && f.Example {
		v = f.Input.Placeholder
	}
	if v == "" && f.Required {
		return "", fmt.Errorf("%s is required", f.Name)
	}
	return v, nil
}

// toolRequest is a tools/call of the chosen tool.
func (c *Model) toolRequest() (string, json.RawMessage, error) {
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
}

// resourceRequest is a resources/read of the URI typed, chosen or made
// from the template.
func (c *Model) resourceRequest() (string, json.RawMessage, error) {
	var uri string
	var err error
	if c.res != nil && c.res.template != "" {
		uri, err = c.templateURI()
	} else {
		uri, err = c.text(0)
	}
	if err != nil {
		return "", nil, err
	}
	params, _ := json.Marshal(map[string]string{"uri": uri})
	return wire.MethodResourcesRead, params, nil
}

// promptRequest is a prompts/get of the chosen prompt with its form's
// arguments, or of the typed name with the typed JSON arguments.
func (c *Model) promptRequest() (string, json.RawMessage, error) {
	if c.prompt != nil {
		args := map[string]string{}
		for i := 0; i < c.settingsStart(); i++ {
			v, err := c.text(i)
			if err != nil {
				return "", nil, err
			}
			if v != "" {
				args[c.fields[i].Name] = v
			}
		}
		params, _ := json.Marshal(map[string]any{"name": c.prompt.Name, "arguments": args})
		return wire.MethodPromptsGet, params, nil
	}
	args, err := jsonObject(c.fields[1].Input.Value())
	if err != nil {
		return "", nil, fmt.Errorf("arguments: %v", err)
	}
	name, err := c.text(0)
	if err != nil {
		return "", nil, err
	}
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	return wire.MethodPromptsGet, params, nil
}

// listenRequest is a subscriptions/listen for the notifications checked
// and the resources listed.
func (c *Model) listenRequest() (string, json.RawMessage, error) {
	filter := map[string]any{}
	for i := 0; i < 3; i++ {
		if c.fields[i].On {
			filter[c.fields[i].Name] = true
		}
	}
	var uris []string
	for _, u := range strings.Split(c.fields[3].Input.Value(), ",") {
		if u = strings.TrimSpace(u); u != "" {
			uris = append(uris, u)
		}
	}
	if len(uris) > 0 {
		filter["resourceSubscriptions"] = uris
	}
	params, _ := json.Marshal(map[string]any{"notifications": filter})
	return wire.MethodSubscriptionsListen, params, nil
}

// rawRequest is the typed method with the typed params.
func (c *Model) rawRequest() (string, json.RawMessage, error) {
	method, err := c.text(0)
	if err != nil {
		return "", nil, err
	}
	p := strings.TrimSpace(c.fields[1].Input.Value())
	if p == "" {
		return method, nil, nil
	}
	if _, err := jsonObject(p); err != nil {
		return "", nil, fmt.Errorf("params: %v", err)
	}
	return method, json.RawMessage(p), nil
}

// templateURI expands the chosen template with the form's variables.
func (c *Model) templateURI() (string, error) {
	values := map[string]string{}
	for i := 0; i < c.settingsStart(); i++ {
		f := &c.fields[i]
		v := f.Input.Value()
		if v == "" && f.Required {
			return "", fmt.Errorf("%s is required", f.Name)
		}
		values[f.Name] = v
	}
	return expandTemplate(c.res.template, values), nil
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
func (c *Model) formArgs() (map[string]json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	for i := 0; i < c.settingsStart(); i++ {
		f := &c.fields[i]
		if f.IsBool {
			if f.On {
				args[f.Name] = json.RawMessage("true")
			} else if f.Required {
				args[f.Name] = json.RawMessage("false")
			}
			continue
		}
		v := strings.TrimSpace(f.Input.Value())
		if raw, ok, _ := f.Value(); v == "" && ok {
			args[f.Name] = raw // a choice made, or ticks
			continue
		}
		if v == "" {
			if f.Required && f.Example {
				v = f.Input.Placeholder
			} else if f.Required && c.kind == KindTool {
				return nil, fmt.Errorf("%s is required", f.Name)
			} else {
				continue
			}
		}
		raw, err := schemaform.JSONValue(f.Type, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.Name, err)
		}
		args[f.Name] = raw
	}
	return args, nil
}
