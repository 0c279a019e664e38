package call

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
	"inflight/target"
)

// Every task violation set off by a misbehaving task peer of ours (package
// hostile, task_peers.go), through the real client and inflight call
// --json: each run must name the violation, with a detail that says what
// the server did, and end in the state its task's fate means.

type taskPeerCase struct {
	name   string
	peer   hostile.Stdio
	era    testserver.Era
	opts   func(o *Options)
	code   string // the violation the report must list
	says   string // text its detail must contain
	state  string // the run's final state
	check  func(t *testing.T, rep Report)
	method string
}

func taskPeerCases() []taskPeerCase {
	var cases []taskPeerCase
	for _, e := range testserver.Eras {
		cases = append(cases,
			taskPeerCase{name: "cancelled-notification/" + e.Name, peer: hostile.TaskCancelledNotification, era: e,
				code: "cancelled_for_task", says: `notifications/cancelled for task "task-1"`, state: "failed",
				check: func(t *testing.T, rep Report) {
					if rep.Task == nil || rep.Task.Status != "cancelled" || rep.Task.Cancel != nil {
						t.Errorf("task %+v: want cancelled by the server, no tasks/cancel of ours", rep.Task)
					}
				}},
			taskPeerCase{name: "not-durable/" + e.Name, peer: hostile.TaskNotDurable, era: e,
				code: "task_not_durable", says: "first tasks/get of task \"task-1\" was refused with -32602", state: "completed",
				check: func(t *testing.T, rep Report) {
					// The poll that was refused is followed by the next one.
					if rep.Task == nil || rep.Task.Status != "completed" || rep.Task.Polls != 2 {
						t.Errorf("task %+v: want completed at the poll after the refused one", rep.Task)
					}
				}},
			taskPeerCase{name: "for-prompt/" + e.Name, peer: hostile.TaskForPrompt, era: e, method: "prompts/get",
				code: "task_unsupported_method", says: "prompts/get was answered with a task handle", state: "failed",
				check: func(t *testing.T, rep Report) {
					if rep.Error == nil || !strings.Contains(rep.Error.Message, "does not support tasks") {
						t.Errorf("error %+v: want the invalid result named", rep.Error)
					}
				}},
			taskPeerCase{name: "rate-limited/" + e.Name, peer: hostile.TaskRateLimited, era: e,
				code: "task_poll_rate_limited", says: "no less than the 20ms interval the server gave", state: "completed"},
		)
	}
	cases = append(cases,
		taskPeerCase{name: "flip/legacy", peer: hostile.TaskFlip, era: testserver.Legacy,
			code: "task_status_after_terminal", says: `task "task-1" said "working" (notification) after its terminal status "completed"`, state: "completed",
			check: func(t *testing.T, rep Report) {
				// The flip is flagged, not applied.
				if rep.Task == nil || rep.Task.Status != "completed" || !bytes.Contains(rep.Result, []byte("is done")) {
					t.Errorf("task %+v result %s", rep.Task, rep.Result)
				}
			}},
		taskPeerCase{name: "cancel-accepts-terminal/legacy", peer: hostile.TaskCancelAcknowledgesCompleted, era: testserver.Legacy,
			opts: func(o *Options) { o.CancelAfter = 250 * time.Millisecond },
			code: "task_cancel_terminal_accepted", says: `already completed, was acknowledged instead of refused with -32602`,
			check: func(t *testing.T, rep Report) {
				if rep.Task == nil || rep.Task.Cancel == nil || rep.Task.Cancel.AckAtMs == nil {
					t.Errorf("task %+v: want the tasks/cancel acknowledged", rep.Task)
				}
			}},
		taskPeerCase{name: "cancel-not-cancelled/legacy", peer: hostile.TaskCancelNotCancelled, era: testserver.Legacy,
			// The peer suggests 20ms polls and completes after 8 of them;
			// polled at session.MinPollInterval, that is past the default
			// late window: watch long enough to see it.
			opts: func(o *Options) { o.CancelAfter, o.LateWindow = 50*time.Millisecond, 2*time.Second },
			code: "task_cancel_not_cancelled", says: `was answered with status "working", not cancelled`, state: "cancelled",
			check: func(t *testing.T, rep Report) {
				// It finished the work anyway: flagged as late, not a success.
				if rep.Task == nil || rep.Task.EndedAfterCancel != "completed" || rep.Late == nil || !rep.Late.Response {
					t.Errorf("task %+v late %+v: want completed after tasks/cancel, late", rep.Task, rep.Late)
				}
			}},
		taskPeerCase{name: "undeclared/legacy", peer: hostile.TaskUndeclared, era: testserver.Legacy,
			opts: func(o *Options) { o.Task = false },
			code: "task_undeclared", says: `did not carry the task field, yet the server answered with task "task-1"`, state: "completed",
			check: func(t *testing.T, rep Report) {
				if rep.Task == nil || rep.Task.Status != "completed" {
					t.Errorf("task %+v: the task is followed all the same", rep.Task)
				}
			}},
	)
	return cases
}

