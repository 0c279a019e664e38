package client_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// The request-metadata headers of modern Streamable HTTP: MCP-Protocol-Version
// and Mcp-Method on every POST, Mcp-Name for tools/call, resources/read and
// prompts/get, and Mcp-Param-{Name} for the tool arguments a tool's input
// schema marks with x-mcp-header, encoded as the Value Encoding section says.

// annotatedSchema marks arguments of every kind the spec allows: a string,
// an integer, a boolean, a nested property, and values that need base64
// (non-ASCII, padding, the sentinel itself). (The SDK reads "type" as a
// string only: a type array would make it skip validation altogether, so
// nullable types are tested against the raw server below.)
const annotatedSchema = `{
	"type": "object",
	"properties": {
		"region": {"type": "string", "x-mcp-header": "Region"},
		"count": {"type": "integer", "x-mcp-header": "Count"},
		"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
		"target": {"type": "object", "properties": {
			"zone": {"type": "string", "x-mcp-header": "Zone"}
		}},
		"greeting": {"type": "string", "x-mcp-header": "Greeting"},
		"literal": {"type": "string", "x-mcp-header": "Val"},
		"padded": {"type": "string", "x-mcp-header": "Text"},
		"query": {"type": "string", "description": "not mirrored"}
	}
}`

// sdkAnnotated is a modern go-sdk server with one annotated tool. The SDK
// validates Mcp-Param-* headers against the body (decoding base64) and
// answers HeaderMismatch (-32020) when they differ: an independent referee.
func sdkAnnotated(t testing.TB) (*mcp.Server, http.Handler) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "annotated", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(annotatedSchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	return s, h
}

// b64 is the sentinel encoding of s.
func b64(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

// paramHeaders returns the Mcp-Param-* headers of a recorded request, by
// canonical name.
func paramHeaders(r *httpRecord) map[string]string {
	out := map[string]string{}
	for k, vs := range r.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-Param-") {
			out[http.CanonicalHeaderKey(k)] = strings.Join(vs, ",")
		}
	}
	return out
}

func sameHeaders(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s: %q", what, k, v)
		}
	}
}

func TestParamHeadersAgainstSDK(t *testing.T) {
	_, h := sdkAnnotated(t)
	srv, log := serveHTTP(t, h)
	c, rec, info := connectClient(t, client.Config{URL: srv.URL})
	if info.Era != event.EraModern {
		t.Fatalf("era %s, want modern", info.Era)
	}
	// Before tools/list the client knows no annotation: it cannot mirror
	// anything yet (and the SDK rejects the call for the missing header).
	list := send(t, c, 1, wire.MethodToolsList, nil)
	rec.wait(t, "the tools/list answer", responseTo(list))

	tests := []struct {
		name string
		args map[string]any
		want map[string]string
	}{
		{name: "every kind",
			args: map[string]any{
				"region": "us-west1", "count": 42, "dry": false,
				"target":   map[string]any{"zone": "b"},
				"greeting": "Hello, 世界", "literal": "=?base64?literal?=", "padded": " padded ",
				"query": "SELECT 1",
			},
			want: map[string]string{
				"Mcp-Param-Region": "us-west1", "Mcp-Param-Count": "42", "Mcp-Param-Dry-Run": "false",
				"Mcp-Param-Zone": "b",
				// The spec's own examples.
				"Mcp-Param-Greeting": "=?base64?SGVsbG8sIOS4lueVjA==?=",
				"Mcp-Param-Val":      "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
				"Mcp-Param-Text":     "=?base64?IHBhZGRlZCA=?=",
			}},
		{name: "absent and null omit the header",
			args: map[string]any{"count": -7, "dry": true, "region": nil, "target": map[string]any{}},
			want: map[string]string{"Mcp-Param-Count": "-7", "Mcp-Param-Dry-Run": "true"}},
		{name: "control characters and the largest safe integer",
			args: map[string]any{"region": "line1\nline2", "greeting": "tab\there", "count": int64(1<<53 - 1)},
			want: map[string]string{
				"Mcp-Param-Region": "=?base64?bGluZTEKbGluZTI=?=", "Mcp-Param-Greeting": b64("tab\there"),
				"Mcp-Param-Count": "9007199254740991",
			}},
	}
	for i, tc := range tests {
		id := send(t, c, int64(10+i), wire.MethodToolsCall, toolCall("lookup", tc.args))
		resp := rec.wait(t, "the answer to "+tc.name, responseTo(id))
		if resp.Msg.Kind != wire.KindResult {
			t.Errorf("%s: the SDK refused the call: %s", tc.name, resp.Raw)
		}
		post := log.wait(t, "the call", isCall(id))
		sameHeaders(t, tc.name, paramHeaders(post), tc.want)
		if got := post.Header.Get("Mcp-Name"); got != "lookup" {
			t.Errorf("%s: Mcp-Name %q", tc.name, got)
		}
	}

	// A number written as 42.0 is the integer 42 in the header too.
	raw := json.RawMessage(`{"name":"lookup","arguments":{"count":42.0}}`)
	id := send(t, c, 20, wire.MethodToolsCall, raw)
	if resp := rec.wait(t, "the answer to 42.0", responseTo(id)); resp.Msg.Kind != wire.KindResult {
		t.Errorf("the SDK refused count 42.0: %s", resp.Raw)
	}
	sameHeaders(t, "42.0", paramHeaders(log.wait(t, "the 42.0 call", isCall(id))), map[string]string{"Mcp-Param-Count": "42"})
}

