package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfig feeds arbitrary bytes to the config parser (JSONC
// stripping, the three formats, variable expansion): it must never panic,
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
		tgt, err := parseConfig(data, filepath.Join(t.TempDir(), ".vscode", "mcp.json"), name)
		if err != nil {
			return
		}
		_ = tgt.Validate()
		_ = tgt.Describe()
		// Stripping comments from valid JSON must not change its meaning.
		var a, b any
		if json.Unmarshal(data, &a) == nil {
			if err := json.Unmarshal(stripJSONC(data), &b); err != nil {
				t.Fatalf("stripJSONC broke valid JSON %q: %v", data, err)
			}
		}
	})
}
