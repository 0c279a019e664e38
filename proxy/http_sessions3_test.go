package proxy

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// go-sdk's server in Stateless mode sets no Mcp-Session-Id; go-sdk's host at
// 2025-11-25 times out on a slow call and POSTs notifications/cancelled.
func TestHTTPSessionsStatelessLegacyHostCancel(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "stubborn"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
		time.Sleep(600 * time.Millisecond)
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &http.Server{Handler: h}
	go func() { _ = up.Serve(ul) }()
	t.Cleanup(func() { up.Close() })
	rp := startHTTPProxy(t, "http://"+ul.Addr().String()+"/mcp", func(o *Options) { o.Tracker.LateWindow = 500 * time.Millisecond })
	timedOutCall(t, rp, "2025-11-25")
	time.Sleep(CancelGrace + 900*time.Millisecond) // past the resumption wait (the late window, 500ms)
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if info, _ := rp.tr.Conn(); info.Era != event.EraLegacy {
		t.Errorf("connection %+v: want legacy", info)
	}
	call := rp.request(wire.MethodToolsCall)
	if call == nil || call.Cancel == nil || call.Cancel.Cause != session.CauseHost || call.Cancel.Signal != event.SignalNotification {
		t.Errorf("tools/call: %+v; want the host's notifications/cancelled", call)
	}
	for i := 0; i < rp.tr.Violations().Len(); i++ {
		if v := rp.tr.Violations().At(i); strings.HasPrefix(v.Code, "host_") {
			t.Errorf("go-sdk's legacy host flagged: %s %s", v.Code, v.Detail)
		}
	}
}