// rawTools is a tools/list result with valid and invalid annotations and a
// tool whose name is not ASCII.
const rawTools = `{"tools":[
	{"name":"ok","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
	{"name":"in_items","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}},
	{"name":"in_oneof","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"}},
		"oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}},
	{"name":"number_typed","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"number","x-mcp-header":"N"}}}},
	{"name":"object_typed","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"o":{"type":"object","x-mcp-header":"O"}}}},
	{"name":"duplicate","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"other":{"type":"string","x-mcp-header":"region"}}}},
	{"name":"not_a_token","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"b":{"type":"string","x-mcp-header":"Bad Name"}}}},
	{"name":"empty_name","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"b":{"type":"string","x-mcp-header":""}}}},
	{"name":"nullable","inputSchema":{"type":"object","properties":{"region":{"type":["string","null"],"x-mcp-header":"Region"}}}},
	{"name":"with_default","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region","default":{"x-mcp-header":"not an annotation"}}}}},
	{"name":"天気","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}
]}`

func TestParamHeadersRaw(t *testing.T) {
	srv, log := serveHTTP(t, modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		switch m.Method {
		case wire.MethodToolsList:
			writeJSON(w, http.StatusOK, wire.ResultResponse(m.ID, json.RawMessage(rawTools)))
		default:
			writeJSON(w, http.StatusOK, wire.ResultResponse(m.ID, json.RawMessage(`{"resultType":"complete","content":[]}`)))
		}
	}))
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
	list := send(t, c, 1, wire.MethodToolsList, nil)
	rec.wait(t, "the tools/list answer", responseTo(list))

	region := map[string]any{"region": "eu", "list": []string{"x"}, "n": 1, "o": map[string]any{}, "b": "y", "other": "z", "a": "q"}
	tests := []struct {
		tool string
		want map[string]string
		note bool // the client warns that the tool's annotations are invalid
	}{
		{tool: "ok", want: map[string]string{"Mcp-Param-Region": "eu"}},
		{tool: "with_default", want: map[string]string{"Mcp-Param-Region": "eu"}},
		{tool: "nullable", want: map[string]string{"Mcp-Param-Region": "eu"}},
		{tool: "天気", want: map[string]string{"Mcp-Param-Region": "eu"}},
		{tool: "in_items", note: true},
		{tool: "in_oneof", note: true},
		{tool: "number_typed", note: true},
		{tool: "object_typed", note: true},
		{tool: "duplicate", note: true},
		{tool: "not_a_token", note: true},
		{tool: "empty_name", note: true},
		{tool: "unlisted"},
	}
	for i, tc := range tests {
		id := send(t, c, int64(10+i), wire.MethodToolsCall, toolCall(tc.tool, region))
		rec.wait(t, "the answer", responseTo(id))
		post := log.wait(t, "the call", isCall(id))
		sameHeaders(t, tc.tool, paramHeaders(post), tc.want)
		notes := rec.count(func(ev event.Event) bool {
			return ev.Kind == event.Note && strings.Contains(ev.Text, `tool "`+tc.tool+`" has an invalid x-mcp-header`)
		})
		if tc.note != (notes == 1) {
			t.Errorf("%s: %d warning notes, want a note: %t\n%s", tc.tool, notes, tc.note, rec.dump())
		}
	}

	// Mcp-Name: as-is when plain ASCII, base64 otherwise; params.uri for
	// resources/read.
	names := map[string]struct {
		method, params, want string
	}{
		"non-ASCII tool": {wire.MethodToolsCall, `{"name":"天気"}`, b64("天気")},
		"sentinel-like":  {wire.MethodToolsCall, `{"name":"=?base64?x?="}`, b64("=?base64?x?=")},
		"padded prompt":  {wire.MethodPromptsGet, `{"name":" p "}`, b64(" p ")},
		"resource URI":   {wire.MethodResourcesRead, `{"uri":"file:///a/b.txt"}`, "file:///a/b.txt"},
		"non-ASCII URI":  {wire.MethodResourcesRead, `{"uri":"file:///é"}`, b64("file:///é")},
	}
	n := int64(100)
	for what, tc := range names {
		n++
		id := send(t, c, n, tc.method, json.RawMessage(tc.params))
		rec.wait(t, "the answer", responseTo(id))
		if got := log.wait(t, what, isCall(id)).Header.Get("Mcp-Name"); got != tc.want {
			t.Errorf("%s: Mcp-Name %q, want %q", what, got, tc.want)
		}
	}

	// Every POST carries MCP-Protocol-Version and Mcp-Method matching its
	// body, the probe included.
	for _, r := range log.all() {
		m, err := wire.Decode(r.Body)
		if err != nil {
			t.Errorf("unreadable POST body %s", r.Body)
			continue
		}
		if r.Method != http.MethodPost {
			t.Errorf("a modern client sent %s", r.Method)
		}
		if got := r.Header.Get("MCP-Protocol-Version"); got != wire.VersionModern {
			t.Errorf("%s: MCP-Protocol-Version %q", m.Method, got)
		}
		if got := r.Header.Get("Mcp-Method"); got != m.Method {
			t.Errorf("%s: Mcp-Method %q", m.Method, got)
		}
	}
}

// TestParamHeadersNotOnStdio: stdio has no headers, and an invalid
// annotation there is not worth a warning.
func TestParamHeadersNotOnStdio(t *testing.T) {
	_, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
		modernHandshake(p, m)
		if m.Method == wire.MethodToolsList {
			var compact bytes.Buffer
			_ = json.Compact(&compact, []byte(rawTools)) // one message, one line
			p.send(string(wire.ResultResponse(m.ID, compact.Bytes())))
		}
	})
	c, rec, _ := connectClient(t, client.Config{Pipes: pipes})
	id := send(t, c, 1, wire.MethodToolsList, nil)
	rec.wait(t, "the tools/list answer", responseTo(id))
	if n := rec.count(kind(event.Note)); n != 1 { // the probe's own note only
		t.Errorf("%d notes on stdio, want only the era probe's:\n%s", n, rec.dump())
	}
}
