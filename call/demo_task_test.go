package call

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
)

// The demo's task tools followed end to end by inflight call, on both
// transports in both eras: the client side of tasks (session, runner) against
// the demo's task layer.

func TestCallDemoTaskJob(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		// The client polls no faster than session.MinPollInterval (100 ms)
		// whatever pollMs says, so the job runs long enough for two polls
		// to land before the completion notification does.
		rep, code, _ := runCall(t, Options{Target: tc.Target(t, e), Method: "tools/call", Task: true,
			Params: testserver.ToolParams(t, "task_job", `{"seconds":0.5,"steps":4,"pollMs":20}`)})
		tk := rep.Task
		if code != exitcode.Completed || rep.State != "completed" || tk == nil {
			t.Fatalf("exit %d, state %s, task %+v, error %+v", code, rep.State, tk, rep.Error)
		}
		if tk.Status != "completed" || tk.Polls < 2 || tk.PollIntervalMs == nil || *tk.PollIntervalMs != 20 ||
			tk.TTLMs == nil || *tk.TTLMs != 60000 {
			t.Errorf("task %+v", tk)
		}
		if !bytes.Contains(rep.Result, []byte("task_job finished 4 steps")) {
			t.Errorf("result %s", rep.Result)
		}
		if len(rep.Violations) != 0 {
			t.Errorf("violations %+v", rep.Violations)
		}
	})
}

func TestCallDemoTaskJobCancelled(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code, _ := runCall(t, Options{Target: tc.Target(t, e), Method: "tools/call", Task: true, CancelAfter: 100 * time.Millisecond,
			Params: testserver.ToolParams(t, "task_job", `{"seconds":30,"steps":30,"pollMs":20}`)})
		tk := rep.Task
		if code != exitcode.Cancelled || rep.State != "cancelled" || tk == nil || tk.Cancel == nil {
			t.Fatalf("exit %d, state %s, task %+v", code, rep.State, tk)
		}
		if rep.Cancel == nil || rep.Cancel.Signal == nil || *rep.Cancel.Signal != "tasks/cancel" {
			t.Errorf("cancel %+v, want the tasks/cancel signal", rep.Cancel)
		}
		if tk.Cancel.AckAtMs == nil || tk.Status != "cancelled" || tk.EndedAfterCancel != "" {
			t.Errorf("task %+v, cancel %+v", tk, tk.Cancel)
		}
	})
}

func TestCallDemoTaskStubborn(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		// The cancel must find the task made (its handle is the first
		// answer) and the task still running: 150 ms into a 600 ms task
		// leaves room for a loaded machine on both sides, and the late
		// window outlasts the task, so its completion is seen.
		o := Options{Target: tc.Target(t, e), Method: "tools/call", Task: true, CancelAfter: 150 * time.Millisecond, LateWindow: 3 * time.Second,
			Params: testserver.ToolParams(t, "task_stubborn", `{"seconds":0.6,"steps":5,"pollMs":20}`)}
		rep, code, _ := runCall(t, o)
		tk := rep.Task
		if code != exitcode.Cancelled || tk == nil || tk.Cancel == nil || tk.Cancel.AckAtMs == nil {
			t.Fatalf("exit %d, task %+v", code, tk)
		}
		if tk.EndedAfterCancel != "completed" || tk.Status != "completed" || rep.Late == nil || !rep.Late.Response {
			t.Errorf("task %+v, late %+v: want completed after tasks/cancel, late", tk, rep.Late)
		}
		if len(rep.Result) > 0 && string(rep.Result) != "null" {
			t.Errorf("the result after tasks/cancel was counted a success: %s", rep.Result)
		}
		// The summary flags it.
		var out bytes.Buffer
		o.Target = tc.Target(t, e)
		o.JSON = false
		Run(context.Background(), o, &out, io.Discard)
		testserver.MustContain(t, out.String(), "⚑ completed after tasks/cancel")
	})
}

func TestCallDemoTaskFlipLegacy(t *testing.T) {
	for _, tc := range testserver.Transports {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			rep, _, _ := runCall(t, Options{Target: tc.Target(t, testserver.Legacy), Method: "tools/call", Task: true,
				Params: testserver.ToolParams(t, "task_flip", `{"seconds":0.05,"steps":2,"pollMs":20}`)})
			var codes []string
			for _, v := range rep.Violations {
				codes = append(codes, v.Code)
			}
			if rep.Task == nil || rep.Task.Status != "completed" || !strings.Contains(strings.Join(codes, ","), "task_status_after_terminal") {
				t.Errorf("task %+v, violations %v: want the status change after completed flagged", rep.Task, codes)
			}
		})
	}
}

