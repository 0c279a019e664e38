package call

import (
	"bytes"
	"context"
	"encoding/json"
	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/target"
	"strings"
	"testing"
	"time"
)

// present reports a JSON value that is there and not null.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func TestCallCompleted(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code, _ := runCall(t, Options{
			Target: tc.Target(t, e),
			Method: "tools/call",
			Params: testserver.ToolParams(t, "slow", `{"seconds":0.2,"steps":4}`),
		})
		if code != exitcode.Completed || rep.State != "completed" {
			t.Fatalf("exit %d state %s, want 0 completed: %+v", code, rep.State, rep)
		}
		if rep.Transport != tc.Name || rep.Era != e.Name || rep.ProtocolVersion != e.Version {
			t.Errorf("transport %s era %s version %s", rep.Transport, rep.Era, rep.ProtocolVersion)
		}
		if rep.Progress.Count != 4 || rep.Progress.Last == nil || *rep.Progress.Last != 4 || rep.Progress.Total == nil || *rep.Progress.Total != 4 {
			t.Errorf("progress %+v", rep.Progress)
		}
		if rep.Cancel != nil || rep.Late != nil || rep.Error != nil {
			t.Errorf("cancel %+v late %+v error %+v", rep.Cancel, rep.Late, rep.Error)
		}
		if !strings.Contains(string(rep.Result), "slow finished 4 steps") {
			t.Errorf("result %s", rep.Result)
		}
		if len(rep.Violations) != 0 {
			t.Errorf("violations %+v", rep.Violations)
		}
	})
}

func TestCallCancelAfter(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code, _ := runCall(t, Options{
			Target:      tc.Target(t, e),
			Method:      "tools/call",
			Params:      testserver.ToolParams(t, "slow", `{"seconds":1,"steps":10}`),
			CancelAfter: 250 * time.Millisecond,
		})
		if code != exitcode.Cancelled || rep.State != "cancelled" {
			t.Fatalf("exit %d state %s, want 4 cancelled: %+v", code, rep.State, rep)
		}
		want := "notifications/cancelled"
		if tc.Name == "http" && e == testserver.Modern {
			want = "stream_closed"
		}
		if rep.Cancel == nil || rep.Cancel.Signal == nil || *rep.Cancel.Signal != want || rep.Cancel.Cause != "user" {
			t.Fatalf("cancel %+v, want signal %s", rep.Cancel, want)
		}
		if rep.Cancel.AtMs < 240 || rep.Cancel.AtMs > 600 {
			t.Errorf("cancel at %dms, want about 250", rep.Cancel.AtMs)
		}
		if rep.Late == nil || rep.Late.Response || rep.Late.ProgressAfterCancel != 0 {
			t.Errorf("late %+v, want none", rep.Late)
		}
		if present(rep.Result) {
			t.Errorf("result %s on a cancelled request", rep.Result)
		}
		if rep.Progress.Count > 5 {
			t.Errorf("progress count %d", rep.Progress.Count)
		}
	})
}

// stubborn ignores the cancel: the late response goes in "late", never in
// "result", and the progress after the cancel is counted. On modern HTTP
// the closed stream cannot carry any of it.
func TestCallStubbornLate(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code, _ := runCall(t, Options{
			Target:      tc.Target(t, e),
			Method:      "tools/call",
			Params:      testserver.ToolParams(t, "stubborn", `{"seconds":0.4,"steps":8}`),
			CancelAfter: 120 * time.Millisecond,
			LateWindow:  time.Second,
		})
		if code != exitcode.Cancelled || rep.State != "cancelled" {
			t.Fatalf("exit %d state %s, want 4 cancelled", code, rep.State)
		}
		if present(rep.Result) {
			t.Fatalf("late response folded into result: %s", rep.Result)
		}
		if tc.Name == "http" && e == testserver.Modern {
			if rep.Late == nil || rep.Late.Response || rep.Late.ProgressAfterCancel != 0 {
				t.Errorf("late %+v: nothing can arrive on a closed stream", rep.Late)
			}
			return
		}
		if rep.Late == nil || !rep.Late.Response || rep.Late.ResponseAfterCancelMs == nil {
			t.Fatalf("late %+v, want a late response", rep.Late)
		}
		if !strings.Contains(string(rep.Late.Result), "stubborn finished") {
			t.Errorf("late result %s", rep.Late.Result)
		}
		if rep.Late.ProgressAfterCancel < 2 {
			t.Errorf("progress after cancel %d, want several", rep.Late.ProgressAfterCancel)
		}
	})
}

