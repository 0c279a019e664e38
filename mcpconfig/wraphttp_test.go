package mcpconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrapHTTP: an HTTP entry's URL becomes the proxy's local one (with
// the upstream's path); everything else of the file stays byte for byte.
func TestWrapHTTP(t *testing.T) {
	for _, tc := range []struct{ file, server, up, want string }{
		{"vscode_mcp.json", "github", "https://api.githubcopilot.com/mcp/", `"url": "http://127.0.0.1:7001/mcp/"`},
		{"claude_code_mcp.json", "api-server", "https://api.example.com/mcp", `"url": "http://127.0.0.1:7001/mcp"`},
	} {
		path := filepath.Join("testdata", "wrap", tc.file)
		data, _ := os.ReadFile(path)
		w, up, err := WrapHTTP(data, path, tc.server, "127.0.0.1:7001")
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if up != tc.up || !bytes.Contains(w.Entry, []byte(tc.want)) {
			t.Errorf("%s: upstream %q, entry\n%s\nwant %q and %s", tc.file, up, w.Entry, tc.up, tc.want)
		}
		if got := strings.Replace(string(w.File), strings.TrimPrefix(tc.want, `"url": `), `"`+tc.up+`"`, 1); got != string(data) {
			t.Errorf("%s: more than the URL changed:\n%s", tc.file, w.File)
		}
		if _, _, err := WrapHTTP(w.File, path, tc.server, "127.0.0.1:7001"); !errors.Is(err, ErrWrapped) {
			t.Errorf("%s wrapped twice: %v", tc.file, err)
		}
	}
	path := filepath.Join("testdata", "wrap", "vscode_mcp.json")
	data, _ := os.ReadFile(path)
	if _, _, err := WrapHTTP(data, path, "Perplexity", "127.0.0.1:7001"); err == nil || !strings.Contains(err.Error(), "stdio server") {
		t.Errorf("a stdio entry: %v", err)
	}
	sse := []byte(`{"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}`)
	if _, _, err := WrapHTTP(sse, "x.json", "", "127.0.0.1:7001"); !errors.Is(err, ErrSSEEntry) {
		t.Errorf("an HTTP+SSE entry: %v", err)
	}
}