func TestCallDemoTaskInputModern(t *testing.T) {
	for _, tc := range testserver.Transports {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			rep, _, _ := runCall(t, Options{Target: tc.Target(t, testserver.Modern), Method: "tools/call",
				Params: testserver.ToolParams(t, "task_input", `{"seconds":0.02,"wait":0.2,"pollMs":20}`)})
			tk := rep.Task
			if tk == nil || !bytes.Contains(tk.InputRequests, []byte("elicitation/create")) {
				t.Fatalf("task %+v: want the elicitation it asked for", tk)
			}
			var statuses []string
			for _, h := range tk.History {
				statuses = append(statuses, h.Status)
			}
			if got := strings.Join(statuses, ","); got != "working,input_required,completed" || !rep.ToolError {
				t.Errorf("statuses %s, tool error %t: want input_required, then the isError result of no answer", got, rep.ToolError)
			}
		})
	}
}

// A tool that runs only as a task (task_input: execution.taskSupport
// "required"), called with --tool and no --task: in the legacy era the
// call asks tools/list first and goes as a task, saying so; a modern
// server makes it a task by itself, with no lookup.
func TestCallToolThatRequiresTask(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		var live bytes.Buffer
		rep, code, _ := runCall(t, Options{Target: tc.Target(t, e), Method: "tools/call", Tool: "task_input", Live: &live,
			Params: testserver.ToolParams(t, "task_input", `{"seconds":0.05,"wait":0.1,"pollMs":20}`)})
		if rep.Task == nil {
			t.Fatalf("exit %d, state %s, error %+v: no task\n%s", code, rep.State, rep.Error, live.String())
		}
		if want := e == testserver.Legacy; rep.TaskRequiredByTool != want {
			t.Errorf("taskRequiredByTool %t, want %t", rep.TaskRequiredByTool, want)
		}
		if e == testserver.Legacy {
			testserver.MustContain(t, live.String(), `task_input runs only as a task (tools/list: execution.taskSupport "required"): asking for one`)
		}
		if len(rep.Violations) != 0 {
			t.Errorf("violations %+v", rep.Violations)
		}
	})
	// A tool that may run as a task goes as an ordinary call unless --task
	// asks: the lookup changes nothing for it.
	rep, code, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Legacy), Method: "tools/call", Tool: "task_job",
		Params: testserver.ToolParams(t, "task_job", `{"seconds":0.05,"steps":2}`)})
	if code != exitcode.Completed || rep.Task != nil || rep.TaskRequiredByTool {
		t.Errorf("task_job without --task: exit %d, task %+v, taskRequiredByTool %t", code, rep.Task, rep.TaskRequiredByTool)
	}
}

// `inflight call slow` sends a method "slow", which the server does not
// know: the run says how to call the tool.
func TestCallUnknownMethodHintsTool(t *testing.T) {
	var live bytes.Buffer
	rep, code, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Legacy), Method: "slow", Live: &live})
	if code != exitcode.Failed || rep.Error == nil {
		t.Fatalf("exit %d, error %+v", code, rep.Error)
	}
	testserver.MustContain(t, live.String(), `"slow" is no method of the server`)
	testserver.MustContain(t, live.String(), "inflight call --tool slow")
	// A method with a slash is no tool name: no hint.
	live.Reset()
	runCall(t, Options{Target: testserver.Stdio(t, testserver.Legacy), Method: "tools/nothing", Live: &live})
	if strings.Contains(live.String(), "--tool") {
		t.Errorf("hint for tools/nothing:\n%s", live.String())
	}
}

// task_input's question, answered from the answer file: the run sends the
// answer as tasks/update, and the task finishes with the greeting.
func TestCallDemoTaskInputAnsweredModern(t *testing.T) {
	for _, tc := range testserver.Transports {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var live strings.Builder
			rep, code, _ := runCall(t, Options{Target: tc.Target(t, testserver.Modern), Method: "tools/call", Live: &live,
				Params:     testserver.ToolParams(t, "task_input", `{"seconds":0.02,"wait":20,"pollMs":20}`),
				AnswerFile: answerFile(t, `{"name":{"name":"Ada"}}`)})
			if code != 0 || rep.State != "completed" || !strings.Contains(string(rep.Result), "Hello, Ada!") {
				t.Fatalf("exit %d, state %s, result %s: want the greeting", code, rep.State, rep.Result)
			}
			testserver.MustContain(t, live.String(), "task input: answered name with tasks/update")
		})
	}
}

// The legacy task_input asks on tasks/result, which the run calls when the
// task says input_required: the question is the server's own request,
// tied to the task, answered from the answer file, and the task finishes
// with the greeting.
func TestCallDemoTaskInputAnsweredLegacy(t *testing.T) {
	for _, tc := range testserver.Transports {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var live strings.Builder
			rep, code, _ := runCall(t, Options{Target: tc.Target(t, testserver.Legacy), Method: "tools/call", Tool: "task_input", Live: &live,
				Params:     testserver.ToolParams(t, "task_input", `{"seconds":0.02,"wait":20,"pollMs":20}`),
				AnswerFile: answerFile(t, `{"elicitation/create":{"name":"Ada"}}`)})
			if code != 0 || rep.State != "completed" || !strings.Contains(string(rep.Result), "Hello, Ada!") {
				t.Fatalf("exit %d, state %s, result %s: want the greeting\n%s", code, rep.State, rep.Result, live.String())
			}
			if len(rep.Violations) != 0 {
				t.Errorf("violations %+v", rep.Violations)
			}
		})
	}
}
