//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/internal/testkit/testbin"
	"inflight/proxy"
	"inflight/session"
	"inflight/trace"
	"inflight/ui"
	"inflight/wire"
)

// lockedBuffer is a bytes.Buffer safe across goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// actProxy is `inflight proxy --name NAME [args] -- inflight demo-server`
// as a process, with go-sdk's client as its host over its stdin and
// stdout (what the host read is kept, byte for byte).
type actProxy struct {
	cs      *mcp.ClientSession
	got     lockedBuffer // what the host read
	stderr  lockedBuffer
	trace   string
	sockets string
	cmd     *exec.Cmd
}

func startActProxy(t *testing.T, name string, args ...string) *actProxy {
	t.Helper()
	return startProxyIn(t, t.TempDir(), name, args...)
}

// startProxyIn is startActProxy with the proxy's runtime directory (its
// sockets under runDir/inflight) given: several proxies can share it.
func startProxyIn(t *testing.T, runDir, name string, args ...string) *actProxy {
	t.Helper()
	bin := testbin.Build(t, "inflight")
	p := &actProxy{sockets: filepath.Join(runDir, "inflight"), trace: filepath.Join(runDir, name+".trace.jsonl")}
	argv := append([]string{"proxy", "--name", name, "--trace", p.trace}, args...)
	p.cmd = exec.Command(bin, append(argv, "--", bin, "demo-server")...)
	p.cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runDir)
	p.cmd.Stderr = &p.stderr
	in, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tp := &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(out, &p.got)), Writer: in}
	if p.cs, err = mcp.NewClient(&mcp.Implementation{Name: "sdk-host", Version: "1"}, nil).Connect(ctx, tp, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cs.Close()
		in.Close()
		_ = p.cmd.Wait()
	})
	return p
}

// call calls a demo tool in the background, with a host timeout.
func (p *actProxy) call(tool string, seconds float64, steps int, timeout time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"seconds": seconds, "steps": steps}})
		done <- err
	}()
	return done
}

// waitStderr waits for the proxy's stderr (the server's, passed through)
// to say s.
func (p *actProxy) waitStderr(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.stderr.String(), s); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stderr never said %q:\n%s", s, p.stderr.String())
		}
	}
}

// hostLine is the line the host read that answers id.
func (p *actProxy) hostLine(id wire.ID) string {
	for _, l := range strings.Split(p.got.String(), "\n") {
		if m, err := wire.Decode([]byte(l)); err == nil && m.IsResponse() && m.ID == id {
			return l
		}
	}
	return ""
}

