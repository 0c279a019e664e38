package schemaform

import (
	"encoding/json"
	"fmt"
	"strconv"

	"charm.land/bubbles/v2/textinput"

	"inflight/ui/look"
)

// LabelWidth is the column a form's labels take.
const LabelWidth = 28

// Field is one input of a form.
type Field struct {
	Name     string
	Type     string // string, integer, number, boolean, json, duration
	Required bool
	Hint     string
	Input    textinput.Model
	// On is a boolean's value; IsBool says the field is one (a checkbox).
	On     bool
	IsBool bool
	// Example: the placeholder is a real example, sent when the field is
	// left empty (the demo's resource and prompt, the raw method).
	Example bool
}

// TextField is a field the user types into.
func TextField(name, typ string, required bool, placeholder, hint string) Field {
	in := look.NewTextInput()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.CharLimit = 4096
	return Field{Name: name, Type: typ, Required: required, Hint: hint, Input: in}
}

// BoolField is a checkbox.
func BoolField(name string, on bool) Field {
	return Field{Name: name, Type: "boolean", IsBool: true, On: on}
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
		out = append(out, TextField(p.Name, p.Type, p.Required, p.Default, p.Hint))
	}
	return out
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
	case "json":
		if !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("not valid JSON")
		}
		return json.RawMessage(v), nil
	}
	return json.Marshal(v)
}
