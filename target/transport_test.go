package target

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func resolveArgs(t *testing.T, args []string, command []string) (Target, error) {
	t.Helper()
	var f Flags
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	f.Add(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Resolve(command, "")
}

// TestTransportFlag: --transport sse makes the URL an HTTP+SSE stream,
// --transport http keeps it Streamable HTTP with no detection, and both are
// refused where they mean nothing.
func TestTransportFlag(t *testing.T) {
	tg, err := resolveArgs(t, []string{"--url", "http://127.0.0.1:1/sse", "--transport", "sse"}, nil)
	if err != nil || !tg.SSE || tg.Transport() != "sse" {
		t.Fatalf("--transport sse: %+v %v", tg, err)
	}
	cfg, err := tg.ClientConfig(context.Background())
	if err != nil || !cfg.SSE || cfg.NoSSEFallback {
		t.Errorf("client config %+v %v", cfg, err)
	}
	tg, err = resolveArgs(t, []string{"--url", "http://127.0.0.1:1/mcp", "--transport", "http"}, nil)
	if err != nil || tg.SSE || !tg.NoSSEFallback || tg.Transport() != "http" {
		t.Errorf("--transport http: %+v %v", tg, err)
	}
	tg, err = resolveArgs(t, []string{"--url", "http://127.0.0.1:1/sse", "--transport", "sse", "--protocol-version", "2024-11-05"}, nil)
	if err != nil || tg.ProtocolVersion != "2024-11-05" {
		t.Errorf("2024-11-05 over sse: %+v %v", tg, err)
	}
	for _, tc := range []struct {
		args, command []string
		want          string
	}{
		{[]string{"--transport", "sse"}, []string{"server"}, "apply to a URL"},
		{[]string{"--url", "http://127.0.0.1:1", "--transport", "websocket"}, nil, `--transport "websocket"`},
		{[]string{"--url", "http://127.0.0.1:1", "--protocol-version", "2024-11-05"}, nil, "--transport sse"},
		{[]string{"--protocol-version", "2024-11-05"}, []string{"server"}, "HTTP+SSE"},
		{[]string{"--url", "http://127.0.0.1:1", "--transport", "sse", "--protocol-version", "2026-07-28"}, nil, "legacy only"},
	} {
		_, err := resolveArgs(t, tc.args, tc.command)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v -- %v: %v, want %q", tc.args, tc.command, err, tc.want)
		}
	}
}
