//go:build unix

package cli

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/internal/testkit/testbin"
)

// TestProxyReleaseOnSIGUSR1: a hold rule keeps the demo's answer until
// the proxy's process gets SIGUSR1, then passes it on.
func TestProxyReleaseOnSIGUSR1(t *testing.T) {
	bin := testbin.Build(t, "inflight")
	cmd := exec.Command(bin, "proxy", "--name", "usr1", "--rule", "tools/call: hold", "--", bin, "demo-server")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())
	stderr := newSyncBuffer()
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type result struct {
		res *mcp.CallToolResult
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0.01, "steps": 1}})
		done <- result{res, err, time.Now()}
	}()
	stderr.waitFor(t, regexp.MustCompile(`injected hold: holding the response to tools/call slow`))
	select {
	case r := <-done:
		t.Fatalf("the held call ended before the release: %v", r.err)
	case <-time.After(100 * time.Millisecond):
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.IsError || r.at.Before(sent) {
		t.Fatalf("after SIGUSR1: %v %+v", r.err, r.res)
	}
	stderr.waitFor(t, regexp.MustCompile(`injected hold: released the response to tools/call slow \(id 2\) on request`))
}
