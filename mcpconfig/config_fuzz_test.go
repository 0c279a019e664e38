package mcpconfig_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tailscale/hujson"

	"inflight/mcpconfig"
	"inflight/target"
)

// FuzzParseConfig feeds arbitrary bytes to the config parser (JSON with
// comments, the three formats, variable expansion): it must never panic,
// and whatever it accepts must be a target inflight can describe.
func FuzzParseConfig(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "config", "*"))
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data, "")
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["${env:HOME}"],"env":{"K":"${K:-d}"}}}}`), "a")
	f.Add([]byte("{\"servers\": { // comment\n \"b\": {\"url\": \"http://127.0.0.1/mcp\", \"headers\": {\"Authorization\": \"Bearer ${input:tok}\"},},}}"), "b")
	f.Add([]byte(`{"mcp":{"servers":{"c":{"type":"sse","url":"http://x"}}}}`), "")
	f.Add([]byte(`/* unterminated`), "")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		srv, err := mcpconfig.Parse(data, filepath.Join(t.TempDir(), ".vscode", "mcp.json"), name)
		if err != nil {
			return
		}
		tgt := target.FromConfig(srv)
		_ = tgt.Validate()
		_ = tgt.Describe()
		// Reading valid JSON as JSON with comments must not change it.
		var a, b any
		if json.Unmarshal(data, &a) == nil {
			std, err := hujson.Standardize(append([]byte(nil), data...))
			if err != nil {
				t.Fatalf("hujson refused valid JSON %q: %v", data, err)
			}
			if err := json.Unmarshal(std, &b); err != nil {
				t.Fatalf("hujson broke valid JSON %q: %v", data, err)
			}
		}
	})
}
