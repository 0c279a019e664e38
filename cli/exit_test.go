//go:build linux

// The exit-path tests read /proc to find the server's process and count
// this process's file descriptors.

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/internal/testkit/hostile"
	"inflight/session"
	"inflight/target"
	"inflight/ui"
	"inflight/wire"
)

// Every way the TUI can end — q, Ctrl+C with a request in flight, after the
// server died, a panic inside the UI — must leave nothing behind: the
// server's process has exited and been reaped, and this process holds no
// more file descriptors than before. The TUI runs on a real Bubble Tea
// program with pipes for a terminal, through the same runProgram the
// command uses, against a real child process.

// probe wraps the TUI's model inside the program: after every Update it
// takes a snapshot of what the test needs (read on the program's goroutine,
// so without racing it), and it panics on demand, as a bug in Update would.
type probe struct {
	m       *ui.Model
	trigger chan struct{} // closed: deliver panicMsg
	stop    chan struct{} // closed at the end of the test

	mu      sync.Mutex
	snap    snapshot
	changed chan struct{}
}

// snapshot is what the test can see of the running TUI.
type snapshot struct {
	screen   string
	requests []session.Request
	closed   bool
}

// panicMsg makes the probe panic inside Update.
type panicMsg struct{}

func newProbe(m *ui.Model) *probe {
	return &probe{m: m, trigger: make(chan struct{}), stop: make(chan struct{}), changed: make(chan struct{})}
}

func (p *probe) Init() tea.Cmd {
	trigger, stop := p.trigger, p.stop
	return tea.Batch(p.m.Init(), func() tea.Msg {
		select {
		case <-trigger:
			return panicMsg{}
		case <-stop:
			return nil
		}
	})
}

func (p *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(panicMsg); ok {
		panic("injected: a bug inside the UI")
	}
	_, cmd := p.m.Update(msg)
	s := snapshot{screen: ansi.Strip(p.m.View().Content)}
	tr := p.m.Tracker()
	for i := 0; i < tr.Len(); i++ {
		r := *tr.At(i)
		if r.Cancel != nil {
			c := *r.Cancel
			r.Cancel = &c
		}
		s.requests = append(s.requests, r)
	}
	s.closed, _ = tr.TransportClosed()
	p.mu.Lock()
	p.snap = s
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	return p, cmd
}

func (p *probe) View() tea.View { return p.m.View() }

// wait returns the first snapshot for which cond holds.
func (p *probe) wait(t *testing.T, what string, cond func(s snapshot) bool) snapshot {
	t.Helper()
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		s, changed := p.snap, p.changed
		p.mu.Unlock()
		if cond(s) {
			return s
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%s: not within 15s; the screen shows:\n%s", what, s.screen)
		}
	}
}

// toolCall finds the tools/call request in a snapshot.
func (s snapshot) toolCall() (session.Request, bool) {
	for _, r := range s.requests {
		if r.Method == wire.MethodToolsCall {
			return r, true
		}
	}
	return session.Request{}, false
}

// tui is one run of the TUI on a program fed through pipes.
type tui struct {
	t     *testing.T
	probe *probe
	keys  *io.PipeWriter // the program's input: what a person types
	out   *syncBuffer
	ended chan error
	child int
}

// callFlags reads --call flags as the command does.
func callFlags(t *testing.T, flags ...string) []ui.Call {
	t.Helper()
	var calls []ui.Call
	for _, f := range flags {
		_, params, err := ParseCallFlag(f)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, ui.Call{Method: wire.MethodToolsCall, Params: params})
	}
	return calls
}

// startTUI runs the TUI on target, as the command does, and waits for the
// server's process to appear.
func startTUI(t *testing.T, target target.Target, opts InteractiveOptions, more ...tea.ProgramOption) *tui {
	return startTUIContext(t, context.Background(), target, opts, more...)
}

