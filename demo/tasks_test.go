package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The task tools, tested with raw peers on both transports and in both eras:
// what the task layer in front of the SDK puts on the wire.

// Fast task timings: three steps over 60ms, polled every 10ms.
var fastJob = args("seconds", 0.06, "steps", 3, "pollMs", 10)

// taskPeer is a raw peer of either transport, opened for one era.
type taskPeer interface {
	// roundTrip sends a request and returns its response and what came
	// before it on the same stream.
	roundTrip(id int, method string, params map[string]any) ([]msg, msg)
}

func (p *stdioPeer) roundTrip(id int, method string, params map[string]any) ([]msg, msg) {
	p.t.Helper()
	p.send(request(id, method, params))
	return p.response(id)
}

// httpTaskPeer speaks one era over HTTP: a legacy session, or modern POSTs
// with the standard headers (Mcp-Name is the taskId of a tasks/ request).
type httpTaskPeer struct {
	h       *httpPeer
	session string
}

func (hp *httpTaskPeer) headers(body map[string]any) http.Header {
	if hp.session != "" {
		return legacyHeaders(hp.session)
	}
	h := modernHeaders(body)
	if params, ok := body["params"].(map[string]any); ok {
		if id, ok := params["taskId"].(string); ok {
			h.Set("Mcp-Name", id)
		}
	}
	return h
}

func (hp *httpTaskPeer) roundTrip(id int, method string, params map[string]any) ([]msg, msg) {
	hp.h.t.Helper()
	body := request(id, method, params)
	st := hp.h.post(context.Background(), body, hp.headers(body))
	defer st.close()
	return st.until(func(m msg) bool { return m.isResponse(id) })
}

// openTaskPeer starts a server and a peer for a transport and era.
func openTaskPeer(t *testing.T, transport string, e era) (*Server, *logSink, taskPeer) {
	t.Helper()
	s, logs := newTestServer(t)
	if transport == "stdio" {
		p := startStdio(t, s)
		p.open(e)
		return s, logs, p
	}
	hp := &httpTaskPeer{h: startHTTP(t, s)}
	if e == legacy {
		hp.session, _ = hp.h.initialize()
	}
	return s, logs, hp
}

// forEachTaskPeer runs f on both transports in both eras.
func forEachTaskPeer(t *testing.T, f func(t *testing.T, transport string, e era)) {
	for _, transport := range []string{"stdio", "http"} {
		for _, e := range eras {
			t.Run(transport+"/"+string(e), func(t *testing.T) {
				t.Parallel()
				f(t, transport, e)
			})
		}
	}
}

// taskCallParams are a tools/call's params that ask for a task (legacy: the
// task field) or accept one (modern: the extension in the per-request
// client capabilities).
func taskCallParams(e era, tool string, arguments map[string]any, task map[string]any) map[string]any {
	p := e.params(map[string]any{"name": tool, "arguments": arguments}, "")
	if e == modern {
		meta := p["_meta"].(map[string]any)
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{extensionTasks: map[string]any{}}}
	} else {
		if task == nil {
			task = map[string]any{}
		}
		p["task"] = task
	}
	return p
}

// taskState is a task as either era shows it.
type taskState struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTL            *int64          `json:"ttl"`
	TTLMs          *int64          `json:"ttlMs"`
	PollInterval   *int64          `json:"pollInterval"`
	PollIntervalMs *int64          `json:"pollIntervalMs"`
	InputRequests  json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
}

// decodeTask reads a task from a handle (legacy: in "task"; modern: at the
// top level) or from a tasks/get or tasks/cancel result.
func decodeTask(t *testing.T, m msg, e era, handle bool) taskState {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("want a task, got %s", m)
	}
	obj := m.Result
	if handle && e == legacy {
		var w struct {
			Task json.RawMessage `json:"task"`
		}
		if err := json.Unmarshal(obj, &w); err != nil || w.Task == nil {
			t.Fatalf("legacy handle without task: %s", m)
		}
		obj = w.Task
	}
	var ts taskState
	if err := json.Unmarshal(obj, &ts); err != nil || ts.TaskID == "" {
		t.Fatalf("not a task: %s", m)
	}
	if ts.CreatedAt == "" || ts.LastUpdatedAt == "" {
		t.Errorf("task without createdAt or lastUpdatedAt: %s", m)
	}
	if e == legacy {
		if ts.TTL == nil || ts.PollInterval == nil || ts.TTLMs != nil || ts.ResultType != "" {
			t.Errorf("legacy task shape: %s", m)
		}
	} else {
		want := "complete"
		if handle {
			want = "task"
		}
		if ts.TTLMs == nil || ts.PollIntervalMs == nil || ts.TTL != nil || ts.ResultType != want {
			t.Errorf("modern task shape (want resultType %q): %s", want, m)
		}
	}
	return ts
}

