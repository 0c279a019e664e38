package schemaform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"inflight/ui/look"
)

// LabelWidth is the column a form's labels take.
const LabelWidth = 28

// Field is one input of a form: a text field, a checkbox (IsBool), a
// picker (Choices) or a multi-select (Choices and Multi).
type Field struct {
	Name     string
	Type     string // string, integer, number, boolean, json, array, duration
	Required bool
	Hint     string
	Input    textinput.Model
	// On is a boolean's value; IsBool says the field is one (a checkbox).
	On     bool
	IsBool bool
	// Example: the placeholder is a real example, sent when the field is
	// left empty (the demo's resource and prompt, the raw method).
	Example bool

	// Default is the schema's default (nil: none). A text field shows it
	// as its placeholder, a picker or multi-select dimmed in place of a
	// choice: typing or choosing replaces it. Whoever reads the form says
	// whether an untouched field sends it (an answer does; a tool call
	// leaves it to the server).
	Default json.RawMessage
	// Cleared: the user cleared the field (Clear): it sends nothing, not
	// even its default, until something is typed or chosen again.
	Cleared bool

	// Choices are a picker's values (one is sent) or a multi-select's
	// (those ticked are sent, as an array: Multi).
	Choices []Choice
	Multi   bool
	// Pick is the picker's choice (-1: none chosen); Ticked the
	// multi-select's, once the user ticked any (nil before: the default
	// stands); At the option a multi-select's cursor is on.
	Pick   int
	Ticked []bool
	At     int

	// placeholder is the text field's own placeholder, shown again when a
	// cleared field is typed into.
	placeholder string
}

// TextField is a field the user types into.
func TextField(name, typ string, required bool, placeholder, hint string) Field {
	in := look.NewTextInput()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.CharLimit = 4096
	return Field{Name: name, Type: typ, Required: required, Hint: hint, Input: in, Pick: -1, placeholder: placeholder}
}

// BoolField is a checkbox.
func BoolField(name string, on bool) Field {
	return Field{Name: name, Type: "boolean", IsBool: true, On: on, Pick: -1}
}

// Fields are a form's inputs for a schema's parameters.
func Fields(params []Param) []Field {
	out := make([]Field, 0, len(params))
	for _, p := range params {
		if p.Type == "boolean" {
			f := BoolField(p.Name, p.Default == "true")
			f.Hint, f.Required = p.Hint, p.Required
			out = append(out, f)
			continue
		}
		placeholder := p.Default
		if len(p.Choices) > 0 {
			// A choice's default shows as its title, not in the input.
			placeholder = ""
		}
		f := TextField(p.Name, p.Type, p.Required, placeholder, p.Hint)
		f.Default, f.Choices, f.Multi = p.DefaultJSON, p.Choices, p.Multi
		out = append(out, f)
	}
	return out
}

// MarkDefault marks a text field's default as one, in words as well as
// dimmed (a plain terminal shows no dim): "3 (default)", for a form that
// sends it when the field is left empty.
func (f *Field) MarkDefault() {
	if f.Default == nil || f.IsBool || f.IsChoice() || f.placeholder == "" {
		return
	}
	f.placeholder += " (default)"
	f.Input.Placeholder = f.placeholder
}

// IsChoice reports whether the field is a picker or a multi-select, whose
// ←/→ move through its choices.
func (f *Field) IsChoice() bool { return len(f.Choices) > 0 }

// Move moves a picker's choice, or a multi-select's cursor, by d. A
// picker's first move starts from its default, and drops what was typed.
func (f *Field) Move(d int) {
	n := len(f.Choices)
	if n == 0 {
		return
	}
	if f.Multi {
		f.At = min(max(f.At+d, 0), n-1)
		return
	}
	if f.Pick < 0 {
		f.Pick = f.defaultPick()
		if f.Pick < 0 {
			f.Pick = 0
			if d < 0 {
				f.Pick = n - 1
			}
			f.choose()
			return
		}
	}
	f.Pick = (f.Pick + d + n) % n
	f.choose()
}

// choose notes that the user chose: what was typed and a clear go.
func (f *Field) choose() {
	f.Input.SetValue("")
	f.Cleared = false
}

// Toggle ticks or unticks the multi-select's option under the cursor; the
// first tick starts from the default's ticks (none when cleared).
func (f *Field) Toggle() {
	if !f.Multi || f.At >= len(f.Choices) {
		return
	}
	if f.Ticked == nil {
		f.Ticked = make([]bool, len(f.Choices))
		if !f.Cleared {
			for i := range f.Choices {
				f.Ticked[i] = f.inDefault(f.Choices[i].Value)
			}
		}
	}
	f.Ticked[f.At] = !f.Ticked[f.At]
	f.Cleared = false
}

