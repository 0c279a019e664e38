//go:build unix

package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/internal/testkit/testbin"
	"inflight/proxy"
	"inflight/session"
	"inflight/ui"
	"inflight/wire"
)

// teaDriver runs a model as Bubble Tea would: every command in a
// goroutine of its own, every message back through Update on the test's
// goroutine.
type teaDriver[M tea.Model] struct {
	t    *testing.T
	m    M
	msgs chan tea.Msg
	quit bool
	// wait bounds until.
	wait time.Duration
}

func newTeaDriver[M tea.Model](t *testing.T, m M, wait time.Duration) *teaDriver[M] {
	d := &teaDriver[M]{t: t, m: m, msgs: make(chan tea.Msg, 4096), wait: wait}
	d.update(tea.WindowSizeMsg{Width: 120, Height: 35})
	d.run(m.Init())
	return d
}

func (d *teaDriver[M]) run(cmd tea.Cmd) {
	if cmd != nil {
		go func() { d.msgs <- cmd() }()
	}
}

func (d *teaDriver[M]) update(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			d.run(c)
		}
	case tea.QuitMsg:
		d.quit = true
	default:
		_, cmd := d.m.Update(msg)
		d.run(cmd)
	}
}

// until delivers messages until ok holds, failing after d.wait.
func (d *teaDriver[M]) until(what string, ok func() bool) {
	d.t.Helper()
	deadline := time.After(d.wait)
	for !ok() {
		select {
		case msg := <-d.msgs:
			d.update(msg)
		case <-deadline:
			d.t.Fatalf("waiting for %s; the screen:\n%s", what, d.screen())
		}
	}
}

func (d *teaDriver[M]) screen() string { return ansi.Strip(d.m.View().Content) }

// attachDriver drives a ui.Model, whose tracker the tests read.
type attachDriver struct{ *teaDriver[*ui.Model] }

func newAttachDriver(t *testing.T, m *ui.Model) *attachDriver {
	return &attachDriver{newTeaDriver(t, m, 10*time.Second)}
}

// request is the host's request of the method, if the view tracks one.
func (d *attachDriver) request(method string) *session.Request {
	tr := d.m.Tracker()
	for i := 0; i < tr.Len(); i++ {
		if r := tr.At(i); r.Method == method {
			return r
		}
	}
	return nil
}

// attachTo connects to the proxy name in dir (waiting for its socket) and
// makes the view cli's attach opens on it.
func attachTo(t *testing.T, dir, name string) (*ui.Model, net.Conn) {
	t.Helper()
	var conn net.Conn
	var err error
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if conn, err = proxy.Attach(dir, name); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	hello, err := proxy.ReadHello(br)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newAttachModel(hello, br, conn, false)
	if err != nil {
		t.Fatal(err)
	}
	return m, conn
}