// startTaskCall calls a task tool as a task and returns its handle.
func startTaskCall(t *testing.T, p taskPeer, e era, id int, tool string, arguments map[string]any) taskState {
	t.Helper()
	_, resp := p.roundTrip(id, "tools/call", taskCallParams(e, tool, arguments, nil))
	ts := decodeTask(t, resp, e, true)
	if ts.Status != taskWorking {
		t.Errorf("handle status %q, want working", ts.Status)
	}
	return ts
}

func taskIDParams(e era, id string) map[string]any {
	return e.params(map[string]any{"taskId": id}, "")
}

// pollUntil polls tasks/get (ids from *next on) until done says so.
func pollUntil(t *testing.T, p taskPeer, e era, next *int, id string, done func(taskState) bool) taskState {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		*next++
		_, resp := p.roundTrip(*next, "tasks/get", taskIDParams(e, id))
		ts := decodeTask(t, resp, e, false)
		if done(ts) {
			return ts
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s %q", id, ts.Status, ts.StatusMessage)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func terminal(ts taskState) bool { return isTerminal(ts.Status) }

// statusNotes lists the statuses of the notifications/tasks/status in msgs.
func statusNotes(msgs []msg) string {
	var out []string
	for _, m := range msgs {
		if m.Method == notificationTaskStatus {
			var n taskState
			_ = json.Unmarshal(m.Params, &n)
			out = append(out, n.Status)
		}
	}
	return strings.Join(out, ",")
}

// relatedTask is the related-task taskId in a result's _meta.
func relatedTask(m msg) string {
	var r struct {
		Meta map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Result, &r)
	return r.Meta[metaRelatedTask].TaskID
}

func resultText(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	return msg{Result: raw, raw: string(raw)}.toolText(t)
}

// outcome is the tool result of a terminal task: legacy tasks/result (with
// the related-task metadata), modern the result inlined in tasks/get.
func outcome(t *testing.T, p taskPeer, e era, next *int, ts taskState) (string, bool, []msg) {
	t.Helper()
	if e == modern {
		if ts.Result == nil {
			t.Fatalf("terminal modern task without result: %+v", ts)
		}
		text, isErr := resultText(t, ts.Result)
		return text, isErr, nil
	}
	*next++
	before, resp := p.roundTrip(*next, "tasks/result", taskIDParams(e, ts.TaskID))
	if resp.Error != nil {
		t.Fatalf("tasks/result: %s", resp)
	}
	if got := relatedTask(resp); got != ts.TaskID {
		t.Errorf("tasks/result related-task %q, want %q: %s", got, ts.TaskID, resp)
	}
	text, isErr := resp.toolText(t)
	return text, isErr, before
}

func TestTaskAdvertised(t *testing.T) {
	forEachTaskPeer(t, func(t *testing.T, transport string, e era) {
		s, _ := newTestServer(t)
		var p taskPeer
		var capsResult msg
		if transport == "stdio" {
			sp := startStdio(t, s)
			if e == legacy {
				capsResult = sp.initialize()
			} else {
				capsResult = sp.call(1, "server/discover", modern.params(nil, ""))
			}
			p = sp
		} else {
			hp := &httpTaskPeer{h: startHTTP(t, s)}
			if e == legacy {
				hp.session, capsResult = hp.h.initialize()
			} else {
				_, capsResult = hp.roundTrip(1, "server/discover", modern.params(nil, ""))
			}
			p = hp
		}
		var caps struct {
			Capabilities struct {
				Tasks      json.RawMessage            `json:"tasks"`
				Extensions map[string]json.RawMessage `json:"extensions"`
				Tools      json.RawMessage            `json:"tools"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(capsResult.Result, &caps); err != nil || caps.Capabilities.Tools == nil {
			t.Fatalf("capabilities: %s", capsResult)
		}
		if e == legacy && string(caps.Capabilities.Tasks) != string(legacyTasksCapability) {
			t.Errorf("initialize capabilities.tasks = %s, want %s", caps.Capabilities.Tasks, legacyTasksCapability)
		}
		if e == modern && string(caps.Capabilities.Extensions[extensionTasks]) != "{}" {
			t.Errorf("server/discover extensions = %v, want %s: {}", caps.Capabilities.Extensions, extensionTasks)
		}

		_, resp := p.roundTrip(2, "tools/list", e.params(nil, ""))
		var list struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution *struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(resp.Result, &list); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tool := range list.Tools {
			if tool.Execution != nil {
				got[tool.Name] = tool.Execution.TaskSupport
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(taskTools) {
			t.Errorf("execution.taskSupport = %v, want %v", got, taskTools)
		}
	})
}

func TestTaskJobCompletes(t *testing.T) {
	forEachTaskPeer(t, func(t *testing.T, transport string, e era) {
		_, logs, p := openTaskPeer(t, transport, e)
		h := startTaskCall(t, p, e, 10, toolTaskJob, fastJob)
		if h.StatusMessage != "step 1 of 3" {
			t.Errorf("handle statusMessage %q", h.StatusMessage)
		}
		ttl, poll := h.TTL, h.PollInterval
		if e == modern {
			ttl, poll = h.TTLMs, h.PollIntervalMs
		}
		if *ttl != defaultTaskTTL.Milliseconds() || *poll != 10 {
			t.Errorf("ttl %d, poll %d; want %d and 10", *ttl, *poll, defaultTaskTTL.Milliseconds())
		}
		next := 10
		var seen []string
		ts := pollUntil(t, p, e, &next, h.TaskID, func(ts taskState) bool {
			seen = append(seen, ts.StatusMessage)
			return terminal(ts)
		})
		if ts.Status != taskCompleted || ts.StatusMessage != "finished 3 steps" {
			t.Fatalf("ended %s %q, want completed", ts.Status, ts.StatusMessage)
		}
		if e == legacy && ts.Result != nil {
			t.Errorf("a legacy tasks/get inlined the result: %+v", ts)
		}
		text, isErr, _ := outcome(t, p, e, &next, ts)
		if isErr || !strings.HasPrefix(text, "task_job finished 3 steps in ") {
			t.Errorf("result %q (isError %t)", text, isErr)
		}
		if !strings.Contains(strings.Join(seen, ","), "step ") {
			t.Errorf("no step message among the polls: %v", seen)
		}
		logs.waitFor(t, `task_job #\d+ \(task \w+\): working → completed`)
	})
}

func TestTaskJobCancelled(t *testing.T) {
	forEachTaskPeer(t, func(t *testing.T, transport string, e era) {
		_, logs, p := openTaskPeer(t, transport, e)
		h := startTaskCall(t, p, e, 10, toolTaskJob, args("seconds", 60, "steps", 6, "pollMs", 10))
		before, resp := p.roundTrip(11, "tasks/cancel", taskIDParams(e, h.TaskID))
		if e == legacy {
			// The receiver MUST move the task to cancelled before it answers.
			if ts := decodeTask(t, resp, e, false); ts.Status != taskCancelled {
				t.Errorf("tasks/cancel returned %s, want cancelled", ts.Status)
			}
			// Over stdio a status notification says so first.
			if transport == "stdio" {
				if got := statusNotes(before); got != "cancelled" {
					t.Errorf("status notifications before the cancel's response: %q, want cancelled", got)
				}
			}
		} else if resp.Error != nil || string(resp.Result) != `{"resultType":"complete"}` {
			t.Errorf("modern tasks/cancel = %s, want {resultType: complete}", resp)
		}
		next := 20
		ts := pollUntil(t, p, e, &next, h.TaskID, terminal)
		if ts.Status != taskCancelled || !strings.HasPrefix(ts.StatusMessage, "cancelled by tasks/cancel at step 1 of 6") {
			t.Errorf("after tasks/cancel: %s %q", ts.Status, ts.StatusMessage)
		}
		logs.waitFor(t, `task_job #\d+ \(task \w+\): tasks/cancel honoured`)

		// A second cancel finds a terminal task: -32602 in 2025-11-25; the
		// extension acknowledges it.
		_, resp = p.roundTrip(30, "tasks/cancel", taskIDParams(e, h.TaskID))
		if e == legacy && (resp.Error == nil || resp.Error.Code != -32602) {
			t.Errorf("cancel of a cancelled task = %s, want -32602", resp)
		}
		if e == modern && resp.Error != nil {
			t.Errorf("modern cancel of a cancelled task = %s, want an acknowledgement", resp)
		}
	})
}

func TestTaskStubbornFinishesAfterCancel(t *testing.T) {
	forEachTaskPeer(t, func(t *testing.T, transport string, e era) {
		_, logs, p := openTaskPeer(t, transport, e)
		h := startTaskCall(t, p, e, 10, toolTaskStubborn, args("seconds", 0.15, "steps", 3, "pollMs", 10))
		_, resp := p.roundTrip(11, "tasks/cancel", taskIDParams(e, h.TaskID))
		if e == legacy {
			// A deliberate violation: acknowledged, still working.
			if ts := decodeTask(t, resp, e, false); ts.Status != taskWorking || !strings.Contains(ts.StatusMessage, "ignored") {
				t.Errorf("stubborn tasks/cancel returned %s %q, want working, ignored", ts.Status, ts.StatusMessage)
			}
		} else if resp.Error != nil {
			t.Errorf("modern tasks/cancel = %s", resp)
		}
		next := 20
		ts := pollUntil(t, p, e, &next, h.TaskID, terminal)
		if ts.Status != taskCompleted {
			t.Fatalf("stubborn ended %s %q, want completed", ts.Status, ts.StatusMessage)
		}
		text, isErr, _ := outcome(t, p, e, &next, ts)
		if isErr || !strings.Contains(text, "after acknowledging tasks/cancel") {
			t.Errorf("stubborn result %q", text)
		}
		logs.waitFor(t, `task_stubborn #\d+ \(task \w+\): tasks/cancel acknowledged and ignored`)
	})
}

func TestTaskFlipChangesAfterTerminal(t *testing.T) {
	forEachTaskPeer(t, func(t *testing.T, transport string, e era) {
		_, _, p := openTaskPeer(t, transport, e)
		h := startTaskCall(t, p, e, 10, toolTaskFlip, fastJob)
		next := 10
		ts := pollUntil(t, p, e, &next, h.TaskID, terminal)
		if ts.Status != taskCompleted {
			t.Fatalf("flip ended %s", ts.Status)
		}
		if e == legacy {
			// The notification before tasks/result says working.
			_, _, before := outcome(t, p, e, &next, ts)
			var notes []string
			for _, m := range before {
				if m.Method == notificationTaskStatus {
					var n taskState
					_ = json.Unmarshal(m.Params, &n)
					notes = append(notes, n.TaskID+" "+n.Status)
				}
			}
			// (On stdio the status notification of completed may come
			// late, just ahead of the flip.)
			if len(notes) == 0 || notes[len(notes)-1] != h.TaskID+" working" {
				t.Errorf("notifications before tasks/result: %v, want the last saying working", notes)
			}
		}
		next++
		_, resp := p.roundTrip(next, "tasks/get", taskIDParams(e, h.TaskID))
		if again := decodeTask(t, resp, e, false); again.Status != taskWorking {
			t.Errorf("tasks/get after completed: %s, want working (the deliberate flip)", again.Status)
		}
	})
}

func TestTaskInput(t *testing.T) {
	forEachTaskPeer(t, func(t *testing.T, transport string, e era) {
		_, logs, p := openTaskPeer(t, transport, e)
		wait := 60.0
		if e == legacy {
			wait = 0.05 // the legacy demo cannot be answered; it gives up
		}
		h := startTaskCall(t, p, e, 10, toolTaskInput, args("seconds", 0.02, "wait", wait, "pollMs", 10))
		next := 10
		ts := pollUntil(t, p, e, &next, h.TaskID, func(ts taskState) bool { return ts.Status != taskWorking })
		if ts.Status != taskInputRequired || !strings.Contains(ts.StatusMessage, "waiting for input") {
			t.Fatalf("task_input: %s %q, want input_required", ts.Status, ts.StatusMessage)
		}
		if e == legacy {
			if ts.InputRequests != nil {
				t.Errorf("legacy task with inputRequests: %+v", ts)
			}
			ts = pollUntil(t, p, e, &next, h.TaskID, terminal)
			text, isErr, _ := outcome(t, p, e, &next, ts)
			if ts.Status != taskFailed || !isErr || !strings.Contains(text, "no answer") {
				t.Errorf("legacy task_input ended %s, %q (isError %t)", ts.Status, text, isErr)
			}
			return
		}
		var reqs map[string]struct {
			Method string `json:"method"`
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
		}
		if err := json.Unmarshal(ts.InputRequests, &reqs); err != nil || reqs[inputKey].Method != "elicitation/create" {
			t.Fatalf("inputRequests = %s", ts.InputRequests)
		}
		// A key that is not outstanding is ignored; the right one answers.
		for i, key := range []string{"nope", inputKey} {
			_, resp := p.roundTrip(40+i, "tasks/update", e.params(map[string]any{"taskId": h.TaskID,
				"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}, ""))
			if resp.Error != nil || string(resp.Result) != `{"resultType":"complete"}` {
				t.Errorf("tasks/update = %s", resp)
			}
		}
		ts = pollUntil(t, p, e, &next, h.TaskID, terminal)
		if text, isErr, _ := outcome(t, p, e, &next, ts); ts.Status != taskCompleted || isErr || text != "Hello, Ada!" {
			t.Errorf("task_input ended %s with %q", ts.Status, text)
		}
		logs.waitFor(t, `task_input #\d+ \(task \w+\): tasks/update answered "name"`)
	})
}

func TestTaskRequiredAndRefused(t *testing.T) {
	forEachTaskPeer(t, func(t *testing.T, transport string, e era) {
		_, _, p := openTaskPeer(t, transport, e)
		// task_input without a task: -32601 in 2025-11-25 (MUST), -32021
		// naming the extension in the modern era.
		_, resp := p.roundTrip(10, "tools/call", e.params(map[string]any{"name": toolTaskInput, "arguments": map[string]any{}}, ""))
		want := -32601
		if e == modern {
			want = codeMissingCapability
		}
		if resp.Error == nil || resp.Error.Code != want {
			t.Errorf("task_input without a task = %s, want %d", resp, want)
		}
		if e == modern && !strings.Contains(resp.raw, `"requiredCapabilities":{"extensions":{"`+extensionTasks+`":{}}}`) {
			t.Errorf("-32021 without requiredCapabilities: %s", resp)
		}

		// A task asked of a tool without task support: legacy -32601; the
		// modern server decides, and slow is no task.
		_, resp = p.roundTrip(11, "tools/call", taskCallParams(e, toolSlow, args("seconds", 0, "steps", 1), nil))
		if e == legacy && (resp.Error == nil || resp.Error.Code != -32601) {
			t.Errorf("slow as a task = %s, want -32601", resp)
		}
		if e == modern {
			if text, _ := resp.toolText(t); !strings.HasPrefix(text, "slow finished") {
				t.Errorf("slow with the extension declared = %s, want its ordinary result", resp)
			}
		}

		// task_job without a task is an ordinary request.
		_, resp = p.roundTrip(12, "tools/call", e.params(map[string]any{"name": toolTaskJob, "arguments": args("seconds", 0, "steps", 1)}, ""))
		if text, _ := resp.toolText(t); !strings.HasPrefix(text, "task_job finished 1 steps") {
			t.Errorf("task_job without a task = %s", resp)
		}

		// Unknown tasks, methods of the other era, bad arguments.
		for i, method := range []string{"tasks/get", "tasks/cancel"} {
			if _, resp := p.roundTrip(20+i, method, taskIDParams(e, "no-such-task")); resp.Error == nil || resp.Error.Code != -32602 {
				t.Errorf("%s of an unknown task = %s, want -32602", method, resp)
			}
		}
		other := map[era][]string{legacy: {"tasks/update"}, modern: {"tasks/result", "tasks/list"}}
		for i, method := range other[e] {
			if _, resp := p.roundTrip(30+i, method, taskIDParams(e, "x")); resp.Error == nil || resp.Error.Code != -32601 {
				t.Errorf("%s in the %s era = %s, want -32601", method, e, resp)
			}
		}
		_, resp = p.roundTrip(40, "tools/call", taskCallParams(e, toolTaskJob, args("steps", 0), nil))
		if resp.Error == nil || resp.Error.Code != -32602 {
			t.Errorf("task_job with steps 0 = %s, want -32602", resp)
		}
	})
}

func TestTaskListLegacy(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			_, _, p := openTaskPeer(t, transport, legacy)
			a := startTaskCall(t, p, legacy, 10, toolTaskJob, fastJob)
			b := startTaskCall(t, p, legacy, 11, toolTaskStubborn, fastJob)
			_, resp := p.roundTrip(12, "tasks/list", legacy.params(nil, ""))
			var list struct {
				Tasks []taskState `json:"tasks"`
			}
			if err := json.Unmarshal(resp.Result, &list); err != nil || len(list.Tasks) != 2 ||
				list.Tasks[0].TaskID != a.TaskID || list.Tasks[1].TaskID != b.TaskID {
				t.Errorf("tasks/list = %s, want %s and %s", resp, a.TaskID, b.TaskID)
			}
			if _, resp := p.roundTrip(13, "tasks/list", legacy.params(map[string]any{"cursor": "bogus"}, "")); resp.Error == nil || resp.Error.Code != -32602 {
				t.Errorf("tasks/list with a bad cursor = %s, want -32602", resp)
			}
			// Another peer sees none of them.
			_, _, q := openTaskPeer(t, transport, legacy)
			if _, resp := q.roundTrip(14, "tasks/get", taskIDParams(legacy, a.TaskID)); resp.Error == nil || resp.Error.Code != -32602 {
				t.Errorf("another session's tasks/get = %s, want -32602", resp)
			}
		})
	}
}

// A legacy request may ask for a TTL; once it has passed, the task is gone.
func TestTaskTTL(t *testing.T) {
	s, _ := newTestServer(t)
	s.tasks.minTTL = 10 * time.Millisecond
	p := startStdio(t, s)
	p.open(legacy)
	_, resp := p.roundTrip(10, "tools/call", taskCallParams(legacy, toolTaskJob, args("seconds", 60, "pollMs", 10), map[string]any{"ttl": 50}))
	h := decodeTask(t, resp, legacy, true)
	if *h.TTL != 50 {
		t.Errorf("ttl %d, want the 50 asked for", *h.TTL)
	}
	time.Sleep(80 * time.Millisecond)
	if _, resp := p.roundTrip(11, "tasks/get", taskIDParams(legacy, h.TaskID)); resp.Error == nil || resp.Error.Code != -32602 {
		t.Errorf("tasks/get after the ttl = %s, want -32602", resp)
	}
}

// tasks/result blocks until the task ends.
func TestTaskResultBlocks(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			_, _, p := openTaskPeer(t, transport, legacy)
			h := startTaskCall(t, p, legacy, 10, toolTaskJob, fastJob)
			start := time.Now()
			_, resp := p.roundTrip(11, "tasks/result", taskIDParams(legacy, h.TaskID))
			if text, _ := resp.toolText(t); !strings.HasPrefix(text, "task_job finished") || time.Since(start) < 30*time.Millisecond {
				t.Errorf("tasks/result after %s: %s", time.Since(start), resp)
			}
		})
	}
}

// Over modern HTTP the layer checks the standard headers as the SDK does:
// Mcp-Name must be the taskId.
func TestTaskHTTPModernHeaders(t *testing.T) {
	s, _ := newTestServer(t)
	hp := &httpTaskPeer{h: startHTTP(t, s)}
	h := startTaskCall(t, hp, modern, 10, toolTaskJob, fastJob)
	body := request(11, "tasks/get", taskIDParams(modern, h.TaskID))
	header := hp.headers(body)
	header.Set("Mcp-Name", "another-task")
	resp := hp.h.do(context.Background(), http.MethodPost, body, header)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "-32020") {
		t.Errorf("tasks/get with a wrong Mcp-Name = %s %s, want 400 with -32020", resp.Status, data)
	}
}

