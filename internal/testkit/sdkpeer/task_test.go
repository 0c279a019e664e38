package sdkpeer_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/sdkpeer"
	"inflight/internal/testkit/testbin"
)

// inflight drives mcp-go's own task machinery (legacy tasks utility):
// inflight call follows a task to its end and cancels one with
// tasks/cancel, and check's tasks group passes against it.
func TestMCPGoTasks(t *testing.T) {
	peer := sdkpeer.BuildPeer(t, sdkpeer.MCPGo)
	bin := testbin.Build(t, "inflight")
	run := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, append(args, "--", peer)...).Output()
		if _, exit := err.(*exec.ExitError); err != nil && !exit {
			t.Fatalf("inflight %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	var rep struct {
		State  string `json:"state"`
		Cancel *struct {
			Signal string `json:"signal"`
		} `json:"cancel"`
		Task *struct {
			Status string `json:"status"`
			Cancel *struct {
				AckAtMs *int64 `json:"ackAtMs"`
			} `json:"cancel"`
		} `json:"task"`
	}
	out := run("call", "--protocol-version", "2025-11-25", "--tool", "slow_task", "--args", `{"steps":20,"intervalMs":100}`,
		"--task", "--cancel-after", "500ms", "--late-window", "1s", "--json")
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.State != "cancelled" || rep.Cancel == nil || rep.Cancel.Signal != "tasks/cancel" || rep.Task == nil ||
		rep.Task.Status != "cancelled" || rep.Task.Cancel == nil || rep.Task.Cancel.AckAtMs == nil {
		t.Errorf("want the task cancelled with tasks/cancel and acknowledged:\n%s", out)
	}

	out = run("check", "--protocol-version", "2025-11-25", "--tool", "slow", "--task-tool", "slow_task",
		"--task-args", `{"steps":10,"intervalMs":100}`, "--json")
	var chk struct {
		Findings []struct{ ID, Status, Detail string } `json:"findings"`
	}
	if err := json.Unmarshal(out, &chk); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen := 0
	for _, f := range chk.Findings {
		if strings.HasPrefix(f.ID, "tasks.") {
			seen++
			if f.Status != "PASS" {
				t.Errorf("%s %s: %s", f.Status, f.ID, f.Detail)
			}
		}
	}
	if seen != 5 {
		t.Errorf("%d task findings, want the group's 5:\n%s", seen, out)
	}
}
