package demo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withheldEvent is an SSE event as the SDK writes one for errWithheld.
func withheldEvent(id int) string {
	return fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{\"code\":%d,\"message\":%q}}\n\n", id, codeWithheld, withheldMarker)
}

func TestIsWithheld(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(1))
	for _, tc := range []struct {
		name string
		msg  jsonrpc.Message
		want bool
	}{
		{"withheld", &jsonrpc.Response{ID: id, Error: errWithheld}, true},
		{"wrapped", &jsonrpc.Response{ID: id, Error: fmt.Errorf("tool: %w", errWithheld)}, true},
		{"same code, other message", &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: codeWithheld, Message: "x"}}, false},
		{"marker text, other code", &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: failCode, Message: withheldMarker}}, false},
		{"result", &jsonrpc.Response{ID: id, Result: []byte(`{}`)}, false},
		{"request", &jsonrpc.Request{ID: id, Method: "tools/call"}, false},
	} {
		if got := isWithheldMessage(tc.msg); got != tc.want {
			t.Errorf("%s: isWithheldMessage = %t, want %t", tc.name, got, tc.want)
		}
		if resp, ok := tc.msg.(*jsonrpc.Response); ok && tc.name != "wrapped" {
			data, err := jsonrpc.EncodeMessage(resp)
			if err != nil {
				t.Fatal(err)
			}
			if got := isWithheldJSON(data); got != tc.want {
				t.Errorf("%s: isWithheldJSON(%s) = %t, want %t", tc.name, data, got, tc.want)
			}
		}
	}
}

func TestNextEvent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", -1},
		{"data: a\n", -1},
		{"data: a\n\n", 9},
		{"data: a\n\ndata: b\n\n", 9},
		{"event: message\r\ndata: a\r\n\r\n", 27},
		{"data: a\r\r", -1}, // the last "\r" may be the start of "\r\n"
		{"data: a\r\r\n", 10},
		{"data: a\r\rdata: b", 9},
		{": ok\n\n", 6},
		{"\n", 1},
	} {
		if got := nextEvent([]byte(tc.in)); got != tc.want {
			t.Errorf("nextEvent(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestEventData(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"event: message\ndata: {\"a\":1}\n\n", `{"a":1}`},
		{"data:x\ndata: y\r\n\r\n", "x\ny"},
		{"data\n\n", ""},
		{": comment\nid: 3\n\n", ""},
	} {
		if got := string(eventData([]byte(tc.in))); got != tc.want {
			t.Errorf("eventData(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// feed writes body to a withholdingWriter in chunks of size n.
func feed(t *testing.T, contentType, body string, n int) string {
	t.Helper()
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", contentType)
	f := &withholdingWriter{w: rec}
	for len(body) > 0 {
		k := min(n, len(body))
		if m, err := f.Write([]byte(body[:k])); err != nil || m != k {
			t.Fatalf("Write = %d, %v", m, err)
		}
		f.Flush()
		body = body[k:]
	}
	f.finish()
	return rec.Body.String()
}

func TestWithholdingWriterSSE(t *testing.T) {
	progress := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	result := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"
	body := ": ok\n\n" + progress + withheldEvent(1) + result + "data: partial"
	want := ": ok\n\n" + progress + result + "data: partial"
	for n := 1; n <= len(body); n++ {
		if got := feed(t, "text/event-stream", body, n); got != want {
			t.Fatalf("chunks of %d: got %q, want %q", n, got, want)
		}
	}
}

func TestWithholdingWriterJSON(t *testing.T) {
	data, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: errWithheld})
	if got := feed(t, "application/json", string(data), len(data)); got != "" {
		t.Errorf("withheld JSON body passed: %q", got)
	}
	other := `{"jsonrpc":"2.0","id":1,"result":{}}`
	if got := feed(t, "application/json; charset=utf-8", other, len(other)); got != other {
		t.Errorf("JSON body = %q, want %q", got, other)
	}
	if got := feed(t, "text/plain", withheldEvent(1), 7); got != withheldEvent(1) {
		t.Errorf("a non-MCP body was changed: %q", got)
	}
}

func TestWithholdingWriterUnwrap(t *testing.T) {
	rec := httptest.NewRecorder()
	f := &withholdingWriter{w: rec}
	if err := http.NewResponseController(f).Flush(); err != nil {
		t.Errorf("Flush through ResponseController: %v", err)
	}
	if !rec.Flushed {
		t.Error("Flush did not reach the underlying writer")
	}
}

// FuzzWithholdingWriter checks that the SSE filter passes every byte of a
// stream without withheld responses through unchanged, however it is split.
func FuzzWithholdingWriter(f *testing.F) {
	f.Add([]byte("event: message\ndata: {}\n\n"), 3)
	f.Add([]byte("data: a\r\n\r\ndata: b\r\r: c\n"), 1)
	f.Add([]byte("\r\r\r\n\n"), 2)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		if strings.Contains(string(body), withheldMarker) {
			t.Skip()
		}
		if n <= 0 || n > len(body) {
			n = len(body) + 1
		}
		if got := feed(t, "text/event-stream", string(body), n); got != string(body) {
			t.Fatalf("got %q, want %q", got, body)
		}
	})
}

func TestCarriesModernMeta(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`: true,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`:                                   false,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`:                    false,
		`[{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}]`:        false,
		`not json io.modelcontextprotocol/protocolVersion`:                                                                           false,
	} {
		if got := carriesModernMeta([]byte(body)); got != want {
			t.Errorf("carriesModernMeta(%s) = %t, want %t", body, got, want)
		}
	}
}

func TestGuardRecoversPanics(t *testing.T) {
	s, logs := newTestServer(t)
	h := s.guardMiddleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		panic("boom")
	})
	_, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError {
		t.Errorf("panicking handler = %v, want an internal error", err)
	}
	logs.waitFor(t, `tools/call: recovered from a panic: boom`)
}

// TestNullArguments checks that "arguments": null, which makes go-sdk v1.8.0
// panic, is served as absent arguments.
func TestNullArguments(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	resp := p.call(1, "tools/call", modern.params(map[string]any{"name": toolFail, "arguments": nil}, ""))
	if text, isErr := resp.toolText(t); !isErr || text != "the demo tool failed on purpose" {
		t.Errorf("fail with null arguments = %s", resp)
	}
}

func TestInvalidArguments(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	for i, a := range []map[string]any{
		args("steps", 0),
		args("seconds", -1),
		args("bogus", 1),
	} {
		resp := p.call(i+1, "tools/call", modern.params(map[string]any{"name": toolSlow, "arguments": a}, ""))
		if _, isErr := resp.toolText(t); !isErr {
			t.Errorf("slow %v = %s, want a tool error", a, resp)
		}
	}
}

func TestPromptAllTransports(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	resp := p.call(1, "prompts/get", modern.params(map[string]any{"name": promptExplain}, ""))
	for _, want := range []string{"On stdio", "On Streamable HTTP (2026-07-28)", "On legacy Streamable HTTP"} {
		if !strings.Contains(resp.raw, want) {
			t.Errorf("prompt without transport lacks %q: %s", want, resp)
		}
	}
}
