//go:build unix

package client_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// Tests with a real child process: the test binary re-executed as a small
// stdio server (see runChild in main_test.go).

func childConfig(mode string) client.Config {
	return client.Config{
		Command: os.Args[0],
		Args:    []string{"-test.run=^$"},
		// Under -race the runtime sleeps a second before a process exits
		// (GORACE atexit_sleep_ms); a child that exits at EOF must not look
		// like one that ignores it.
		Env: []string{childEnv + "=" + mode, "INFLIGHT_CHILD_VALUE=from the test", "GORACE=atexit_sleep_ms=0"},
		// The child answers the probe with method-not-found at once.
		ProbeTimeout: 5 * time.Second,
		ShutdownWait: 300 * time.Millisecond,
	}
}

// childPID asks the child for its working directory, environment value and
// process ID.
func childEnvInfo(t *testing.T, c *client.Client, rec *recorder, id int64) (value, cwd string, pid int) {
	t.Helper()
	rid := send(t, c, id, "test/env", nil)
	ev := rec.wait(t, "the env answer", responseTo(rid))
	var res struct {
		Value string `json:"value"`
		Cwd   string `json:"cwd"`
		PID   int    `json:"pid"`
	}
	if err := json.Unmarshal(ev.Msg.Result, &res); err != nil {
		t.Fatalf("env answer %s: %v", ev.Raw, err)
	}
	return res.Value, res.Cwd, res.PID
}

// processGone reports whether pid no longer exists (reaped, not a zombie).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestChildSpawnEnvDirStderr(t *testing.T) {
	dir := t.TempDir()
	cfg := childConfig("server")
	cfg.Dir = dir
	c, rec, info := connectClient(t, cfg)
	if info.Era != event.EraLegacy || info.ServerName != "child" {
		t.Fatalf("info %+v", info)
	}
	value, cwd, pid := childEnvInfo(t, c, rec, 1)
	if value != "from the test" {
		t.Errorf("child env value %q", value)
	}
	want, _ := filepath.EvalSymlinks(dir)
	if got, _ := filepath.EvalSymlinks(cwd); got != want {
		t.Errorf("child cwd %q, want %q", cwd, want)
	}
	for _, line := range []string{"child started", "mode server"} {
		rec.wait(t, "stderr line "+line, func(ev event.Event) bool { return ev.Kind == event.Stderr && ev.Text == line })
	}
	// stderr is never an error.
	if n := rec.count(kind(event.RequestFailed)) + rec.count(kind(event.Malformed)); n != 0 {
		t.Errorf("stderr produced %d failures", n)
	}
	// A graceful Close: the child exits at stdin EOF, no signal needed.
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > cfg.ShutdownWait {
		t.Errorf("Close of a child that exits at EOF took %s", d)
	}
	ev := rec.wait(t, "the closure", kind(event.TransportClosed))
	if ev.Err != nil {
		t.Errorf("clean Close reported %v", ev.Err)
	}
	if !processGone(pid) {
		t.Errorf("child %d still exists after Close", pid)
	}
}

func TestChildExitsMidRequest(t *testing.T) {
	c, rec, _ := connectClient(t, childConfig("server"))
	tr := session.NewTracker(session.Config{})
	for _, m := range []string{"test/hang", "test/hang", "test/exit"} {
		r := tr.Begin(m, nil, session.RequestOptions{}, time.Now())
		n, _ := r.ID.Int()
		send(t, c, n, m, nil)
	}
	ev := rec.wait(t, "the closure", kind(event.TransportClosed))
	if ev.Err == nil || !strings.Contains(ev.Err.Error(), "exit status 3") {
		t.Errorf("closure cause %v, want the exit status", ev.Err)
	}
	rec.wait(t, "the child's last words", func(ev event.Event) bool {
		return ev.Kind == event.Stderr && ev.Text == "exiting mid-request"
	})
	for _, e := range rec.all() {
		tr.Apply(e)
	}
	for i := 1; i <= 3; i++ {
		if r, _ := tr.Get(wire.IntID(int64(i))); r.State != session.StateConnectionLost {
			t.Errorf("request %d is %s, want connection_lost", i, r.State)
		}
	}
	if _, err := c.Cancel(wire.IntID(1), ""); !errors.Is(err, client.ErrNotInFlight) {
		t.Errorf("Cancel after the exit = %v, want ErrNotInFlight (nothing may be sent)", err)
	}
}

func TestChildShutdownEscalation(t *testing.T) {
	cfg := childConfig("stubborn")
	c, rec, _ := connectClient(t, cfg)
	_, _, pid := childEnvInfo(t, c, rec, 1)
	rec.wait(t, "the child running", func(ev event.Event) bool { return ev.Kind == event.Stderr && ev.Text == "mode stubborn" })
	start := time.Now()
	c.Close()
	took := time.Since(start)
	// stdin EOF is ignored (one wait), SIGTERM is ignored (another wait),
	// SIGKILL works.
	if took < 2*cfg.ShutdownWait {
		t.Errorf("Close took %s: a child ignoring EOF and SIGTERM cannot be gone before two waits of %s", took, cfg.ShutdownWait)
	}
	if took > 3*cfg.ShutdownWait+2*time.Second {
		t.Errorf("Close took %s, beyond its bound", took)
	}
	if !processGone(pid) {
		t.Errorf("child %d survived the escalation", pid)
	}
	t.Logf("escalation to SIGKILL took %s (ShutdownWait %s)", took, cfg.ShutdownWait)
}

func TestChildClosesStdoutKeepsRunning(t *testing.T) {
	cfg := childConfig("server")
	c, rec, _ := connectClient(t, cfg)
	_, _, pid := childEnvInfo(t, c, rec, 1)
	tr := session.NewTracker(session.Config{})
	tr.Begin("test/env", nil, session.RequestOptions{}, time.Now())
	tr.Begin("test/hang", nil, session.RequestOptions{}, time.Now())
	send(t, c, 2, "test/hang", nil)
	start := time.Now()
	send(t, c, 3, "test/closestdout", nil)
	ev := rec.wait(t, "the closure", kind(event.TransportClosed))
	if ev.Err == nil || !strings.Contains(ev.Err.Error(), "closed its stdout but kept running") {
		t.Errorf("closure cause %v", ev.Err)
	}
	// Reported once the exit wait is over, not after the whole escalation.
	if d := ev.Time.Sub(start); d > cfg.ShutdownWait+time.Second {
		t.Errorf("closure reported %s after stdout closed", d)
	}
	for _, e := range rec.all() {
		tr.Apply(e)
	}
	if r, _ := tr.Get(wire.IntID(2)); r.State != session.StateConnectionLost {
		t.Errorf("request 2 is %s, want connection_lost", r.State)
	}
	// The client stops the process on its own (SIGTERM works for this one).
	deadline := time.Now().Add(waitLimit)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling the OS: there is no event for a reaped process
	}
}
