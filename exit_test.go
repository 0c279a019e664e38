//go:build linux

// The exit-path tests run inflight as a process — this test binary, which
// runs main() itself when asMainEnv is set (TestMain) — against a hostile
// server that is the same binary again, and read /proc to see what is left
// running afterwards.

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"inflight/internal/testkit/hostile"
	"inflight/trace"
	"inflight/wire"
)

// asMainEnv makes the test binary run main(): it is then inflight, signal
// handling and all.
const asMainEnv = "INFLIGHT_EXIT_TEST_MAIN"

func TestMain(m *testing.M) {
	hostile.RunFromEnv()
	if os.Getenv(asMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// run is one inflight process under test.
type run struct {
	t      *testing.T
	cmd    *exec.Cmd
	record string // what the server received
	trace  string
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// startInflight starts inflight with args before "--", the hostile peer
// as its stdio server, and stdout (and stdin, for the TUI) as given.
func startInflight(t *testing.T, peer hostile.Stdio, stdout *os.File, setup func(*exec.Cmd), args ...string) *run {
	t.Helper()
	dir := t.TempDir()
	r := &run{t: t, record: filepath.Join(dir, "received.jsonl"), trace: filepath.Join(dir, "trace.jsonl"), done: make(chan struct{})}
	exe, env, err := hostile.Command(peer, r.record)
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string(nil), args...)
	if args[0] == "call" {
		full = append(full, "--trace", r.trace)
	} else {
		r.trace = "" // the TUI writes no trace of its own
	}
	for _, kv := range env {
		full = append(full, "--env", kv)
	}
	full = append(full, "--", exe)
	r.cmd = exec.Command(exe, full...)
	r.cmd.Env = append(os.Environ(), asMainEnv+"=1", "GORACE=atexit_sleep_ms=0")
	r.cmd.Stdout = stdout
	r.cmd.Stderr = &r.stderr
	if setup != nil {
		setup(r.cmd)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		// Whatever the test found, no server outlives it.
		for _, pid := range serversOf(r.record) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return r
}

// waitReceived waits until the server received a line holding substr.
func (r *run) waitReceived(substr string) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(r.record)
		if bytes.Contains(data, []byte(substr)) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the server never received %q; inflight's stderr:\n%s", substr, r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait waits for inflight to exit and returns its exit code (-1 and the
// signal's name when a signal killed it).
func (r *run) wait(limit time.Duration) (int, string) {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		r.t.Fatalf("inflight did not exit within %s; its stderr:\n%s", limit, r.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(r.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, ws.Signal().String()
		}
		return ee.ExitCode(), ""
	}
	return 0, ""
}

// assertCleanExit checks what every interrupted exit must leave: the
// server received notifications/cancelled with reason, the server's
// process is gone, and (for call) the trace is whole — every line a
// record, the cancel in it, the connection's close last.
func (r *run) assertCleanExit(reason string) {
	r.t.Helper()
	data, _ := os.ReadFile(r.record)
	got := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		m, err := wire.Decode(line)
		if err != nil || m.Method != wire.NotifyCancelled {
			continue
		}
		if c, err := wire.DecodeCancelled(m.Params); err == nil && c.Reason == reason {
			got = true
		}
	}
	if !got {
		r.t.Errorf("the server received no notifications/cancelled with reason %q; it received:\n%s", reason, data)
	}
	if pids := serversOf(r.record); len(pids) > 0 {
		r.t.Errorf("the server is still running after inflight exited: pids %v", pids)
	}
	if r.trace == "" {
		return
	}
	f, err := os.Open(r.trace)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	recs, bad, err := trace.ReadAll(f)
	if err != nil || len(bad) > 0 || len(recs) == 0 {
		r.t.Fatalf("the trace is not whole: %v, bad lines %v, %d records", err, bad, len(recs))
	}
	sent := false
	for _, rec := range recs {
		if rec.Event == trace.EventCancelSent && rec.Reason == reason {
			sent = true
		}
	}
	if !sent {
		r.t.Errorf("the trace has no cancel_sent with reason %q", reason)
	}
	if last := recs[len(recs)-1]; last.Event != trace.EventTransportClosed {
		r.t.Errorf("the trace ends with %s %s, not the connection's close", last.Event, last.Msg)
	}
}

// serversOf lists the running processes whose environment names record:
// the hostile server of one run, wherever it was reparented to.
func serversOf(record string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	needle := []byte(hostile.EnvRecord + "=" + record + "\x00")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		// A zombie has exited; only its parent's wait is missing.
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// readLines reads n lines from r, failing the test after limit.
func readLines(t *testing.T, r *os.File, n int, limit time.Duration) []string {
	t.Helper()
	lines := make(chan []string, 1)
	go func() {
		var got []string
		br := bufio.NewReader(r)
		for len(got) < n {
			l, err := br.ReadString('\n')
			if err != nil {
				break
			}
			got = append(got, l)
		}
		lines <- got
	}()
	select {
	case got := <-lines:
		if len(got) < n {
			t.Fatalf("inflight printed %d lines, want %d: %q", len(got), n, got)
		}
		return got
	case <-time.After(limit):
		t.Fatalf("inflight did not print %d lines within %s", n, limit)
		return nil
	}
}

// `inflight call … | head -2` against a server that says nothing more once
// called: head reads the connection and request lines and exits. inflight
// must notice the pipe's reader gone without a write to find it (it has
// nothing to write while it waits), cancel, and end. Before, it waited for
// the call's timeout and then died of SIGPIPE on its summary.
func TestExitStdoutPipeClosedWhileSilent(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r := startInflight(t, hostile.Silent, pw, nil, "call", "--tool", hostile.ToolName, "--late-window", "200ms")
	pw.Close()
	readLines(t, pr, 2, 10*time.Second)
	r.waitReceived(wire.MethodToolsCall)
	pr.Close() // what head does after its second line
	code, sig := r.wait(10 * time.Second)
	if sig != "" || code != 4 {
		t.Errorf("inflight ended with exit %d %s, want 4 (cancelled); stderr:\n%s", code, sig, r.stderr.String())
	}
	r.assertCleanExit("interrupted (SIGPIPE)")
}

// The same through a write: stdout is a socket (where nothing tells of the
// reader's end until a write fails) and the server reports progress all
// the time, which inflight prints. The first write after the close fails
// with EPIPE (and raises SIGPIPE): before, that killed inflight (exit
// 141), with no cancel sent and the trace cut.
func TestExitStdoutClosedOnWrite(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "reader"), os.NewFile(uintptr(fds[1]), "stdout")
	r := startInflight(t, hostile.Ticks, theirs, nil, "call", "--tool", hostile.ToolName, "--late-window", "200ms")
	theirs.Close()
	readLines(t, ours, 3, 10*time.Second) // connected, the request, a first progress line
	ours.Close()
	code, sig := r.wait(10 * time.Second)
	if sig != "" || code != 4 {
		t.Errorf("inflight ended with exit %d %s, want 4 (cancelled); stderr:\n%s", code, sig, r.stderr.String())
	}
	r.assertCleanExit("interrupted (SIGPIPE)")
}

// kill -HUP (the terminal closed): a shutdown like SIGTERM. Before, Go's
// default ended inflight at once, and the server — in its own process
// group, so it got no hangup — was left running.
func TestExitSIGHUPCall(t *testing.T) {
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	r := startInflight(t, hostile.Silent, out, nil, "call", "--tool", hostile.ToolName, "--late-window", "200ms")
	r.waitReceived(wire.MethodToolsCall)
	if err := r.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	code, sig := r.wait(10 * time.Second)
	if sig != "" || code != 4 {
		t.Errorf("inflight ended with exit %d %s, want 4 (cancelled); stderr:\n%s", code, sig, r.stderr.String())
	}
	r.assertCleanExit("interrupted (SIGHUP)")
	if data, _ := os.ReadFile(out.Name()); !bytes.Contains(data, []byte(`reason "interrupted (SIGHUP)"`)) {
		t.Errorf("the summary does not name the hangup:\n%s", data)
	}
}

// The TUI on a real pseudo-terminal whose other end is closed — what
// closing the terminal window or `tmux kill-session` does: the kernel
// hangs up the session (SIGHUP), and reads and writes on the terminal fail
// from then on. The request in flight is cancelled and the server ended.
func TestExitTerminalClosedTUI(t *testing.T) {
	master, slave := openPTY(t)
	r := startInflight(t, hostile.Silent, slave, func(cmd *exec.Cmd) {
		cmd.Stdin = slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}, "--call", hostile.ToolName)
	slave.Close()
	// Drain the screen, as a terminal does.
	go func() {
		buf := make([]byte, 32<<10)
		for {
			if _, err := master.Read(buf); err != nil {
				return
			}
		}
	}()
	r.waitReceived(wire.MethodToolsCall)
	master.Close() // the terminal goes away
	code, sig := r.wait(15 * time.Second)
	if sig != "" {
		t.Errorf("inflight was killed by %s; stderr:\n%s", sig, r.stderr.String())
	}
	_ = code
	r.assertCleanExit("interrupted (SIGHUP)")
}

// openPTY opens a pseudo-terminal pair with the window size of a terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 35, Col: 120}); err != nil {
		t.Fatal(err)
	}
	return m, s
}