// startTUIContext is startTUI with the context main passes (signals).
func startTUIContext(t *testing.T, ctx context.Context, target target.Target, opts InteractiveOptions, more ...tea.ProgramOption) *tui {
	t.Helper()
	m, err := newInteractiveModel(context.Background(), target, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	// An io.Pipe, not an *os.File: on the panic path Bubble Tea closes its
	// input reader without waiting for the goroutine reading it, which on
	// a file is a data race (inside Bubble Tea) that -race reports.
	inR, inW := io.Pipe()
	u := &tui{t: t, probe: newProbe(m), keys: inW, out: newSyncBuffer(), ended: make(chan error, 1)}
	go func() {
		err := runProgram(ctx, u.probe, m, append([]tea.ProgramOption{tea.WithInput(inR), tea.WithOutput(u.out), tea.WithWindowSize(120, 35)}, more...)...)
		inR.Close()
		u.ended <- err
	}()
	t.Cleanup(func() {
		close(u.probe.stop)
		inW.Close()
	})
	u.child = waitForChild(t)
	return u
}

// press types keys.
func (u *tui) press(keys string) {
	u.t.Helper()
	if _, err := io.WriteString(u.keys, keys); err != nil {
		u.t.Fatal(err)
	}
}

// end waits for the program (and runProgram's close of the connection)
// to finish and returns why it ended.
func (u *tui) end() error {
	u.t.Helper()
	select {
	case err := <-u.ended:
		return err
	case <-time.After(20 * time.Second):
		u.t.Fatalf("the program did not end; the screen shows:\n%s", u.probe.snap.screen)
		return nil
	}
}

// assertNothingLeft checks that the server's process is gone — exited and
// reaped: a zombie would still be in /proc — and that the descriptors
// this process holds are back to what they were.
func (u *tui) assertNothingLeft(fdsBefore int) {
	u.t.Helper()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", u.child)); !errors.Is(err, os.ErrNotExist) {
		u.t.Errorf("the server's process %d is still there after the TUI ended (%v)", u.child, err)
	}
	if kids := children(u.t); len(kids) > 0 {
		u.t.Errorf("child processes left: %v", kids)
	}
	// The pipe standing for the terminal is this test's own; close it
	// before counting.
	u.keys.Close()
	assertFDs(u.t, fdsBefore)
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// fdTolerance allows for descriptors the runtime opens lazily on first
// use (the network poller's); each test warms those up before counting.
const fdTolerance = 0

// assertFDs checks the count is back to before. Closing is synchronous
// everywhere that matters, but the program's input reader may still be
// closing its cancel pipe: poll briefly.
func assertFDs(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := openFDs(t)
		if n <= before+fdTolerance {
			return
		}
		if time.Now().After(deadline) {
			ents, _ := os.ReadDir("/proc/self/fd")
			var links []string
			for _, e := range ents {
				l, _ := os.Readlink("/proc/self/fd/" + e.Name())
				links = append(links, e.Name()+"→"+l)
			}
			t.Errorf("%d file descriptors open after the TUI ended, %d before: %s", n, before, strings.Join(links, " "))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// warmUp opens what the runtime keeps once opened (the poller), so that
// counting descriptors before and after a test compares like with like.
func warmUp(t *testing.T) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Close()
	return openFDs(t)
}

// children lists the processes whose parent is this one.
func children(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	var kids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		fields := strings.Fields(string(rest))
		if len(fields) > 1 {
			if ppid, _ := strconv.Atoi(fields[1]); ppid == self {
				kids = append(kids, pid)
			}
		}
	}
	return kids
}

// waitForChild waits until this process has exactly one child, the server.
func waitForChild(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		switch kids := children(t); len(kids) {
		case 1:
			return kids[0]
		case 0:
		default:
			t.Fatalf("several child processes: %v", kids)
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's process never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// demoChild is the demo server as a real child: this test binary,
// re-executed as `demo-server` (see TestMain).
func demoChild(t *testing.T) target.Target {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: under -race a process sleeps a second before exiting.
	return target.Target{Command: exe, Args: []string{"demo-server"}, Env: []string{childEnv + "=1", "GORACE=atexit_sleep_ms=0"}}
}

func connectedWithTools(s snapshot) bool {
	return len(s.requests) > 0 && s.requests[0].Method == wire.MethodToolsList && s.requests[0].State == session.StateCompleted
}

func TestTUIExitQuit(t *testing.T) {
	fds := warmUp(t)
	u := startTUI(t, demoChild(t), InteractiveOptions{})
	u.probe.wait(t, "connected", connectedWithTools)
	u.press("q")
	if err := u.end(); err != nil {
		t.Fatalf("the program ended with %v", err)
	}
	u.assertNothingLeft(fds)
}

// Ctrl+C cancels what is in flight with reason "interrupted" — the server
// receives the notification — and then quits.
func TestTUIExitCtrlCCancelsFirst(t *testing.T) {
	fds := warmUp(t)
	target, record := silentChild(t)
	u := startTUI(t, target, InteractiveOptions{Calls: callFlags(t, hostile.ToolName)})
	s := u.probe.wait(t, "the tool call in flight", func(s snapshot) bool {
		r, ok := s.toolCall()
		return ok && !r.Sent.IsZero()
	})
	call, _ := s.toolCall()
	u.press("\x03") // Ctrl+C, as a terminal in raw mode delivers it
	if err := u.end(); err != nil {
		t.Fatalf("the program ended with %v", err)
	}
	u.assertNothingLeft(fds)
	last := u.probe.snap
	if r, _ := last.toolCall(); r.Cancel == nil || r.Cancel.Cause != session.CauseInterrupted || r.Cancel.Reason != "interrupted" {
		t.Errorf("the request's cancel: %+v", r.Cancel)
	}
	assertReceivedCancel(t, record, call.ID, "interrupted")
}

// assertReceivedCancel checks that a hostile child received
// notifications/cancelled for id with reason. The child wrote down every
// line it read and has exited, so the file is complete.
func assertReceivedCancel(t *testing.T, record string, id wire.ID, reason string) {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		m, err := wire.Decode(line)
		if err != nil || m.Method != wire.NotifyCancelled {
			continue
		}
		if c, err := wire.DecodeCancelled(m.Params); err == nil && c.RequestID == id && c.Reason == reason {
			return
		}
	}
	t.Errorf("the server received no notifications/cancelled for #%s with reason %q; it received:\n%s", id, reason, data)
}

// silentChild is a hostile child that never answers its tool and records
// what it receives.
func silentChild(t *testing.T) (target.Target, string) {
	t.Helper()
	record := filepath.Join(t.TempDir(), "received.jsonl")
	exe, env, err := hostile.Command(hostile.Silent, record)
	if err != nil {
		t.Fatal(err)
	}
	return target.Target{Command: exe, Env: env}, record
}

// bug: a SIGINT that arrives as a signal rather than as a key — kill -INT,
// or a terminal not in raw mode — ends the TUI without cancelling what is
// in flight. main cancels the program's context on SIGINT (NotifyContext),
// and Bubble Tea ends on a cancelled context, or on its own InterruptMsg,
// without the model ever seeing either (its tea.InterruptMsg case is never
// reached); the connection is then just closed. The same holds for
// SIGTERM (reason "shutdown"). This test stands for it with the context,
// as main passes it.
func TestTUIExitOnSIGINTCancelsFirst(t *testing.T) {
	fds := warmUp(t)
	target, record := silentChild(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u := startTUIContext(t, ctx, target, InteractiveOptions{Calls: callFlags(t, hostile.ToolName)})
	s := u.probe.wait(t, "the tool call in flight", func(s snapshot) bool {
		r, ok := s.toolCall()
		return ok && !r.Sent.IsZero()
	})
	call, _ := s.toolCall()
	cancel() // what main's signal.NotifyContext does on SIGINT
	_ = u.end()
	u.assertNothingLeft(fds)
	assertReceivedCancel(t, record, call.ID, "interrupted")
}

// The server dies: the request is lost, the banner says so, and q still
// quits cleanly.
func TestTUIExitAfterLostConnection(t *testing.T) {
	fds := warmUp(t)
	u := startTUI(t, demoChild(t), InteractiveOptions{Calls: callFlags(t, `slow={"seconds":30,"steps":300}`)})
	u.probe.wait(t, "the slow call running", func(s snapshot) bool {
		r, ok := s.toolCall()
		return ok && r.State == session.StateRunning
	})
	if err := syscall.Kill(u.child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s := u.probe.wait(t, "the connection lost", func(s snapshot) bool {
		r, _ := s.toolCall()
		return s.closed && r.State == session.StateConnectionLost
	})
	for _, want := range []string{"connection lost: the server exited: signal: killed", "press R to reconnect"} {
		if !strings.Contains(s.screen, want) {
			t.Errorf("the screen does not say %q:\n%s", want, s.screen)
		}
	}
	u.press("q")
	if err := u.end(); err != nil {
		t.Fatalf("the program ended with %v", err)
	}
	u.assertNothingLeft(fds)
}

// A panic inside the UI: Bubble Tea recovers it, restores the terminal and
// reports it; the connection is still closed and the server stopped.
func TestTUIExitAfterPanic(t *testing.T) {
	fds := warmUp(t)
	u := startTUI(t, demoChild(t), InteractiveOptions{Calls: callFlags(t, `slow={"seconds":30,"steps":300}`)})
	u.probe.wait(t, "the slow call running", func(s snapshot) bool {
		r, ok := s.toolCall()
		return ok && r.State == session.StateRunning
	})
	// Bubble Tea reports the panic and its stack on os.Stderr; keep it out
	// of the test's output, and check that it was reported. Nothing else
	// writes to os.Stderr meanwhile: this test does not run in parallel.
	report, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = report
	close(u.probe.trigger)
	err = u.end()
	os.Stderr = stderr
	report.Close()
	if !errors.Is(err, tea.ErrProgramPanic) {
		t.Fatalf("the program ended with %v, want a recovered panic", err)
	}
	if data, _ := os.ReadFile(report.Name()); !bytes.Contains(data, []byte("injected: a bug inside the UI")) {
		t.Errorf("the panic was not reported on stderr:\n%s", data)
	}
	u.assertNothingLeft(fds)
	// The terminal is given back: the alternate screen left, the cursor
	// shown, after the last frame.
	out := u.out.String()
	enter := strings.LastIndex(out, "\x1b[?1049h")
	leave := strings.LastIndex(out, "\x1b[?1049l")
	show := strings.LastIndex(out, "\x1b[?25h")
	if enter < 0 || leave < enter || show < enter {
		t.Errorf("the terminal was not restored after the panic (alt screen entered at %d, left at %d, cursor shown at %d of %d bytes)",
			enter, leave, show, len(out))
	}
}

// syncBuffer's String, for the program's output.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
