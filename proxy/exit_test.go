package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"inflight/internal/testkit/testbin"
)

// gone reports whether no process has pid any more (reaped, not a zombie).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestHostClosesDeafServer: the host closes stdin, and the server neither
// exits at the end of its stdin nor on SIGTERM: the proxy escalates to
// SIGKILL, and nothing is left running.
func TestHostClosesDeafServer(t *testing.T) {
	cmd, env := helper(t, "deaf")
	h := newHost(t)
	var stderr syncBuffer
	wait := run(t, h, cmd, Options{Env: env, Stderr: &stderr, ShutdownWait: 100 * time.Millisecond})
	time.Sleep(50 * time.Millisecond) // let it install its SIGTERM handler
	h.inW.Close()
	res := wait()
	if res.End != EndHostClosed || res.Stopped != "SIGKILL" {
		t.Errorf("end %v stopped %q, want the host's close and SIGKILL", res.End, res.Stopped)
	}
	if !gone(res.PID) {
		t.Errorf("the server (pid %d) outlived the proxy", res.PID)
	}
	if !strings.Contains(stderr.String(), "did not exit within 100ms of its stdin closing: it took SIGKILL") {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// TestHostGivesUpWithoutCancelling: the host leaves with a request in
// flight and no cancel sent; the proxy says so.
func TestHostGivesUpWithoutCancelling(t *testing.T) {
	dir := t.TempDir()
	send := filepath.Join(dir, "send")
	if err := os.WriteFile(send, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, env := helper(t, "script", "SEND="+send, "GOT="+filepath.Join(dir, "got"))
	h := newHost(t)
	var stderr syncBuffer
	wait := run(t, h, cmd, Options{Name: "quiet", Env: env, Stderr: &stderr})
	io.WriteString(h.inW, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	h.inW.Close()
	if res := wait(); res.End != EndHostClosed || !gone(res.PID) {
		t.Errorf("end %v, server gone %v", res.End, gone(res.PID))
	}
	if want := "inflight proxy quiet: ⚑ host gave up without cancelling tools/call slow (id 5)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}

// TestServerDiesHostSeesEOF runs the real command: the server exits (status
// 7) while the host keeps its end open; the host reads what the server
// wrote and then the end of the proxy's stdout, and the proxy exits 5
// saying why.
func TestServerDiesHostSeesEOF(t *testing.T) {
	inflight := testbin.Build(t, "inflight")
	exe, env := helper(t, "die")
	cmd := exec.Command(inflight, "proxy", "--name", "dying", "--", exe)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close() // the host never closes it before the end
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err = <-waited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the proxy did not exit when its server did")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 5 {
		t.Errorf("exit %v, want 5 (connection lost)", err)
	}
	if !strings.Contains(stdout.String(), `"data":"bye"`) {
		t.Errorf("the host did not get the server's last line: %q", stdout.String())
	}
	for _, want := range []string{"helper dies now\n", "inflight proxy dying: the server exited: exit status 7; the host's connection is closed"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestHostStopsReading: a host that never reads the proxy's stdout and
// then closes stdin while the server floods: the server is stopped and
// Run returns, although the forwarder to the host is stuck in a write.
func TestHostStopsReading(t *testing.T) {
	cmd, env := helper(t, "flood", "N=1000000")
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	done := make(chan Result, 1)
	go func() {
		res, err := Run(context.Background(), Host{In: inR, Out: outW}, cmd, nil, Options{Env: env, ShutdownWait: 100 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	time.Sleep(100 * time.Millisecond) // the pipe to the host fills
	inW.Close()
	select {
	case res := <-done:
		if res.End != EndHostClosed || !gone(res.PID) {
			t.Errorf("end %v, server gone %v", res.End, gone(res.PID))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return with the host's stdout blocked")
	}
	// The host's end goes: the stuck forwarder ends too (goleak checks).
	outR.Close()
	outW.Close()
}

// TestNothingLeftBehind: a server that leaves a helper in its process
// group, holding its stdout, exits when the host closes; the helper is
// stopped too, and the proxy does not wait on the pipe it holds.
func TestNothingLeftBehind(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd, env := helper(t, "spawner", "PIDFILE="+pidFile)
	h := newHost(t)
	wait := run(t, h, cmd, Options{Env: env, ShutdownWait: 200 * time.Millisecond})
	var pid int
	for deadline := time.Now().Add(5 * time.Second); pid == 0; time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(b))
		if time.Now().After(deadline) {
			t.Fatal("the helper never started")
		}
	}
	h.inW.Close()
	start := time.Now()
	res := wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the proxy took %v to end", took)
	}
	for deadline := time.Now().Add(2 * time.Second); !gone(pid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone(res.PID) || !gone(pid) {
		t.Errorf("left behind: server %d gone %v, its helper %d gone %v", res.PID, gone(res.PID), pid, gone(pid))
	}
}
