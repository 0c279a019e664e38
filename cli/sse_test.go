package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"inflight/check"
	"inflight/exitcode"
)

// demo-server --sse serves the deprecated HTTP+SSE transport (beside
// Streamable HTTP); call and check speak it with --transport sse, and find
// it on their own from the bare URL.
func TestDemoServerSSE(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stderr := newSyncBuffer()
	served := make(chan int, 1)
	go func() {
		served <- Execute(ctx, []string{"demo-server", "--sse", "127.0.0.1:0"}, &bytes.Buffer{}, stderr)
	}()
	url := stderr.waitFor(t, regexp.MustCompile(`http://127\.0\.0\.1:\d+/sse`))
	defer func() {
		cancel()
		if code := <-served; code != 0 {
			t.Errorf("demo-server exit %d", code)
		}
	}()

	// stubborn ignores the cancel: its progress and answer come late on the
	// shared stream, and are flagged.
	code, stdout, errOut := inflight(t, "call", "--url", url, "--transport", "sse", "--tool", "stubborn",
		"--args", `{"seconds":0.8,"steps":8}`, "--cancel-after", "250ms", "--late-window", "2s", "--json")
	rep := decodeReport(t, stdout)
	if rep.Transport != "sse" || rep.Era != "legacy" || rep.ProtocolVersion != "2024-11-05" ||
		rep.Cancel == nil || *rep.Cancel.Signal != "notifications/cancelled" {
		t.Fatalf("exit %d %+v: %s", code, rep, errOut)
	}
	if rep.Late == nil || !rep.Late.Response || rep.Late.Crossed || rep.Late.ProgressAfterCancel == 0 {
		t.Errorf("late traffic not flagged: %+v", rep.Late)
	}
	if rep.State != "cancelled" {
		t.Errorf("state %s", rep.State)
	}

	// Detected from the bare URL: slow honours the cancel, and nothing
	// comes after it.
	code, stdout, errOut = inflight(t, "call", url, "--tool", "slow", "--args", `{"seconds":2}`, "--cancel-after", "200ms",
		"--late-window", "300ms", "--json")
	rep = decodeReport(t, stdout)
	if code != exitcode.Cancelled || rep.Transport != "sse" || rep.State != "cancelled" || (rep.Late != nil && rep.Late.Response) {
		t.Fatalf("detected: exit %d %+v: %s", code, rep, errOut)
	}

	code, stdout, errOut = inflight(t, "check", url, "--transport", "sse", "--args", `{"seconds":0.3,"steps":3}`,
		"--late-window", "300ms", "--json")
	var crep check.Report
	if err := json.Unmarshal([]byte(stdout), &crep); err != nil || code != 0 || crep.Summary.Pass == 0 || crep.Summary.Fail+crep.Summary.Warn > 0 {
		t.Errorf("check exit %d %+v (%v): %s\n%s", code, crep.Summary, err, errOut, stdout)
	}
	if !strings.Contains(stdout, `"sse"`) {
		t.Errorf("check report does not name the transport: %s", stdout)
	}
}