// Close stops running tasks; a blocked tasks/result gets an error rather
// than hanging (goleak checks nothing is left).
func TestTaskCloseStopsTasks(t *testing.T) {
	s, logs := newTestServer(t)
	p := startStdio(t, s)
	p.open(legacy)
	h := startTaskCall(t, p, legacy, 10, toolTaskStubborn, args("seconds", 60, "pollMs", 10))
	p.send(request(11, "tasks/result", taskIDParams(legacy, h.TaskID)))
	_ = s.Close()
	logs.waitFor(t, `shutdown: stopped 1 task`)
}

func TestRewriteResult(t *testing.T) {
	in := json.RawMessage(`{"tools":[{"name":"slow"},{"name":"task_job","title":"x"}],"nextCursor":"c"}`)
	got := string(rewriteResult(methodToolsList, in))
	want := `{"nextCursor":"c","tools":[{"name":"slow"},{"execution":{"taskSupport":"optional"},"name":"task_job","title":"x"}]}`
	if got != want {
		t.Errorf("tools/list rewritten to %s, want %s", got, want)
	}
	if got := string(rewriteResult(methodDiscover, json.RawMessage(`{"capabilities":{"extensions":{"x":{}}}}`))); got != `{"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{},"x":{}}}}` {
		t.Errorf("discover rewritten to %s", got)
	}
	if got := string(rewriteResult(methodInitialize, json.RawMessage(`not json`))); got != "not json" {
		t.Errorf("unreadable result changed: %s", got)
	}
	ev := []byte("event: message\nid: 7\ndata: {\"a\":1}\n\n")
	if got := string(replaceEventData(ev, []byte(`{"b":2}`))); got != "event: message\nid: 7\ndata: {\"b\":2}\n\n" {
		t.Errorf("replaceEventData = %q", got)
	}
}

