//go:build unix

package client_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// TestWrapperHelperEnded (issue 14, item 8): a wrapper script starts a
// helper (`sleep 300 &`, which holds the server's stdout and stderr) and
// execs the server. Before, the shutdown signalled only the server, so the
// helper outlived inflight, and since it held the pipes open every
// shutdown waited out its bounds (4.9 s a call instead of 0.3 s). Now what
// the server leaves in its process group is ended once it exits, and the
// wait on the pipes after the exit is bounded.
func TestWrapperHelperEnded(t *testing.T) {
	for _, tc := range []struct {
		name string
		peer hostile.Stdio
		end  func(t *testing.T, c *client.Client, rec *recorder)
	}{
		{"close", hostile.Garbage, func(t *testing.T, c *client.Client, rec *recorder) { c.Close() }},
		{"server crashes", hostile.Crashes, func(t *testing.T, c *client.Client, rec *recorder) {
			send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
			rec.wait(t, "the connection's end", kind(event.TransportClosed))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "helper.pid")
			script := filepath.Join(dir, "wrapper.sh")
			if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 300 &\necho $! > \"$HELPER_PID\"\nexec \"$SERVER\"\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			path, env, err := hostile.Command(tc.peer, "")
			if err != nil {
				t.Fatal(err)
			}
			env = append(env, "SERVER="+path, "HELPER_PID="+pidFile)
			c, rec, _ := connectClient(t, client.Config{Command: "/bin/sh", Args: []string{script}, Env: env,
				ProtocolVersion: wire.Version20251125, ShutdownWait: time.Second})
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			helper, err := strconv.Atoi(string(bytes.TrimSpace(b)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = killPID(helper) })
			start := time.Now()
			tc.end(t, c, rec)
			if d := time.Since(start); d > 700*time.Millisecond {
				t.Errorf("the end took %s: it waited on pipes the helper holds", d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			for !helperGone(helper) {
				if ctx.Err() != nil {
					t.Fatalf("the helper %d outlived the server", helper)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// helperGone: the process is gone, or a zombie waiting for a reaper that
// is not inflight (it was reparented when the wrapper exec'd and exited).
func helperGone(pid int) bool {
	if processGone(pid) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return processGone(pid)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
