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
// error (--args, PARAMS_JSON).
func CheckObject(raw json.RawMessage, what string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("null")
		}
		return fmt.Errorf("%s must be a JSON object: %v", what, err)
	}
	return nil
}
