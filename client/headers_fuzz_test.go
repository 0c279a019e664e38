package client

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParamHeaders feeds arbitrary tools/list results and tools/call
// params to the x-mcp-header code: it must never panic, every header it
// produces must be a safe header field (a token name, a value of visible
// ASCII and inner spaces), and every value must decode back to the
// argument it mirrors.
func FuzzParamHeaders(f *testing.F) {
	f.Add(`{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}]}`, `{"name":"t","arguments":{"r":"Hello, 世界"}}`)
	f.Add(`{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"o":{"type":"object","properties":{"b":{"type":["boolean","null"],"x-mcp-header":"B"}}}}}}]}`, `{"name":"t","arguments":{"n":4.2e1,"o":{"b":true}}}`)
	f.Add(`{"tools":[{"name":"t","inputSchema":{"items":[{"x-mcp-header":"X"}],"properties":{"a":{"x-mcp-header":7}}}}]}`, `{"name":"t","arguments":{"a":" =?base64?x?= "}}`)
	f.Fuzz(func(t *testing.T, list, params string) {
		c := &Client{toolHeaders: map[string][]paramHeader{}}
		c.learnToolHeaders(json.RawMessage(list))
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal([]byte(params), &p)
		for name, value := range c.paramHeadersFor(p.Name, json.RawMessage(params)) {
			if !strings.HasPrefix(name, "Mcp-Param-") || !isToken(name) {
				t.Fatalf("header name %q is not an Mcp-Param token", name)
			}
			if value != strings.TrimSpace(value) {
				t.Fatalf("header %s value %q has surrounding whitespace", name, value)
			}
			for i := 0; i < len(value); i++ {
				if b := value[i]; b < 0x20 || b > 0x7e {
					t.Fatalf("header %s value %q has byte %#x", name, value, b)
				}
			}
		}
	})
}

// FuzzHeaderValue: the encoding is safe for any string and lossless.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "tab\tin", "", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := headerValue(s)
		for i := 0; i < len(v); i++ {
			if b := v[i]; b < 0x20 || b > 0x7e {
				t.Fatalf("headerValue(%q) = %q has byte %#x", s, v, b)
			}
		}
		decoded := v
		if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
			if inner, ok = strings.CutSuffix(inner, "?="); ok {
				b, err := base64.StdEncoding.DecodeString(inner)
				if err != nil {
					t.Fatalf("headerValue(%q) = %q: %v", s, v, err)
				}
				decoded = string(b)
			}
		}
		if decoded != s {
			t.Fatalf("headerValue(%q) = %q decodes to %q", s, v, decoded)
		}
	})
}