func key(s string) tea.KeyPressMsg {
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// newest is the view's newest host tools/call.
func (d *attachDriver) newest() *session.Request {
	tr := d.m.Tracker()
	for i := tr.Len() - 1; i >= 0; i-- {
		if r := tr.At(i); r.Method == wire.MethodToolsCall {
			return r
		}
	}
	return nil
}

// waitNewCall waits for a host tools/call newer than prev to run.
func (d *attachDriver) waitNewCall(prev *session.Request) *session.Request {
	d.t.Helper()
	d.until("the host's new call", func() bool {
		r := d.newest()
		return r != nil && r != prev && r.IsActive()
	})
	return d.newest()
}

// TestAttachKeysActOnRealProxy: `inflight proxy -- inflight demo-server`
// with go-sdk's client as the host, and the view `inflight attach` opens,
// driven by its keys. h holds the response to the host's slow call (the
// host gets nothing), u releases it (the host gets exactly the server's
// bytes); d delays one; z cancels one upstream (the host gets -32800, the
// server notifications/cancelled, which it logs); a key on a row no
// longer in flight is refused saying why, as is a command on an unknown
// ID; a --read-only proxy refuses everything.
func TestAttachKeysActOnRealProxy(t *testing.T) {
	p := startActProxy(t, "act")
	m, conn := attachTo(t, p.sockets, "act")
	defer conn.Close()
	d := newAttachDriver(t, m)
	defer m.Stop()

	// Hold, then release.
	done := p.call("slow", 0.2, 2, 20*time.Second)
	call := d.waitNewCall(nil)
	d.update(key("h"))
	d.until("the proxy taking the hold", func() bool { return strings.Contains(d.screen(), "the proxy holds #"+call.ID.String()+"'s response") })
	d.until("the held response", func() bool { return strings.Contains(d.screen(), "◇ held by you · ") })
	select {
	case err := <-done:
		t.Fatalf("the host's call ended while its response was held: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if l := p.hostLine(call.ID); l != "" {
		t.Fatalf("the host read the held response: %s", l)
	}
	d.update(key("u"))
	if err := <-done; err != nil {
		t.Fatalf("the released call: %v", err)
	}
	d.until("the release on the row", func() bool { return strings.Contains(d.screen(), "released after ") })

	// Delay 300ms, typed into the prompt.
	done = p.call("slow", 0.05, 1, 20*time.Second)
	start := time.Now()
	call2 := d.waitNewCall(call)
	d.update(key("d"))
	if !strings.Contains(d.screen(), "Delay the response to #"+call2.ID.String()) {
		t.Fatalf("no delay prompt:\n%s", d.screen())
	}
	for _, r := range "300ms" {
		d.update(key(string(r)))
	}
	d.update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if err := <-done; err != nil {
		t.Fatalf("the delayed call: %v", err)
	}
	if took := time.Since(start); took < 350*time.Millisecond {
		t.Errorf("the delayed call took %s, want the server's 50ms and the 300ms delay", took)
	}
	d.until("the delay's release", func() bool { return d.m.Tracker().Len() > 0 && strings.Count(d.screen(), "released after ") >= 2 })

	// Cancel upstream: the host is answered -32800; the server is told.
	done = p.call("slow", 5, 5, 20*time.Second)
	call3 := d.waitNewCall(call2)
	// Once the server runs it: a cancel that reaches go-sdk's server before
	// its handler starts is dropped there, and the tool runs to its end.
	p.waitStderr(t, "slow #3: started")
	d.update(key("z"))
	var rpcErr *jsonrpc.Error
	if err := <-done; !errors.As(err, &rpcErr) || rpcErr.Code != proxy.CodeCancelledByProxy {
		t.Fatalf("the call cancelled upstream ended with %v, want error %d", err, proxy.CodeCancelledByProxy)
	}
	d.until("the cancel on the row", func() bool { return strings.Contains(d.screen(), "◇ cancelled upstream by you") })
	p.waitStderr(t, "slow #3: cancelled after")
	// The row is no longer in flight: a key on it is refused, saying why.
	d.update(key("h"))
	if s := d.screen(); !strings.Contains(s, "#"+call3.ID.String()+" is not in flight") {
		t.Errorf("hold on a call no longer in flight:\n%s", s)
	}

	// What the host read of the held call is the server's line exactly.
	server := ""
	f, err := os.Open(p.trace)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := trace.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Dir == trace.DirIn && r.ID != nil && *r.ID == call.ID && len(r.Msg) > 0 {
			server = string(r.Msg)
		}
	}
	if got := p.hostLine(call.ID); server == "" || got != server {
		t.Errorf("the host read\n%s\nthe server sent\n%s", got, server)
	}

	// A command on an unknown ID, on a connection of its own.
	unknown := wire.IntID(4242)
	if rep := rawCommand(t, p.sockets, "act", proxy.Command{Act: "hold", ID: &unknown}); rep.Code != proxy.ReplyRefused ||
		!strings.Contains(rep.Text, "no request of the host's with ID 4242 is in flight") {
		t.Errorf("a hold on an unknown ID: %+v", rep)
	}
	if n := m.Disagreements(); n != 0 {
		t.Errorf("the view disagrees with the proxy %d times:\n%s", n, d.screen())
	}

	// A read-only proxy: the view has no keys that act, and the socket
	// refuses the command.
	ro := startActProxy(t, "ro", "--read-only")
	m2, conn2 := attachTo(t, ro.sockets, "ro")
	defer conn2.Close()
	d2 := newAttachDriver(t, m2)
	defer m2.Stop()
	done = ro.call("slow", 0.3, 1, 20*time.Second)
	roCall := d2.waitNewCall(nil)
	d2.update(key("h"))
	if s := d2.screen(); !strings.Contains(s, "this proxy takes no commands") {
		t.Errorf("h on a read-only proxy:\n%s", s)
	}
	if rep := rawCommand(t, ro.sockets, "ro", proxy.Command{Act: "hold", ID: &roCall.ID}); rep.Code != proxy.ReplyRefused || !strings.Contains(rep.Text, "read-only") {
		t.Errorf("a hold on a read-only proxy: %+v", rep)
	}
	if err := <-done; err != nil {
		t.Errorf("the call through the read-only proxy: %v", err)
	}
}

// rawCommand writes one command on a connection of its own and returns
// the reply.
func rawCommand(t *testing.T, dir, name string, c proxy.Command) trace.Record {
	t.Helper()
	conn, err := proxy.Attach(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(proxy.EncodeCommand(c)); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(conn)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var rec trace.Record
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Event == trace.EventReply {
			return rec
		}
	}
	t.Fatalf("no reply: %v", sc.Err())
	return trace.Record{}
}

// TestCommandSourcesAgree: the words the view looks for in a command's
// injected lines are the proxy's.
func TestCommandSourcesAgree(t *testing.T) {
	if ui.AttachCommandSource != proxy.CommandSource {
		t.Errorf("ui says %q, proxy %q", ui.AttachCommandSource, proxy.CommandSource)
	}
}
