package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
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

// WithTask returns tools/call params that ask for a task (the legacy
// era's task field), with a ttl when ttl > 0.
func WithTask(params json.RawMessage, ttl time.Duration) (json.RawMessage, error) {
	p := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(params)) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	task := map[string]any{}
	if ttl > 0 {
		task["ttl"] = ttl.Milliseconds()
	}
	b, _ := json.Marshal(task)
	p["task"] = b
	return json.Marshal(p)
}