func TestCallTimeout(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code, _ := runCall(t, Options{
			Target:  tc.Target(t, e),
			Method:  "tools/call",
			Params:  testserver.ToolParams(t, "silent", `{"seconds":5}`),
			Timeout: 200 * time.Millisecond,
		})
		if code != exitcode.TimedOut || rep.State != "timed_out" {
			t.Fatalf("exit %d state %s, want 3 timed_out", code, rep.State)
		}
		if rep.Cancel == nil || rep.Cancel.Cause != "timeout" || rep.Cancel.Limit != "timeout" {
			t.Errorf("cancel %+v", rep.Cancel)
		}
	})
}

// The maximum timeout holds even though progress keeps resetting the
// per-request timeout.
func TestCallMaxTimeout(t *testing.T) {
	rep, code, _ := runCall(t, Options{
		Target:          testserver.Stdio(t, testserver.Modern),
		Method:          "tools/call",
		Params:          testserver.ToolParams(t, "slow", `{"seconds":3,"steps":30}`),
		Timeout:         250 * time.Millisecond,
		MaxTimeout:      400 * time.Millisecond,
		ResetOnProgress: true,
	})
	if code != exitcode.TimedOut || rep.Cancel == nil || rep.Cancel.Limit != "max" {
		t.Fatalf("exit %d cancel %+v, want 3 with limit max", code, rep.Cancel)
	}
	if rep.Cancel.AtMs < 390 || rep.Cancel.AtMs > 800 {
		t.Errorf("cancelled at %dms, want about 400", rep.Cancel.AtMs)
	}
}

func TestCallErrors(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		tg := tc.Target(t, e)
		rep, code, _ := runCall(t, Options{Target: tg, Method: "tools/call",
			Params: testserver.ToolParams(t, "fail", `{"message":"boom"}`)})
		if code != exitcode.Failed || rep.State != "failed" || !rep.ToolError || rep.Error != nil {
			t.Errorf("tool error: exit %d state %s toolError %v error %+v", code, rep.State, rep.ToolError, rep.Error)
		}
		if !strings.Contains(string(rep.Result), "boom") {
			t.Errorf("tool error result %s", rep.Result)
		}
		rep, code, _ = runCall(t, Options{Target: tg, Method: "tools/call",
			Params: testserver.ToolParams(t, "fail", `{"message":"rpc boom","rpc":true}`)})
		if code != exitcode.Failed || rep.State != "failed" || rep.Error == nil || rep.Error.Code == nil || rep.Error.Message != "rpc boom" {
			t.Errorf("rpc error: exit %d state %s error %+v", code, rep.State, rep.Error)
		}
		if present(rep.Result) {
			t.Errorf("result %s with a JSON-RPC error", rep.Result)
		}
	})
}

func TestCallUsageAndConnectionErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), Options{Target: target.Target{URL: "http://127.0.0.1:1/mcp"}, Method: "tools/list"}, &stdout, &stderr); code != exitcode.Usage {
		t.Errorf("unreachable server: exit %d, want 2; stderr %s", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := Run(context.Background(), Options{Target: target.Target{URL: "http://127.0.0.1:1/mcp"}, JSON: true}, &stdout, &stderr)
	if code != exitcode.Usage {
		t.Errorf("no method: exit %d, want 2", code)
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.State != "not_sent" || rep.ExitCode != 2 {
		t.Errorf("usage error JSON %q (%v)", stdout.String(), err)
	}
	stdout.Reset()
	if code := Run(context.Background(), Options{Target: target.Target{URL: "http://127.0.0.1:1/mcp"}, Method: "x", Params: json.RawMessage(`[1]`)}, &stdout, &stderr); code != exitcode.Usage {
		t.Errorf("params not an object: exit %d, want 2", code)
	}
}
