package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// paramHeader is one x-mcp-header annotation of a tool's input schema: the
// argument at path is mirrored into the Mcp-Param-{name} header.
type paramHeader struct {
	path []string
	name string
}

// learnToolHeaders reads a tools/list result and remembers each tool's
// x-mcp-header annotations, which the modern Streamable HTTP transport must
// mirror into headers on tools/call. It returns a warning for each tool
// whose annotations are invalid: such a tool gets no mirrored headers at
// all. It is called without c.mu (parsing every schema under the lock
// would hold up every Send and Cancel) and takes it only to store what it
// found.
//
// The spec asks a client to drop an invalid tool from the tools/list result
// it shows; inflight is a debugger that shows the server's bytes as they
// are, so it keeps the tool visible and says why its headers are off.
func (c *Client) learnToolHeaders(result json.RawMessage) (warnings []string) {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return nil
	}
	// learned maps each tool to its headers, nil for none (forget it).
	learned := make(map[string][]paramHeader, len(res.Tools))
	for _, tool := range res.Tools {
		learned[tool.Name] = nil
		var schema any
		if json.Unmarshal(tool.InputSchema, &schema) != nil {
			continue
		}
		var found []paramHeader
		err := scanSchema(schema, nil, true, &found)
		if err == nil {
			err = uniqueHeaders(found)
		}
		if err != nil {
			// An invalid annotation makes the whole tool definition
			// invalid: send no mirrored headers for it rather than guess.
			warnings = append(warnings, fmt.Sprintf("tool %q has an invalid x-mcp-header annotation (%v); its calls carry no Mcp-Param headers, and a spec-conforming client would not offer it", tool.Name, err))
			continue
		}
		learned[tool.Name] = found
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, found := range learned {
		if len(found) == 0 {
			delete(c.toolHeaders, name)
			continue
		}
		c.toolHeaders[name] = found
	}
	return warnings
}

// instanceKeywords hold example or default instance values, not schemas: an
// "x-mcp-header" key inside them is data, not an annotation.
var instanceKeywords = map[string]bool{"default": true, "examples": true, "const": true, "enum": true}

// scanSchema walks a schema and every subschema in it, collecting the
// x-mcp-header annotations. viaProperties says whether node is reached from
// the root through a chain of properties keys alone, the only place the
// spec allows an annotation: one under items, oneOf, $defs, if/then and the
// like (or on the root itself) makes the tool definition invalid, and so
// does one that is not a token or sits on a non-primitive parameter.
func scanSchema(node any, path []string, viaProperties bool, out *[]paramHeader) error {
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			if err := scanSchema(v, path, false, out); err != nil {
				return err
			}
		}
	case map[string]any:
		if h, ok := n["x-mcp-header"]; ok {
			where := "the schema root"
			if len(path) > 0 {
				where = "property " + strings.Join(path, ".")
			}
			name, isString := h.(string)
			switch {
			case !viaProperties || len(path) == 0:
				return fmt.Errorf("%s is not reachable through properties alone", where)
			case !isString || !isToken(name):
				return fmt.Errorf("%s: %s is not an HTTP field-name token", where, compactJSON(h))
			case !primitiveType(n["type"]):
				return fmt.Errorf("%s: type %s is not string, integer or boolean", where, compactJSON(n["type"]))
			}
			*out = append(*out, paramHeader{path: path, name: name})
		}
		// Walk in key order so the first error reported is always the same.
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := n[k]
			switch {
			case instanceKeywords[k]:
			case k == "properties":
				props, ok := v.(map[string]any)
				if !ok {
					continue
				}
				names := make([]string, 0, len(props))
				for name := range props {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					p := append(append([]string(nil), path...), name)
					if err := scanSchema(props[name], p, viaProperties, out); err != nil {
						return err
					}
				}
			default:
				if err := scanSchema(v, path, false, out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// primitiveType reports whether a schema's type is one an annotation may
// sit on: string, integer or boolean ("number" is excluded by the spec), or
// one of them together with "null" (a null value simply omits the header).
func primitiveType(t any) bool {
	isPrimitive := func(s string) bool { return s == "string" || s == "integer" || s == "boolean" }
	switch v := t.(type) {
	case string:
		return isPrimitive(v)
	case []any:
		n := 0
		for _, e := range v {
			s, _ := e.(string)
			switch {
			case s == "null":
			case isPrimitive(s):
				n++
			default:
				return false
			}
		}
		return n == 1
	}
	return false
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil || v == nil {
		return "missing"
	}
	return string(b)
}

func uniqueHeaders(hs []paramHeader) error {
	seen := map[string]bool{}
	for _, h := range hs {
		k := strings.ToLower(h.name)
		if seen[k] {
			return fmt.Errorf("header name %q is used twice (names are case-insensitive)", h.name)
		}
		seen[k] = true
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// paramHeadersFor returns the Mcp-Param-* headers of a tools/call.
func (c *Client) paramHeadersFor(tool string, params json.RawMessage) map[string]string {
	c.mu.Lock()
	hs := c.toolHeaders[tool]
	c.mu.Unlock()
	if len(hs) == 0 {
		return nil
	}
	var p struct {
		Arguments map[string]any `json:"arguments"`
	}
	// Numbers stay as written: a float64 would turn an integer beyond 2^53
	// into another integer, and the header must match the body.
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	if dec.Decode(&p) != nil {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		var cur any = p.Arguments
		for _, k := range h.path {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[k]
		}
		s, err := headerString(cur)
		if err != nil {
			// No value at the path, null, or an object or array where
			// the schema promised a primitive: the header is omitted.
			continue
		}
		out["Mcp-Param-"+h.name] = headerValue(s)
	}
	return out
}

// errNoHeader: the argument cannot be mirrored into a header.
var errNoHeader = errors.New("no primitive value")

// headerString converts an argument to its header form as the Value
// Encoding section says: strings as they are, booleans as true or false,
// integers in decimal.
func headerString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case json.Number:
		return decimal(v), nil
	}
	return "", errNoHeader
}

// decimal writes a JSON number as a plain decimal: an integer literal as
// written, and an integral value in another notation (42.0, 4.2e1) as the
// integer it is, so the header matches what a server compares numerically.
func decimal(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return s
	}
	return strconv.FormatInt(int64(f), 10)
}

// headerValue encodes a value for Mcp-Name and Mcp-Param-*: as-is when it is
// plain visible ASCII or space without surrounding whitespace, otherwise
// (non-ASCII, control characters including tab, leading or trailing
// whitespace, or a value that looks like the sentinel itself) as
// =?base64?…?=.
func headerValue(s string) string {
	safe := s == strings.TrimSpace(s)
	for i := 0; i < len(s) && safe; i++ {
		if b := s[i]; b < 0x20 || b > 0x7e {
			safe = false
		}
	}
	if strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=") {
		safe = false
	}
	if safe {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
