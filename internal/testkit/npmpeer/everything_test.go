package npmpeer_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/npmpeer"
	"inflight/internal/testkit/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.RemoveAll()
	os.Exit(code)
}

// The TypeScript reference server's long-running tool keeps sending
// progress after a cancel (it never looks at it) and sends no response.
// inflight call must say exactly that, with the legacy era's signal, on
// both transports.
const longOp = "trigger-long-running-operation"

type callReport struct {
	State     string `json:"state"`
	Era       string `json:"era"`
	Transport string `json:"transport"`
	Server    string `json:"server"`
	Cancel    *struct {
		Signal string `json:"signal"`
	} `json:"cancel"`
	Late *struct {
		Response            bool `json:"response"`
		ProgressAfterCancel int  `json:"progressAfterCancel"`
	} `json:"late"`
	Violations []json.RawMessage `json:"violations"`
}

func runInflight(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := testbin.Build(t, "inflight")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("inflight %s did not finish in 90s\nstderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("inflight %s: %v", strings.Join(args, " "), err)
	}
	if len(out) == 0 {
		t.Fatalf("inflight %s printed nothing on stdout (%v)\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func checkCancelledReport(t *testing.T, out []byte, transport string) {
	t.Helper()
	var r callReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("call --json: %v\n%s", err, out)
	}
	if r.State != "cancelled" || r.Era != "legacy" || r.Transport != transport || !strings.Contains(r.Server, "everything") {
		t.Errorf("report: state %s, era %s, transport %s, server %q; want a cancelled legacy call on %s to server-everything\n%s",
			r.State, r.Era, r.Transport, r.Server, transport, out)
	}
	if r.Cancel == nil || r.Cancel.Signal != "notifications/cancelled" {
		t.Errorf("cancel %+v, want notifications/cancelled (the legacy era's signal on %s)\n%s", r.Cancel, transport, out)
	}
	if r.Late == nil || r.Late.Response || r.Late.ProgressAfterCancel == 0 {
		t.Errorf("late %+v: server-everything keeps sending progress after the cancel and sends no response\n%s", r.Late, out)
	}
	if len(r.Violations) != 0 {
		t.Errorf("violations %s, want none: late progress is a SHOULD, not a violation", r.Violations)
	}
}

func TestEverythingStdioCancel(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	args := []string{"call", "--tool", longOp, "--args", `{"duration":3,"steps":3}`,
		"--cancel-after", "1.2s", "--late-window", "2.5s", "--json", "--"}
	out := runInflight(t, append(args, in.EverythingCommand("stdio")...)...)
	checkCancelledReport(t, out, "stdio")
}

func TestEverythingHTTPCancel(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	url := startEverythingHTTP(t, in)
	out := runInflight(t, "call", url, "--tool", longOp, "--args", `{"duration":3,"steps":3}`,
		"--cancel-after", "1.2s", "--late-window", "2.5s", "--json")
	checkCancelledReport(t, out, "http")
}

// check's battery on the reference server: progress passes; the cancel's
// finding is a warning that says what was seen after the cancel.
func TestEverythingCheck(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	args := []string{"check", "--json", "--tool", longOp, "--args", `{"duration":2,"steps":4}`, "--task-args", `{"topic":"cancellation"}`, "--"}
	out := runInflight(t, append(args, in.EverythingCommand("stdio")...)...)
	var rep struct {
		Era      string `json:"era"`
		Findings []struct {
			ID, Status, Detail string
		} `json:"findings"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	status := map[string]string{}
	for _, f := range rep.Findings {
		status[f.ID] = f.Status
		if f.Status == "FAIL" {
			t.Errorf("FAIL %s: %s", f.ID, f.Detail)
		}
	}
	for id, want := range map[string]string{
		"progress.increasing":   "PASS",
		"cancel.no_response":    "WARN", // still sending progress when the watch ended: no verdict on a response
		"cancel.progress_stops": "WARN",
		"cancel.error_code":     "PASS", // the TypeScript SDK sends nothing for a cancelled request
		"responses.id_matches":  "PASS",
		// The tasks group, on its task tool (simulate-research-query).
		"tasks.terminal_immutable":         "PASS",
		"tasks.cancel":                     "PASS",
		"tasks.cancel_terminal":            "PASS",
		"tasks.unknown_id":                 "PASS",
		"tasks.no_notifications_cancelled": "PASS",
	} {
		if status[id] != want {
			t.Errorf("%s = %q, want %s\n%s", id, status[id], want, out)
		}
	}
}

// startEverythingHTTP runs the reference server's Streamable HTTP transport
// on a free loopback port and returns its endpoint once it listens.
func startEverythingHTTP(t *testing.T, in npmpeer.Install) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	argv := in.EverythingCommand("streamableHttp")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan struct{})
	var seen bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "listening on port") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything streamableHttp did not say it listens in 30s:\n%s", seen.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

type taskCallReport struct {
	State  string          `json:"state"`
	Result json.RawMessage `json:"result"`
	Cancel *struct {
		Signal string `json:"signal"`
	} `json:"cancel"`
	Task *struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Polls   int    `json:"polls"`
		History []struct {
			Status, Via string
		} `json:"history"`
		Cancel *struct {
			AckAtMs *int64 `json:"ackAtMs"`
		} `json:"cancel"`
	} `json:"task"`
	Violations []json.RawMessage `json:"violations"`
}

// The reference server's task tool (taskSupport "required", legacy era):
// followed to completion through polls and tasks/result, and cancelled
// with tasks/cancel — never notifications/cancelled.
func TestEverythingTask(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	args := []string{"call", "--tool", "simulate-research-query", "--args", `{"topic":"cancellation"}`, "--task", "--json", "--"}
	out := runInflight(t, append(args, in.EverythingCommand("stdio")...)...)
	var r taskCallReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.State != "completed" || r.Task == nil || r.Task.Status != "completed" || r.Task.Polls == 0 || !strings.Contains(string(r.Result), "Research Report") {
		t.Fatalf("want a completed task, polled, whose result is the report (from tasks/result):\n%s", out)
	}
	if len(r.Violations) != 0 {
		t.Errorf("violations %s", r.Violations)
	}

	args = []string{"call", "--tool", "simulate-research-query", "--args", `{"topic":"cancellation"}`, "--task", "--cancel-after", "1.2s", "--json", "--"}
	out = runInflight(t, append(args, in.EverythingCommand("stdio")...)...)
	r = taskCallReport{}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.State != "cancelled" || r.Cancel == nil || r.Cancel.Signal != "tasks/cancel" || r.Task == nil || r.Task.Cancel == nil || r.Task.Cancel.AckAtMs == nil || r.Task.Status != "cancelled" {
		t.Fatalf("want the task cancelled with tasks/cancel, acknowledged, and its status cancelled:\n%s", out)
	}
}

// The reference server's task tool called as a newcomer would, without
// --task: inflight learns from tools/list that it runs only as a task
// (taskSupport "required") and asks for one, and says so.
func TestEverythingTaskRequiredByTool(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	args := []string{"call", "--tool", "simulate-research-query", "--args", `{"topic":"x"}`, "--json", "--"}
	out := runInflight(t, append(args, in.EverythingCommand("stdio")...)...)
	var r struct {
		taskCallReport
		TaskRequiredByTool bool `json:"taskRequiredByTool"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.State != "completed" || !r.TaskRequiredByTool || r.Task == nil || r.Task.Status != "completed" || !strings.Contains(string(r.Result), "Research Report") {
		t.Fatalf("want a completed task asked for because the tool requires one (taskRequiredByTool):\n%s", out)
	}
}

// check on the reference server as a newcomer runs it, naming no tool: the
// server has no slow, so the battery picks its long-running tool and says
// why, and the tasks group calls its task tool with arguments made from
// the tool's schema. No ERROR, and the group runs.
func TestEverythingCheckFirstTry(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	out := runInflight(t, append([]string{"check", "--json", "--"}, in.EverythingCommand("stdio")...)...)
	var rep struct {
		Tool, ToolChoice string
		Findings         []struct{ ID, Status, Detail string }
		Skipped          []struct{ ID, Reason string }
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	if rep.Tool != longOp || !strings.Contains(rep.ToolChoice, longOp) {
		t.Errorf("tool %q (%q), want %s and why", rep.Tool, rep.ToolChoice, longOp)
	}
	status := map[string]string{}
	for _, f := range rep.Findings {
		status[f.ID] = f.Status
		if f.Status == "FAIL" || f.Status == "ERROR" {
			t.Errorf("%s %s: %s", f.Status, f.ID, f.Detail)
		}
	}
	if status["progress.increasing"] != "PASS" || status["tasks.terminal_immutable"] != "PASS" {
		t.Errorf("progress.increasing %q, tasks.terminal_immutable %q; want both PASS\n%s", status["progress.increasing"], status["tasks.terminal_immutable"], out)
	}
}

// check's battery on the reference server over Streamable HTTP. Its
// in-memory event store gives every event an ID, so the battery drops the
// first of two calls' streams and resumes it with Last-Event-ID; but the
// store's replayEventsAfter returns the last event ID where the SDK wants
// the stream's ID, so the SDK registers the resumed GET under a stream
// nothing is ever sent to: the rest of the call (progress, the response)
// never comes, a WARN that says how long it was watched. The store also
// replays every event after that ID whatever its stream, so the other
// call's messages may come on the resumed stream (resume.own_stream FAIL,
// naming it) when one was stored between the drop and the GET. Progress
// itself comes on its own request's stream, for a token inflight sent.
func TestEverythingHTTPCheckResumes(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	url := startEverythingHTTP(t, in)
	out := runInflight(t, "check", url, "--json", "--no-tasks", "--tool", longOp, "--args", `{"duration":2,"steps":4}`, "--late-window", "1s")
	var rep struct {
		Era      string `json:"era"`
		Findings []struct {
			ID, Status, Detail string
		} `json:"findings"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		got[f.ID] = f.Status + " " + f.Detail
	}
	if r := got["resume.redelivers"]; !strings.HasPrefix(r, "WARN ") || !strings.Contains(r, "watched after the resumption") || !strings.Contains(r, "never redelivered") {
		t.Errorf("resume.redelivers = %q, want WARN: nothing redelivered in the watch\n%s", r, out)
	}
	if r := got["resume.own_stream"]; !strings.HasPrefix(r, "PASS ") && !(strings.HasPrefix(r, "FAIL ") && strings.Contains(r, "of another request came on request")) {
		t.Errorf("resume.own_stream = %q, want PASS, or FAIL naming the other request's messages\n%s", r, out)
	}
	for _, id := range []string{"progress.own_stream", "progress.known_token"} {
		if !strings.HasPrefix(got[id], "PASS ") {
			t.Errorf("%s = %q, want PASS\n%s", id, got[id], out)
		}
	}
	t.Logf("resume.redelivers: %s", got["resume.redelivers"])
	t.Logf("resume.own_stream: %s", got["resume.own_stream"])
}
