package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ToolCallParams builds the params of tools/call for a tool name and its
// arguments (a JSON object; empty means none).
func ToolCallParams(name string, args json.RawMessage) (json.RawMessage, error) {
	if name == "" {
		return nil, errors.New("--tool needs a tool name")
	}
	p := map[string]json.RawMessage{}
	n, _ := json.Marshal(name)
	p["name"] = n
	if len(bytes.TrimSpace(args)) > 0 {
		if err := CheckObject(args, "--args"); err != nil {
			return nil, err
		}
		p["arguments"] = args
	}
	return json.Marshal(p)
}

// CheckObject reports text that is not a JSON object; what names it in the
// error (--args, PARAMS_JSON). The error says what was given instead, in
// words, not as a Go type error.
func CheckObject(raw json.RawMessage, what string) error {
	if !json.Valid(raw) {
		var m any
		err := json.Unmarshal(raw, &m)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s is not valid JSON (at byte %d: %v); give an object such as '{\"seconds\":5}'", what, se.Offset, se)
		}
		return fmt.Errorf("%s is not valid JSON (%v); give an object such as '{\"seconds\":5}'", what, err)
	}
	trimmed := bytes.TrimSpace(raw)
	kind := ""
	switch trimmed[0] {
	case '{':
		return nil
	case '[':
		kind = "an array"
	case '"':
		kind = "a string"
	case 'n':
		kind = "null"
	case 't', 'f':
		kind = "a boolean"
	default:
		kind = "a number"
	}
	return fmt.Errorf("%s must be a JSON object ({…}), not %s", what, kind)
}
