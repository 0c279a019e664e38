package client

import (
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// TestToolHeadersLearnedOnlyWhereUsed: only modern Streamable HTTP mirrors
// x-mcp-header annotations into headers, so a tools/list result is read for
// them there and nowhere else (reading one means unmarshalling and walking
// every tool's schema).
func TestToolHeadersLearnedOnlyWhereUsed(t *testing.T) {
	result := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}}`
	tests := []struct {
		name  string
		cfg   Config
		era   event.Era
		learn bool
	}{
		{"stdio modern", Config{Pipes: &Pipes{}}, event.EraModern, false},
		{"stdio legacy", Config{Pipes: &Pipes{}}, event.EraLegacy, false},
		{"http legacy", Config{URL: "http://127.0.0.1:1"}, event.EraLegacy, false},
		{"http modern", Config{URL: "http://127.0.0.1:1"}, event.EraModern, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.info.Era = tc.era
			c.flights[wire.IntID(1)] = &flight{method: wire.MethodToolsList}
			c.receive([]byte(result), 0, time.Now(), wire.ID{})
			if got := len(c.toolHeaders) > 0; got != tc.learn {
				t.Errorf("headers learned: %t, want %t", got, tc.learn)
			}
		})
	}
}
