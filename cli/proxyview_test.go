//go:build unix

package cli

import (
	"bufio"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/demo"
	"inflight/proxy"
	"inflight/session"
	"inflight/wire"
)

// TestHTTPProxyViewInProcess: the HTTP proxy's own view (what `inflight
// proxy --url U` opens on a terminal) is fed by the proxy's own stream:
// a host's call through the proxy shows on it, its header names the URL
// to give the host, its footer says q stops the proxy, and q stops the
// proxy (RunHTTP returns) and prints the proxy's lines kept meanwhile.
func TestHTTPProxyViewInProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	upURL := make(chan string, 1)
	go func() { _ = demo.ServeHTTP(ctx, "127.0.0.1:0", demo.Options{}, func(u string) { upURL <- u }) }()
	upstream := <-upURL
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	local := "http://" + l.Addr().String() + "/mcp"
	dir := privateDir(t)
	var stderr lockedBuffer
	c := &cli{stdout: &lockedBuffer{}, stderr: &stderr}
	opts := proxy.Options{Name: "inproc", Stderr: &stderr, SocketDir: dir, Tracker: session.Config{LateWindow: time.Second}}
	var d *attachDriver
	view := func(vctx context.Context, conn net.Conn, hello proxy.Hello, br *bufio.Reader) error {
		m, err := newAttachModel(hello, br, conn, true)
		if err != nil {
			return err
		}
		d = newAttachDriver(t, m)
		defer m.Stop()
		// A host's call through the proxy.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk-host", Version: "1"}, nil).Connect(vctx, &mcp.StreamableClientTransport{Endpoint: local}, nil)
		if err != nil {
			t.Errorf("connect through the proxy: %v", err)
			return nil
		}
		defer cs.Close()
		if _, err := cs.CallTool(vctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0.05, "steps": 1}}); err != nil {
			t.Errorf("the host's call: %v", err)
		}
		d.until("the host's call on the view", func() bool {
			r := d.request(wire.MethodToolsCall)
			return r != nil && r.State == session.StateCompleted
		})
		s := d.screen()
		for _, want := range []string{"attach inproc · host <-> " + local, "⇄ slow", "q stop proxy"} {
			if !strings.Contains(s, want) {
				t.Errorf("the view lacks %q:\n%s", want, s)
			}
		}
		if strings.Contains(stderr.String(), "inflight proxy inproc") {
			t.Errorf("the proxy wrote to the terminal under its view:\n%s", stderr.String())
		}
		d.update(tea.KeyPressMsg{Code: 'q', Text: "q"})
		d.until("the view to quit", func() bool { return d.quit })
		return nil
	}
	ended := make(chan proxy.Result, 1)
	go func() {
		res, quit, err := c.proxyWithView(ctx, "inproc", local, opts, func(ctx context.Context, opts proxy.Options) (proxy.Result, error) {
			// A line of the proxy's while the view is up waits for its end.
			opts.Stderr.Write([]byte("inflight proxy inproc: a line under the view\n"))
			return proxy.RunHTTP(ctx, l, upstream, opts)
		}, view)
		if err != nil {
			t.Errorf("proxyWithView: %v", err)
		}
		if !quit {
			t.Error("the view's q was not taken for the user's quit: the proxy would exit 4, as if interrupted")
		}
		ended <- res
	}()
	select {
	case res := <-ended:
		if res.End != proxy.EndInterrupted {
			t.Errorf("the proxy ended with %v, want stopped by the view's q", res.End)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy did not stop when its view quit")
	}
	if d == nil {
		t.Fatal("no view opened")
	}
	if !strings.Contains(stderr.String(), "a line under the view") {
		t.Errorf("the proxy's lines were not printed after the view:\n%s", stderr.String())
	}
	if _, err := os.Stat(dir + "/inproc.sock"); !os.IsNotExist(err) {
		t.Errorf("the socket outlived the proxy: %v", err)
	}
}

// privateDir is a 0700 directory for sockets (short: a socket path is at
// most 108 bytes).
func privateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ifv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