// Over legacy stdio every change of status is also a
// notifications/tasks/status, in order; modern tasks send none.
func TestTaskStatusNotificationsStdio(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			s, _ := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			h := startTaskCall(t, p, e, 10, toolTaskInput, args("seconds", 0.01, "wait", 0.03, "pollMs", 10))
			if e == modern {
				time.Sleep(80 * time.Millisecond)
				if got := statusNotes(p.barrier(e, 11)); got != "" {
					t.Errorf("modern status notifications %q, want none", got)
				}
				return
			}
			before, _ := p.until(func(m msg) bool {
				return m.Method == notificationTaskStatus && strings.Contains(string(m.Params), `"status":"failed"`)
			})
			if got := statusNotes(before); got != "input_required" {
				t.Errorf("notifications before failed: %q, want input_required", got)
			}
			if !strings.Contains(before[0].raw, h.TaskID) || strings.Contains(before[0].raw, metaRelatedTask) {
				t.Errorf("notification %s: want the taskId and no related-task _meta", before[0])
			}
		})
	}
}

func TestTaskSchemasMatchDefaults(t *testing.T) {
	for tool, schema := range map[string]json.RawMessage{toolTaskJob: taskJobSchema, toolTaskStubborn: taskStubbornSchema, toolTaskFlip: taskJobSchema, toolTaskInput: taskInputSchema} {
		var sc struct {
			Properties map[string]struct {
				Default float64 `json:"default"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(schema, &sc); err != nil {
			t.Fatalf("%s schema: %v", tool, err)
		}
		a, err := parseTaskArgs(tool, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{"seconds": a.Seconds, "steps": float64(a.Steps), "pollMs": float64(a.PollMs), "wait": a.WaitSec}
		for name, p := range sc.Properties {
			if got[name] != p.Default {
				t.Errorf("%s %s: default %v in the schema, %v in the task layer", tool, name, p.Default, got[name])
			}
		}
	}
}