// Clear empties the field: what was typed, chosen or ticked goes, and so
// does its default, which it no longer sends.
func (f *Field) Clear() {
	f.Input.SetValue("")
	f.Pick, f.Ticked, f.Cleared = -1, nil, true
	f.Input.Placeholder = nothingSent
}

// nothingSent is what a cleared field shows in place of a value.
const nothingSent = "(nothing sent)"

// Edit hands a message (a key, a paste) to the text input. Typing into a
// picker replaces its choice with the text (a value outside the list is a
// fair probe); typing after a clear undoes it.
func (f *Field) Edit(msg tea.Msg) tea.Cmd {
	before := f.Input.Value()
	var cmd tea.Cmd
	f.Input, cmd = f.Input.Update(msg)
	if v := f.Input.Value(); v != before && v != "" {
		f.Pick, f.Cleared = -1, false
		f.Input.Placeholder = f.placeholder
	}
	return cmd
}

// SetValue sets the field from a JSON value (a tool call edited again),
// and reports whether the field holds it exactly.
func (f *Field) SetValue(raw json.RawMessage) bool {
	switch {
	case f.IsBool:
		f.On = string(raw) == "true"
		return string(raw) == "true" || string(raw) == "false"
	case f.Multi:
		var vals []json.RawMessage
		if json.Unmarshal(raw, &vals) != nil {
			f.Input.SetValue(string(raw))
			return false
		}
		f.Ticked = make([]bool, len(f.Choices))
		for _, v := range vals {
			i := f.index(v)
			if i < 0 {
				// Not the multi-select's values: typed as JSON.
				f.Ticked = nil
				f.Input.SetValue(string(raw))
				return false
			}
			f.Ticked[i] = true
		}
		return true
	case f.IsChoice():
		if i := f.index(raw); i >= 0 {
			f.Pick = i
			f.choose()
			return true
		}
	}
	var s string
	if f.Type == "string" && json.Unmarshal(raw, &s) == nil {
		f.Input.SetValue(s)
	} else {
		f.Input.SetValue(string(raw))
	}
	return false
}

// Value is what the user gave the field, as JSON: the text typed (as its
// type says), the choice or the ticks; ok is false when the user gave
// nothing (the default, if any, stands unless the field was cleared).
func (f *Field) Value() (raw json.RawMessage, ok bool, err error) {
	if v := strings.TrimSpace(f.Input.Value()); v != "" {
		raw, err := JSONValue(f.Type, v)
		return raw, err == nil, err
	}
	switch {
	case f.Multi && f.Ticked != nil:
		vals := []json.RawMessage{}
		for i, on := range f.Ticked {
			if on {
				vals = append(vals, f.Choices[i].Value)
			}
		}
		raw, err := json.Marshal(vals)
		return raw, err == nil, err
	case !f.Multi && f.Pick >= 0 && f.Pick < len(f.Choices):
		return f.Choices[f.Pick].Value, true, nil
	}
	return nil, false, nil
}

// DefaultValue is the default an untouched field sends, where defaults
// are sent: nil when it has none or was cleared.
func (f *Field) DefaultValue() json.RawMessage {
	if f.Cleared {
		return nil
	}
	return f.Default
}

// index is the choice whose value is raw, or -1.
func (f *Field) index(raw json.RawMessage) int {
	want := compact(raw)
	for i, c := range f.Choices {
		if bytes.Equal(compact(c.Value), want) {
			return i
		}
	}
	return -1
}

// defaultPick is the choice that is the default, or -1.
func (f *Field) defaultPick() int {
	if f.Default == nil {
		return -1
	}
	return f.index(f.Default)
}

// inDefault reports whether v is among a multi-select's default values.
func (f *Field) inDefault(v json.RawMessage) bool {
	var vals []json.RawMessage
	if json.Unmarshal(f.Default, &vals) != nil {
		return false
	}
	for _, d := range vals {
		if bytes.Equal(compact(d), compact(v)) {
			return true
		}
	}
	return false
}

func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// JSONValue is the JSON a field of type typ sends for the text v.
func JSONValue(typ, v string) (json.RawMessage, error) {
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
	case "json", "array":
		if !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("not valid JSON")
		}
		return json.RawMessage(v), nil
	}
	return json.Marshal(v)
}