// TestAttachViewOnRealProxy: `inflight proxy -- inflight demo-server`
// with go-sdk's client as the host, whose timeout (150 ms) is shorter than
// the demo's stubborn tool (600 ms, cancels ignored). The view cli's attach
// opens reads the proxy's socket and shows the host's request with its
// state and the late flag, agreeing with the proxy on every verdict; q
// detaches and the proxy goes on serving the host; a proxy that ends
// leaves the view up with what it saw.
func TestAttachViewOnRealProxy(t *testing.T) {
	bin := testbin.Build(t, "inflight")
	runDir := t.TempDir()
	cmd := exec.Command(bin, "proxy", "--name", "e2e", "--late-window", "2s", "--", bin, "demo-server")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runDir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk-host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	sockets := filepath.Join(runDir, "inflight")

	m, conn := attachTo(t, sockets, "e2e")
	d := newAttachDriver(t, m)
	callCtx, callCancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, err = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "stubborn", Arguments: map[string]any{"seconds": 0.6, "steps": 6}})
	callCancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the host's call ended with %v, want its own timeout", err)
	}
	d.until("the late response to the host's call", func() bool {
		r := d.request(wire.MethodToolsCall)
		return r != nil && r.Late.Response
	})
	call := d.request(wire.MethodToolsCall)
	if !call.ByHost || call.Cancel == nil || call.Cancel.Cause != session.CauseHost || call.Late.Crossed ||
		(call.State != session.StateCancelRequested && call.State != session.StateCancelled) {
		t.Errorf("the host's call: state %s cancel %+v late %+v; want cancelled by the host, answered late", call.State, call.Cancel, call.Late)
	}
	screen := d.screen()
	for _, want := range []string{"attach e2e · host <-> ", "⇄ stubborn", "⚑ late response"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	d.until("the late window's end", func() bool { return call.State == session.StateCancelled })
	if n := m.Disagreements(); n != 0 {
		t.Errorf("the view disagrees with the proxy %d times:\n%s", n, d.screen())
	}

	// q detaches; the proxy serves the host as before, and can be
	// attached to again.
	d.update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	d.until("the view to quit", func() bool { return d.quit })
	m.Stop()
	conn.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("after the detach, the host's tools/list: %v", err)
	}
	m2, conn2 := attachTo(t, sockets, "e2e")
	defer conn2.Close()
	d2 := newAttachDriver(t, m2)
	d2.until("the history, tools/list included", func() bool {
		r := d2.request(wire.MethodToolsList)
		return r != nil && r.State == session.StateCompleted
	})

	// Printing as before: with --plain, and when stdout is not a terminal.
	var printers []*exec.Cmd
	var outs []*strings.Builder
	for _, args := range [][]string{{"attach", "--plain", "e2e"}, {"attach", "e2e"}} {
		p := exec.Command(bin, args...)
		p.Env = cmd.Env
		out := &strings.Builder{}
		p.Stdout = out
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		printers, outs = append(printers, p), append(outs, out)
	}
	time.Sleep(200 * time.Millisecond) // both connected: they print until the proxy ends

	// The host goes; the proxy ends; the view stays with what it saw.
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	d2.until("the proxy's end", func() bool { return strings.Contains(d2.screen(), "the proxy ended") })
	if r := d2.request(wire.MethodToolsCall); r == nil || !r.Late.Response || !strings.Contains(d2.screen(), "⇄ stubborn") {
		t.Errorf("after the proxy ended, the view lost the host's call:\n%s", d2.screen())
	}
	if n := m2.Disagreements(); n != 0 {
		t.Errorf("the second view disagrees with the proxy %d times:\n%s", n, d2.screen())
	}
	m2.Stop()
	for i, p := range printers {
		if err := p.Wait(); err != nil {
			t.Errorf("%v: %v", p.Args, err)
		}
		if out := outs[i].String(); !strings.HasPrefix(out, `{"stream":"trace","proxy":"e2e"`) || !strings.Contains(out, `"dir":"out","by":"host"`) ||
			!strings.Contains(out, `"verdict":"late"`) {
			t.Errorf("%v printed:\n%.2000s", p.Args, out)
		}
	}
}

// TestAttachViewAgreesOnAFlood: the host gives up on the demo's flood of
// progress after 20 ms, and hundreds of progress notifications follow its
// cancel; the proxy judges each, the view judges each again from the
// stream, and they reach the same verdict on every one. (The stream
// carries the proxy's positions in the server's output too, so that a
// line written before the cancel and read after it would be judged
// crossed alike; on loopback the proxy reads too fast for one here.)
func TestAttachViewAgreesOnAFlood(t *testing.T) {
	bin := testbin.Build(t, "inflight")
	runDir := t.TempDir()
	cmd := exec.Command(bin, "proxy", "--name", "flood", "--late-window", "300ms", "--", bin, "demo-server")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runDir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk-host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	m, conn := attachTo(t, filepath.Join(runDir, "inflight"), "flood")
	defer conn.Close()
	d := newAttachDriver(t, m)
	callCtx, callCancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "flood", Arguments: map[string]any{"count": 20000},
		Meta: mcp.Meta{"progressToken": "flood-1"}})
	callCancel()
	if err == nil {
		t.Skip("the flood ended before the host's 20 ms timeout: nothing crossed")
	}
	d.until("the flood's fate", func() bool {
		r := d.request(wire.MethodToolsCall)
		return r != nil && r.State.IsFinal()
	})
	r := d.request(wire.MethodToolsCall)
	t.Logf("flood: %s, %d progress, %d crossed, %d after the cancel; late %+v", r.State, r.Progress.Count, r.Late.ProgressCrossed, r.Late.ProgressAfterCancel, r.Late)
	if r.Cancel == nil || r.Cancel.Cause != session.CauseHost {
		t.Fatalf("the flood was not cancelled by the host: %+v", r.Cancel)
	}
	if n := m.Disagreements(); n != 0 {
		t.Errorf("the view disagrees with the proxy %d times:\n%s", n, d.screen())
	}
	m.Stop()
}

