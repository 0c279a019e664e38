package call

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/target"
	"inflight/wire"
)

// TestCallForcedModernLegacyServer: `inflight call --protocol-version
// 2026-07-28` against a legacy-only server is a connection error (exit 2)
// that says the forced version is the reason, not a silent fallback.
func TestCallForcedModernLegacyServer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy-only", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{wire.Version20251125},
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	tg := target.Target{URL: srv.URL, ProtocolVersion: wire.VersionModern}

	rep, code, _ := runCall(t, Options{Target: tg, Method: "tools/list"})
	if code != exitcode.Usage || rep.State != "not_sent" {
		t.Fatalf("exit %d state %s, want 2 not_sent", code, rep.State)
	}
	if rep.Error == nil || !strings.Contains(rep.Error.Message, "protocol version 2026-07-28 was forced") {
		t.Errorf("error %+v, want it to name the forced version", rep.Error)
	}

	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), Options{Target: tg, Method: "tools/list"}, &stdout, &stderr); code != exitcode.Usage {
		t.Errorf("exit %d, want 2", code)
	}
	testserver.MustContain(t, stderr.String(), "inflight call: connect: protocol version 2026-07-28 was forced, but the server does not support it; it supports 2025-11-25")

	// Without the forced version the same server is detected as legacy.
	rep, code, _ = runCall(t, Options{Target: target.Target{URL: srv.URL}, Method: "tools/list"})
	if code != exitcode.Completed || rep.Era != "legacy" {
		t.Errorf("detected: exit %d era %s, want 0 legacy", code, rep.Era)
	}
}
