package client

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
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
// mirror into headers on tools/call. Called with c.mu held.
func (c *Client) learnToolHeaders(result json.RawMessage) {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return
	}
	for _, tool := range res.Tools {
		var schema map[string]any
		if json.Unmarshal(tool.InputSchema, &schema) != nil {
			continue
		}
		var found []paramHeader
		if !collectParamHeaders(schema, nil, &found) || !uniqueHeaders(found) {
			// An invalid annotation makes the tool invalid: send no
			// mirrored headers for it rather than guessing.
			delete(c.toolHeaders, tool.Name)
			continue
		}
		if len(found) > 0 {
			c.toolHeaders[tool.Name] = found
		} else {
			delete(c.toolHeaders, tool.Name)
		}
	}
}

// collectParamHeaders walks the properties chain of a schema. It returns
// false when an annotation is invalid (not a token, or on a non-primitive).
func collectParamHeaders(schema map[string]any, path []string, out *[]paramHeader) bool {
	props, _ := schema["properties"].(map[string]any)
	for key, v := range props {
		sub, ok := v.(map[string]any)
		if !ok {
			continue
		}
		p := append(append([]string(nil), path...), key)
		if h, ok := sub["x-mcp-header"]; ok {
			name, _ := h.(string)
			typ, _ := sub["type"].(string)
			if !isToken(name) || (typ != "string" && typ != "integer" && typ != "boolean") {
				return false
			}
			*out = append(*out, paramHeader{path: p, name: name})
		}
		if !collectParamHeaders(sub, p, out) {
			return false
		}
	}
	return true
}

func uniqueHeaders(hs []paramHeader) bool {
	seen := map[string]bool{}
	for _, h := range hs {
		k := strings.ToLower(h.name)
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
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
	if json.Unmarshal(params, &p) != nil {
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
		var s string
		switch v := cur.(type) {
		case nil:
			continue
		case string:
			s = v
		case bool:
			s = strconv.FormatBool(v)
		case float64:
			s = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			continue
		}
		out["Mcp-Param-"+h.name] = headerValue(s)
	}
	return out
}

// headerValue encodes a value for Mcp-Name and Mcp-Param-*: as-is when it is
// plain visible ASCII without surrounding spaces, otherwise (or when it looks
// like the sentinel itself) as =?base64?…?=.
func headerValue(s string) string {
	safe := s == strings.TrimSpace(s)
	for i := 0; i < len(s) && safe; i++ {
		if b := s[i]; (b < 0x20 || b > 0x7e) && b != '\t' {
			safe = false
		}
	}
	if strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=") {
		safe = false
	}
	if safe {
		return s
	}
	return fmt.Sprintf("=?base64?%s?=", base64.StdEncoding.EncodeToString([]byte(s)))
}