func TestCallTaskPeerViolations(t *testing.T) {
	for _, tc := range taskPeerCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{Target: testserver.InProcess(tc.peer, tc.era.Version)(t), Method: "tools/call", Task: true,
				Params: testserver.ToolParams(t, hostile.ToolName, `{}`)}
			if tc.method != "" {
				o.Method, o.Task, o.Params = tc.method, false, json.RawMessage(`{"name":"`+hostile.TaskPromptName+`"}`)
			}
			if tc.opts != nil {
				tc.opts(&o)
			}
			start := time.Now()
			rep, _, _ := runCall(t, o)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the run took %s", d)
			}
			if tc.state != "" && rep.State != tc.state {
				t.Errorf("state %s, want %s (error %+v)", rep.State, tc.state, rep.Error)
			}
			found := false
			for _, v := range rep.Violations {
				if v.Code == tc.code {
					found = true
					if !strings.Contains(v.Detail, tc.says) {
						t.Errorf("%s detail %q lacks %q", v.Code, v.Detail, tc.says)
					}
				}
			}
			if !found {
				t.Errorf("no %s among the violations %+v (task %+v)", tc.code, rep.Violations, rep.Task)
			}
			if tc.check != nil {
				tc.check(t, rep)
			}
		})
	}
}

// A server that refuses a poll as rate-limited though it never gave a poll
// interval: inflight polled at its default (a second), and says so.
func TestCallTaskRateLimitedUnguided(t *testing.T) {
	t.Parallel()
	rep, _, _ := runCall(t, Options{Target: testserver.InProcess(hostile.TaskRateLimitedUnguided, testserver.Legacy.Version)(t),
		Method: "tools/call", Task: true, CancelAfter: 1200 * time.Millisecond, Params: testserver.ToolParams(t, hostile.ToolName, `{}`)})
	for _, v := range rep.Violations {
		if v.Code == "task_poll_rate_limited" {
			testserver.MustContain(t, v.Detail, "the server had given no poll interval for it; inflight polled 1s after the handle")
			testserver.MustContain(t, v.Detail, hostile.TaskRateLimitMessage)
			return
		}
	}
	t.Errorf("no task_poll_rate_limited among %+v", rep.Violations)
}

// The task peers work as real child processes too (the test binary
// re-executed), as the demo's task tools do.
func TestCallTaskPeerAsProcess(t *testing.T) {
	t.Parallel()
	tg := testserver.AsProcess(hostile.TaskNotDurable)(t)
	tg.ProtocolVersion = testserver.Legacy.Version
	rep, _, _ := runCall(t, Options{Target: tg, Method: "tools/call", Task: true, Params: testserver.ToolParams(t, hostile.ToolName, `{}`)})
	if rep.State != "completed" || len(rep.Violations) != 1 || rep.Violations[0].Code != "task_not_durable" {
		t.Errorf("state %s violations %+v", rep.State, rep.Violations)
	}
}

// Over Streamable HTTP, a poll refused with HTTP 429 though inflight kept
// to the server's interval is the same violation; the poll failed, the
// next one completed the task.
func TestCallTaskRateLimitedHTTP(t *testing.T) {
	for _, e := range testserver.Eras {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			h := &hostile.TaskRateLimitedHTTP{}
			ts := hostile.NewServer(h, false)
			t.Cleanup(ts.Close)
			rep, _, _ := runCall(t, Options{Target: target.Target{URL: ts.URL + "/mcp", ProtocolVersion: e.Version}, Method: "tools/call", Task: true,
				Params: testserver.ToolParams(t, hostile.ToolName, `{}`)})
			if rep.State != "completed" || rep.Task == nil || rep.Task.Status != "completed" {
				t.Errorf("state %s task %+v", rep.State, rep.Task)
			}
			if len(rep.Violations) != 1 || rep.Violations[0].Code != "task_poll_rate_limited" ||
				!strings.Contains(rep.Violations[0].Detail, "(HTTP 429), though inflight had waited") {
				t.Errorf("violations %+v", rep.Violations)
			}
			if e == testserver.Modern {
				if got := h.McpNames(); len(got) != 2 || got[0] != "task-1" || got[1] != "task-1" {
					t.Errorf("Mcp-Name of the polls %q, want the task's ID", got)
				}
			}
		})
	}
}