// TestAttachViewFollowsARuleCancel: a --rule cancels the host's call
// upstream on the host's behalf; the view follows inflight's cancel as the
// proxy's tracker does (the user's cause, the server's answer after it
// late) and agrees with the proxy on everything.
func TestAttachViewFollowsARuleCancel(t *testing.T) {
	bin := testbin.Build(t, "inflight")
	runDir := t.TempDir()
	cmd := exec.Command(bin, "proxy", "--name", "rule", "--late-window", "2s", "--rule", "tools/call stubborn: cancel 100ms", "--", bin, "demo-server")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runDir)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk-host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	m, conn := attachTo(t, filepath.Join(runDir, "inflight"), "rule")
	defer conn.Close()
	d := newAttachDriver(t, m)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "stubborn", Arguments: map[string]any{"seconds": 0.4, "steps": 2}}); err == nil {
		t.Fatal("the rule's cancel did not answer the host with an error")
	}
	d.until("the server's answer after inflight's cancel", func() bool {
		r := d.request(wire.MethodToolsCall)
		return r != nil && r.Late.Response
	})
	r := d.request(wire.MethodToolsCall)
	if r.Cancel == nil || r.Cancel.Cause != session.CauseUser || r.Late.Crossed || r.State != session.StateCancelled {
		t.Errorf("the host's call: state %s cancel %+v late %+v; want inflight's cancel, answered late", r.State, r.Cancel, r.Late)
	}
	if s := d.screen(); !strings.Contains(s, "⇄ stubborn") || !strings.Contains(s, "⚑ late response") {
		t.Errorf("the screen:\n%s", s)
	}
	if n := m.Disagreements(); n != 0 {
		t.Errorf("the view disagrees with the proxy %d times:\n%s", n, d.screen())
	}
	m.Stop()
}

// A view on a proxy (not in the proxy's process) names the host's
// transport from the proxy's hello before the host's first message shows
// its era: "http" on the HTTP proxy (it said stdio there, a review's
// finding), "stdio" on the stdio one; and the help says how the host
// cancels on it.
func TestAttachViewSaysTheProxysTransport(t *testing.T) {
	for _, tc := range []struct {
		transport, help string
		run             func(ctx context.Context, opts proxy.Options) error
	}{
		{"http", "On HTTP the host cancels by closing its request's stream", func(ctx context.Context, opts proxy.Options) error {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			_, err = proxy.RunHTTP(ctx, l, "http://127.0.0.1:9/mcp", opts)
			return err
		}},
		{"stdio", "On stdio the host cancels with notifications/cancelled", func(ctx context.Context, opts proxy.Options) error {
			in, w := io.Pipe()
			go func() { <-ctx.Done(); w.Close() }() // the host closes the proxy's stdin
			_, err := proxy.Run(ctx, proxy.Host{In: in, Out: io.Discard}, "cat", nil, opts)
			return err
		}},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			dir := privateDir(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				opts := proxy.Options{Name: "p", Stderr: &lockedBuffer{}, SocketDir: dir, ShutdownWait: 200 * time.Millisecond}
				if err := tc.run(ctx, opts); err != nil {
					t.Errorf("the %s proxy: %v", tc.transport, err)
				}
			}()
			defer func() { cancel(); <-done }()
			var conn net.Conn
			var err error
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if conn, err = proxy.Attach(dir, "p"); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal(err)
				}
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			hello, err := proxy.ReadHello(br)
			if err != nil {
				t.Fatal(err)
			}
			if hello.Transport != tc.transport {
				t.Errorf("the hello's transport: %q", hello.Transport)
			}
			m, err := newAttachModel(hello, br, conn, false)
			if err != nil {
				t.Fatal(err)
			}
			d := newAttachDriver(t, m)
			defer m.Stop()
			// "inflight · attach p · host <-> COMMAND · http   ● connected"
			header := strings.SplitN(d.screen(), "\n", 2)[0]
			other := map[string]string{"http": "stdio", "stdio": "http"}[tc.transport]
			if !strings.Contains(header, "· "+tc.transport+" ") || strings.Contains(header, "· "+other+" ") {
				t.Errorf("the header of a view on the %s proxy: %q", tc.transport, header)
			}
			d.update(tea.KeyPressMsg{Code: '?', Text: "?"})
			if s := d.screen(); !strings.Contains(s, tc.help) {
				t.Errorf("the help of a view on the %s proxy lacks %q:\n%s", tc.transport, tc.help, s)
			}
		})
	}
}
