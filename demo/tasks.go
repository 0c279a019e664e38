package demo

// Tasks: the legacy tasks utility of 2025-11-25 and the modern
// io.modelcontextprotocol/tasks extension, served by the demo itself.
//
// go-sdk v1.8.0 has no task support, and it rejects methods it does not know
// (tasks/get and the rest) before any middleware runs. So the demo serves
// tasks in a layer in front of the SDK, on both transports (taskwire.go): it
// answers tasks/get, tasks/result, tasks/cancel, tasks/list, tasks/update and
// the task-augmented tools/call of the task tools from the store below, and
// it rewrites what the SDK answers to initialize and tools/list so that the
// server advertises tasks. Everything else still goes to the SDK; the task
// tools are registered with it too, so they appear in tools/list and a call
// that is not a task runs as an ordinary request.
//
// The task tools each show one behaviour a client has to cope with:
// task_job honours tasks/cancel, task_stubborn acknowledges it and finishes
// anyway, task_input needs input (input_required) and task_flip changes its
// status after a terminal one.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Task tool names, a contract like the other tools'.
const (
	toolTaskJob      = "task_job"
	toolTaskStubborn = "task_stubborn"
	toolTaskInput    = "task_input"
	toolTaskFlip     = "task_flip"
)

// Methods, metadata keys and codes of the two eras' tasks.
const (
	methodTasksGet         = "tasks/get"
	methodTasksResult      = "tasks/result"
	methodTasksCancel      = "tasks/cancel"
	methodTasksList        = "tasks/list"
	methodTasksUpdate      = "tasks/update"
	methodToolsCall        = "tools/call"
	methodToolsList        = "tools/list"
	methodInitialize       = "initialize"
	notificationTaskStatus = "notifications/tasks/status"
	extensionTasks         = "io.modelcontextprotocol/tasks"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaRelatedTask        = "io.modelcontextprotocol/related-task"
	// codeMissingCapability is the modern era's Missing Required Client
	// Capability.
	codeMissingCapability = -32021
)

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// Limits of the task store.
const (
	defaultTaskTTL = 60 * time.Second
	minTaskTTL     = time.Second
	maxTaskTTL     = 10 * time.Minute
	maxTasks       = 1000
	taskListPage   = 50
	// inputKey names task_input's one input request.
	inputKey = "name"
)

// taskTools says which tools run as tasks, and how: "optional" (a client may
// ask for a task or not) or "required" (only as a task).
var taskTools = map[string]string{
	toolTaskJob:      "optional",
	toolTaskStubborn: "optional",
	toolTaskFlip:     "optional",
	toolTaskInput:    "required",
}

func isTerminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// taskArgs are the arguments of every task tool; each uses what it needs.
type taskArgs struct {
	Seconds float64 `json:"seconds"`
	Steps   int     `json:"steps"`
	PollMs  int     `json:"pollMs"`
	WaitSec float64 `json:"wait"`
}

var (
	taskJobSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"seconds": {"type": "number", "minimum": 0, "maximum": 3600, "default": 6, "description": "How long the whole run takes."},
			"steps": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 6, "description": "How many steps the run is split into; the task's statusMessage names the current one."},
			"pollMs": {"type": "integer", "minimum": 10, "maximum": 60000, "default": 500, "description": "The pollInterval the task suggests, in milliseconds."}
		},
		"additionalProperties": false
	}`)
	// task_stubborn finishes sooner by default, within the late window a
	// client keeps watching after a cancel (inflight's: 5s).
	taskStubbornSchema = json.RawMessage(strings.Replace(string(taskJobSchema), `"default": 6, "description": "How long`, `"default": 3, "description": "How long`, 1))
	taskInputSchema    = json.RawMessage(`{
		"type": "object",
		"properties": {
			"seconds": {"type": "number", "minimum": 0, "maximum": 3600, "default": 1, "description": "How long the task works before it asks for input."},
			"wait": {"type": "number", "minimum": 0, "maximum": 3600, "default": 60, "description": "How long it then waits for the answer before it gives up."},
			"pollMs": {"type": "integer", "minimum": 10, "maximum": 60000, "default": 500, "description": "The pollInterval the task suggests, in milliseconds."}
		},
		"additionalProperties": false
	}`)
)

// parseTaskArgs decodes and checks the arguments of a task-augmented call,
// which bypasses the SDK's schema validation.
func parseTaskArgs(tool string, raw json.RawMessage) (taskArgs, error) {
	a := taskArgs{Seconds: 6, Steps: 6, PollMs: 500, WaitSec: 60}
	switch tool {
	case toolTaskInput:
		a.Seconds = 1
	case toolTaskStubborn:
		a.Seconds = 3
	}
	if len(raw) > 0 && string(raw) != "null" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return a, fmt.Errorf("arguments must be an object")
		}
		allowed := []string{"seconds", "pollMs"}
		if tool == toolTaskInput {
			allowed = append(allowed, "wait")
		} else {
			allowed = append(allowed, "steps")
		}
		for k := range m {
			if !slices.Contains(allowed, k) {
				return a, fmt.Errorf("unknown argument %q (allowed: %s)", k, strings.Join(allowed, ", "))
			}
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return a, fmt.Errorf("arguments: %v", err)
		}
	}
	switch {
	case a.Seconds < 0 || a.Seconds > 3600:
		return a, fmt.Errorf("seconds must be between 0 and 3600")
	case a.WaitSec < 0 || a.WaitSec > 3600:
		return a, fmt.Errorf("wait must be between 0 and 3600")
	case a.Steps < 1 || a.Steps > 10000:
		return a, fmt.Errorf("steps must be between 1 and 10000")
	case a.PollMs < 10 || a.PollMs > 60000:
		return a, fmt.Errorf("pollMs must be between 10 and 60000")
	}
	return a, nil
}

// A task is one task-augmented tools/call the demo is running or has run.
// Every field after the first block is guarded by taskStore.mu.
type task struct {
	id      string
	tool    string
	modern  bool
	owner   string // who may see it: a stdio connection or a legacy HTTP session; "" for anyone with the ID
	created time.Time
	ttl     time.Duration
	poll    time.Duration
	n       int64 // the server's run number, for log lines
	// cancel ends the work on tasks/cancel; kill ends it regardless (TTL
	// expiry, server shutdown), which even task_stubborn obeys.
	cancelCtx context.Context
	cancel    context.CancelFunc
	killCtx   context.Context
	kill      context.CancelFunc
	// done is closed when the task reaches its (true) terminal status.
	done chan struct{}
	// input carries the inputResponses entry for task_input's request.
	input chan json.RawMessage
	// notify, when set (legacy stdio), writes a notifications/tasks/status;
	// noteMu keeps those in the order of the changes (see flushNotes).
	notify func(*jsonrpc.Request)
	noteMu sync.Mutex

	status        string
	message       string
	updated       time.Time
	result        json.RawMessage // the CallToolResult, once terminal
	rpcErr        *jsonrpc.Error  // the JSON-RPC error, for a failed modern task
	inputRequests json.RawMessage // outstanding, while input_required
	// asking: a legacy task_input's question is out on a tasks/result
	// call, waiting for the client's answer.
	asking      bool
	cancelAsked bool
	// revealed is set once a response showed the terminal status; flipped
	// once task_flip starts saying "working" again after it.
	revealed bool
	flipped  bool
	// notes are the status notifications not yet written.
	notes []*jsonrpc.Request
}

// taskStore holds the tasks.
type taskStore struct {
	mu      sync.Mutex
	tasks   map[string]*task
	workers sync.WaitGroup
	// minTTL bounds the TTL a legacy request may ask for (tests lower it).
	minTTL time.Duration
	// owners numbers stdio connections, the owners of their tasks.
	owners atomic.Int64
}

func (st *taskStore) init() {
	st.tasks = make(map[string]*task)
	st.minTTL = minTaskTTL
}

// get returns the task with id visible to owner, after dropping the tasks
// whose TTL has passed.
func (st *taskStore) get(id, owner string, now time.Time) *task {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked(now)
	t := st.tasks[id]
	if t == nil || (t.owner != "" && t.owner != owner) {
		return nil
	}
	return t
}

// expireLocked deletes tasks past their TTL (the spec lets a receiver delete
// a task and its result then, whatever its status) and stops their work.
func (st *taskStore) expireLocked(now time.Time) {
	for id, t := range st.tasks {
		if now.Sub(t.created) > t.ttl {
			delete(st.tasks, id)
			t.kill()
		}
	}
}

// killAll stops every task's work and reports how many were running; wait
// then waits for the work to end.
func (st *taskStore) killAll() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := 0
	for _, t := range st.tasks {
		if !isTerminal(t.status) {
			n++
		}
		t.kill()
	}
	return n
}

func (st *taskStore) wait() { st.workers.Wait() }

// timestamp formats a task time as ISO 8601.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// reported is the status and message a response shows now. task_flip says
// "working" again once its terminal status has been shown (a deliberate
// violation of "tasks in a terminal state MUST NOT transition").
func (t *task) reported() (string, string) {
	if t.flipped {
		return taskWorking, "working again after completed (task_flip: a deliberate violation)"
	}
	return t.status, t.message
}

// legacyTask is the Task of 2025-11-25.
type legacyTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

// modernTask is the extension's DetailedTask, with its resultType.
type modernTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
}

// legacyViewLocked is the task as a legacy Task object.
func (t *task) legacyViewLocked() legacyTask {
	status, msg := t.reported()
	return legacyTask{TaskID: t.id, Status: status, StatusMessage: msg, CreatedAt: timestamp(t.created),
		LastUpdatedAt: timestamp(t.updated), TTL: t.ttl.Milliseconds(), PollInterval: t.poll.Milliseconds()}
}

// modernViewLocked is the task as a modern DetailedTask with the given
// resultType ("task" for a CreateTaskResult, "complete" for tasks/get).
func (t *task) modernViewLocked(resultType string) modernTask {
	status, msg := t.reported()
	v := modernTask{ResultType: resultType, TaskID: t.id, Status: status, StatusMessage: msg, CreatedAt: timestamp(t.created),
		LastUpdatedAt: timestamp(t.updated), TTLMs: t.ttl.Milliseconds(), PollIntervalMs: t.poll.Milliseconds()}
	switch status {
	case taskInputRequired:
		v.InputRequests = t.inputRequests
	case taskCompleted:
		v.Result = t.result
	case taskFailed:
		v.Error = t.rpcErr
		if v.Error == nil {
			v.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: t.message}
		}
	}
	return v
}

func (t *task) logf(s *Server, format string, args ...any) {
	s.logf("%s #%d (task %s): %s", t.tool, t.n, shortID(t.id), fmt.Sprintf(format, args...))
}

// shortID is the start of a task ID, enough to tell tasks apart in the log.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// setStatus moves a task to a new status (and message). A terminal status
// is final: the work's later attempts to change it are ignored.
func (s *Server) setStatus(t *task, status, message string) bool {
	defer s.flushNotes(t)
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return s.setStatusLocked(t, status, message)
}

func (s *Server) setStatusLocked(t *task, status, message string) bool {
	if isTerminal(t.status) {
		return false
	}
	changed := status != t.status
	if changed {
		t.logf(s, "%s → %s%s", t.status, status, quoted(message))
	}
	t.status, t.message, t.updated = status, message, time.Now()
	if status != taskInputRequired {
		t.inputRequests = nil
	}
	if changed && t.notify != nil {
		if params, err := json.Marshal(t.legacyViewLocked()); err == nil {
			t.notes = append(t.notes, &jsonrpc.Request{Method: notificationTaskStatus, Params: params})
		}
	}
	if isTerminal(status) {
		close(t.done)
	}
	return true
}

// flushNotes writes the task's pending status notifications, in order,
// outside the store's lock (a peer that stops reading blocks only this).
func (s *Server) flushNotes(t *task) {
	t.noteMu.Lock()
	defer t.noteMu.Unlock()
	s.tasks.mu.Lock()
	notes := t.notes
	t.notes = nil
	s.tasks.mu.Unlock()
	for _, n := range notes {
		t.notify(n)
	}
}

func quoted(msg string) string {
	if msg == "" {
		return ""
	}
	return " " + strconv.Quote(msg)
}

// finish ends a task with its tool result: completed, or, for a tool error
// in the legacy era, failed (the legacy utility says a tool result with
// isError is a failed task; the modern extension keeps it completed).
func (s *Server) finish(t *task, res *mcp.CallToolResult, message string) {
	data, err := json.Marshal(res)
	if err != nil {
		data = json.RawMessage(`{"content":[],"isError":true}`)
	}
	defer s.flushNotes(t)
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if isTerminal(t.status) {
		return
	}
	t.result = data
	status := taskCompleted
	if res.IsError && !t.modern {
		status = taskFailed
	}
	s.setStatusLocked(t, status, message)
}

// startTask creates a task for a task-augmented tools/call and starts its
// work. requestedTTL is the legacy request's task.ttl, if any; notify, if
// not nil, sends the task's status notifications.
func (s *Server) startTask(owner string, modern bool, tool string, a taskArgs, requestedTTL *float64, notify func(*jsonrpc.Request)) (*task, *jsonrpc.Error) {
	ttl := defaultTaskTTL
	if requestedTTL != nil {
		ttl = min(max(time.Duration(*requestedTTL*float64(time.Millisecond)), s.tasks.minTTL), maxTaskTTL)
	}
	now := time.Now()
	t := &task{id: rand.Text(), tool: tool, modern: modern, owner: owner, created: now, updated: now, ttl: ttl,
		poll: time.Duration(a.PollMs) * time.Millisecond, n: s.runs.Add(1), done: make(chan struct{}),
		input: make(chan json.RawMessage, 1), status: taskWorking, notify: notify}
	t.killCtx, t.kill = context.WithCancel(context.Background())
	t.cancelCtx, t.cancel = context.WithCancel(t.killCtx)

	s.tasks.mu.Lock()
	s.tasks.expireLocked(now)
	if len(s.tasks.tasks) >= maxTasks || s.isClosing() {
		s.tasks.mu.Unlock()
		t.kill()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the demo server holds too many tasks (or is shutting down); try again later"}
	}
	// The first message is set before the handle goes out, so the handle
	// already says what the task is doing.
	if tool == toolTaskInput {
		t.message = "working before it asks for input"
	} else {
		t.message = fmt.Sprintf("step 1 of %d", a.Steps)
	}
	s.tasks.tasks[t.id] = t
	s.tasks.workers.Add(1)
	s.tasks.mu.Unlock()

	era := "legacy"
	if modern {
		era = "modern"
	}
	switch tool {
	case toolTaskInput:
		t.logf(s, "created (%s; input asked after %s, awaited %s; ttl %s, poll %s)", era, seconds(a.Seconds), seconds(a.WaitSec), ttl, t.poll)
	default:
		t.logf(s, "created (%s; %d steps over %s; ttl %s, poll %s)", era, a.Steps, seconds(a.Seconds), ttl, t.poll)
	}
	go func() {
		defer s.tasks.workers.Done()
		switch tool {
		case toolTaskInput:
			s.runTaskInput(t, a)
		default:
			s.runTaskSteps(t, a)
		}
	}()
	return t, nil
}

// taskWait sleeps for d, or returns early with the context's error, or
// errServerClosing.
func (s *Server) taskWait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closing:
		return errServerClosing
	}
}

// stoppedEarly ends a task whose work was stopped by something other than
// tasks/cancel (which has already set cancelled).
func (s *Server) stoppedEarly(t *task, err error) {
	if err == errServerClosing {
		s.setStatus(t, taskFailed, "the demo server shut down")
		return
	}
	if t.killCtx.Err() != nil {
		t.logf(s, "stopped: its ttl of %s passed", t.ttl)
	}
}

// runTaskSteps is the work of task_job, task_stubborn and task_flip: steps
// over a duration, the statusMessage naming the current step.
func (s *Server) runTaskSteps(t *task, a taskArgs) {
	ctx := t.cancelCtx
	if t.tool == toolTaskStubborn {
		ctx = t.killCtx // tasks/cancel does not stop it
	}
	start := t.created
	step := seconds(a.Seconds) / time.Duration(a.Steps)
	for i := 1; i <= a.Steps; i++ {
		msg := fmt.Sprintf("step %d of %d", i, a.Steps)
		s.tasks.mu.Lock()
		if t.cancelAsked && t.tool == toolTaskStubborn {
			msg += " (tasks/cancel acknowledged and ignored)"
		}
		if !isTerminal(t.status) {
			t.message, t.updated = msg, time.Now()
		}
		s.tasks.mu.Unlock()
		if err := s.taskWait(ctx, step); err != nil {
			s.stoppedEarly(t, err)
			return
		}
	}
	elapsed := roundDuration(time.Since(start))
	s.tasks.mu.Lock()
	ignored := t.cancelAsked
	s.tasks.mu.Unlock()
	text := fmt.Sprintf("%s finished %d steps in %s", t.tool, a.Steps, elapsed)
	message := fmt.Sprintf("finished %d steps", a.Steps)
	if ignored {
		text += ", after acknowledging tasks/cancel"
		message += " after tasks/cancel"
	}
	s.finish(t, textResult("%s", text), message)
}

// inputRequest is task_input's elicitation, as the modern inputRequests
// carry it.
var inputRequest = json.RawMessage(`{"` + inputKey + `":{"method":"elicitation/create","params":{"mode":"form","message":"What is your name? (task_input finishes with a greeting)","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}}}}`)

// runTaskInput is task_input: it works a while, then goes input_required
// with an elicitation, and finishes with a greeting once tasks/update
// answers it (or with a tool error when no answer comes in time).
func (s *Server) runTaskInput(t *task, a taskArgs) {
	if err := s.taskWait(t.cancelCtx, seconds(a.Seconds)); err != nil {
		s.stoppedEarly(t, err)
		return
	}
	msg := `waiting for input: a name (inputRequests "name"; answer with tasks/update)`
	if !t.modern {
		// The legacy utility asks on tasks/result, which the client
		// calls when it sees input_required (askOnResult).
		msg = "waiting for input: a name (call tasks/result: it is asked there with elicitation/create)"
	}
	s.tasks.mu.Lock()
	ok := s.setStatusLocked(t, taskInputRequired, msg)
	if ok {
		t.inputRequests = inputRequest
	}
	s.tasks.mu.Unlock()
	s.flushNotes(t)
	if !ok {
		return
	}

	wait := time.NewTimer(seconds(a.WaitSec))
	defer wait.Stop()
	select {
	case <-t.cancelCtx.Done():
		s.stoppedEarly(t, nil)
	case <-s.closing:
		s.stoppedEarly(t, errServerClosing)
	case <-wait.C:
		res := textResult("task_input got no answer within %s", seconds(a.WaitSec))
		res.IsError = true
		s.finish(t, res, "no input arrived")
	case answer := <-t.input:
		var r struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		_ = json.Unmarshal(answer, &r)
		s.setStatus(t, taskWorking, "got the answer; finishing")
		if err := s.taskWait(t.cancelCtx, min(seconds(a.Seconds), 200*time.Millisecond)); err != nil {
			s.stoppedEarly(t, err)
			return
		}
		if r.Action == "accept" && r.Content.Name != "" {
			s.finish(t, textResult("Hello, %s!", r.Content.Name), "greeted")
			return
		}
		action := r.Action
		if action == "" {
			action = "an answer without an action"
		}
		s.finish(t, textResult("task_input got no name: the client answered %s", action), "no name given")
	}
}

// askOnResult asks a legacy task_input's question on the tasks/result
// call that came while it waits for input (the 2025-11-25 utility: the
// requestor calls tasks/result on input_required, and the receiver sends
// its requests there, tied to the task by related-task), once at a time;
// the answer goes to the task as tasks/update's does in the modern era.
func (s *Server) askOnResult(ctx context.Context, t *task, ask func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)) {
	s.tasks.mu.Lock()
	if ask == nil || t.modern || t.tool != toolTaskInput || t.status != taskInputRequired || t.asking {
		s.tasks.mu.Unlock()
		return
	}
	t.asking = true
	s.tasks.mu.Unlock()
	params := &mcp.ElicitParams{Mode: "form", Message: "What is your name? (task_input finishes with a greeting)",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`),
		Meta:            mcp.Meta{metaRelatedTask: map[string]string{"taskId": t.id}}}
	s.tasks.workers.Add(1)
	go func() {
		defer s.tasks.workers.Done()
		res, err := ask(ctx, params)
		s.tasks.mu.Lock()
		t.asking = false
		s.tasks.mu.Unlock()
		if err != nil {
			t.logf(s, "elicitation/create on tasks/result got no answer: %v", err)
			return
		}
		answer, _ := json.Marshal(res)
		select {
		case t.input <- answer:
			t.logf(s, "elicitation/create on tasks/result answered %s", res.Action)
		default:
		}
	}()
}

// taskError is a JSON-RPC error reply.
func taskError(code int64, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// taskReply is the layer's answer to one intercepted request: notifications
// to write first (on the same stream), then the response; a nil response
// means none is sent (the peer went away).
type taskReply struct {
	notes  []*jsonrpc.Request
	result any
	err    *jsonrpc.Error
}

// taskCall is an intercepted request, decoded.
type taskCall struct {
	method string
	params json.RawMessage
	modern bool
	owner  string
	// notify, if not nil, writes a notification to the requestor (legacy
	// stdio), for the status notifications of the tasks it creates.
	notify func(*jsonrpc.Request)
	// ask, if not nil, asks the requestor a question as a request of the
	// server's own (legacy): task_input's, on a tasks/result call.
	ask func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// callParams is what the layer reads of a tools/call.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Task      json.RawMessage `json:"task"`
	Meta      struct {
		ClientCapabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	} `json:"_meta"`
}

// taskAugmented reports whether a tools/call asks for (legacy: a task
// object) or accepts (modern: the extension declared) a task.
func (p *callParams) taskAugmented(modern bool) bool {
	if modern {
		return p.Meta.ClientCapabilities.Extensions[extensionTasks] != nil
	}
	return len(p.Task) > 0 && p.Task[0] == '{'
}

// interceptsTask reports whether the task layer answers a request rather
// than the SDK: every tasks/ method, and the tools/call that become tasks or
// that the task rules refuse.
func interceptsTask(method string, params json.RawMessage, modern bool) bool {
	switch method {
	case methodTasksGet, methodTasksResult, methodTasksCancel, methodTasksList, methodTasksUpdate:
		return true
	case methodToolsCall:
		if !strings.Contains(string(params), "task") {
			return false
		}
		var p callParams
		if json.Unmarshal(params, &p) != nil {
			return false // the SDK reports the malformed params
		}
		support, isTaskTool := taskTools[p.Name]
		switch {
		case p.taskAugmented(modern):
			// Legacy: a task asked of a tool without task support is
			// refused here; modern: the server decides, and it makes a
			// task of its task tools only.
			return isTaskTool || !modern
		default:
			return support == "required"
		}
	}
	return false
}

// serveTask answers an intercepted request. It blocks for tasks/result
// (until the task is terminal, ctx ends or the server closes).
func (s *Server) serveTask(ctx context.Context, c taskCall) taskReply {
	now := time.Now()
	switch c.method {
	case methodToolsCall:
		return s.serveTaskCall(c)
	case methodTasksList:
		if c.modern {
			return taskReply{err: taskError(jsonrpc.CodeMethodNotFound, "tasks/list does not exist in the tasks extension (2026-07-28)")}
		}
		return s.serveTaskList(c, now)
	case methodTasksResult:
		if c.modern {
			return taskReply{err: taskError(jsonrpc.CodeMethodNotFound, "tasks/result does not exist in the tasks extension (2026-07-28): tasks/get inlines the result")}
		}
	case methodTasksUpdate:
		if !c.modern {
			return taskReply{err: taskError(jsonrpc.CodeMethodNotFound, "tasks/update does not exist in the 2025-11-25 tasks utility")}
		}
	}
	var p struct {
		TaskID         *string                    `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(c.params, &p); err != nil || p.TaskID == nil {
		return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "%s needs params.taskId, a string", c.method)}
	}
	t := s.tasks.get(*p.TaskID, c.owner, now)
	if t == nil {
		return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: task %s not found (unknown, expired, or not yours)", strconv.Quote(clipID(*p.TaskID)))}
	}
	if t.modern != c.modern {
		return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "task %s was created in the other protocol era", strconv.Quote(shortID(t.id)))}
	}
	switch c.method {
	case methodTasksGet:
		return s.serveTaskGet(t)
	case methodTasksCancel:
		return s.serveTaskCancel(t)
	case methodTasksUpdate:
		return s.serveTaskUpdate(t, p.InputResponses)
	default:
		s.askOnResult(ctx, t, c.ask)
		return s.serveTaskResult(ctx, t)
	}
}

func clipID(id string) string {
	if len(id) > 64 {
		return id[:64] + "…"
	}
	return id
}

func (s *Server) serveTaskCall(c taskCall) taskReply {
	var p callParams
	_ = json.Unmarshal(c.params, &p) // interceptsTask decoded it already
	support, isTaskTool := taskTools[p.Name]
	if !p.taskAugmented(c.modern) {
		// Only a required tool gets here.
		if c.modern {
			e := taskError(codeMissingCapability, "Missing required client capability: %s runs only as a task, and the request did not declare the %s extension", p.Name, extensionTasks)
			e.Data = json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + extensionTasks + `":{}}}}`)
			s.logf("%s: refused a call without the tasks extension (-32021)", p.Name)
			return taskReply{err: e}
		}
		s.logf("%s: refused a call without a task (-32601)", p.Name)
		return taskReply{err: taskError(jsonrpc.CodeMethodNotFound, "%s must be called as a task (its execution.taskSupport is %q): add params.task", p.Name, support)}
	}
	if !isTaskTool {
		s.logf("%s: refused a task-augmented call of a tool without task support (-32601)", p.Name)
		return taskReply{err: taskError(jsonrpc.CodeMethodNotFound, "tool %s does not support tasks (no execution.taskSupport): call it without params.task", strconv.Quote(p.Name))}
	}
	a, err := parseTaskArgs(p.Name, p.Arguments)
	if err != nil {
		return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "%s: %v", p.Name, err)}
	}
	var requested *float64
	if !c.modern {
		var tp struct {
			TTL *float64 `json:"ttl"`
		}
		_ = json.Unmarshal(p.Task, &tp)
		requested = tp.TTL
	}
	t, rerr := s.startTask(c.owner, c.modern, p.Name, a, requested, c.notify)
	if rerr != nil {
		return taskReply{err: rerr}
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if c.modern {
		return taskReply{result: t.modernViewLocked("task")}
	}
	return taskReply{result: map[string]any{"task": t.legacyViewLocked()}}
}

func (s *Server) serveTaskGet(t *task) taskReply {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	s.revealLocked(t)
	if t.modern {
		return taskReply{result: t.modernViewLocked("complete")}
	}
	return taskReply{result: t.legacyViewLocked()}
}

// revealLocked notes that a response is about to show the task's status:
// for task_flip, once its terminal status has been shown, every later
// response says "working".
func (s *Server) revealLocked(t *task) {
	if t.tool != toolTaskFlip || !isTerminal(t.status) {
		return
	}
	if t.revealed && !t.flipped {
		t.flipped = true
		t.logf(s, "says working again after it showed %s (a deliberate violation)", t.status)
	}
	t.revealed = true
}

func (s *Server) serveTaskCancel(t *task) taskReply {
	// The cancelled notification goes out before the response.
	defer s.flushNotes(t)
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	status, _ := t.reported()
	if !t.modern && isTerminal(status) {
		t.logf(s, "tasks/cancel refused: already %s (-32602)", status)
		return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "Cannot cancel task: already in terminal status '%s'", status)}
	}
	if isTerminal(t.status) {
		// Modern: cancellation of a finished task is acknowledged and
		// changes nothing.
		t.logf(s, "tasks/cancel acknowledged; the task was already %s", t.status)
		return taskReply{result: map[string]any{"resultType": "complete"}}
	}
	t.cancelAsked = true
	if t.tool == toolTaskStubborn {
		what := "the spec requires cancelled before the response; this one keeps working (a deliberate violation)"
		if t.modern {
			what = "cancellation is cooperative, and this one keeps working"
		}
		t.message += " (tasks/cancel acknowledged and ignored)"
		t.updated = time.Now()
		t.logf(s, "tasks/cancel acknowledged and ignored: %s", what)
	} else {
		t.cancel()
		where := "at " + t.message
		if t.tool == toolTaskInput {
			where = "while working, before it asked for input"
			if t.status == taskInputRequired {
				where = "while it waited for input"
			}
		}
		t.logf(s, "tasks/cancel honoured after %s, %s", roundDuration(time.Since(t.created)), where)
		res := textResult("%s was cancelled by tasks/cancel %s", t.tool, where)
		res.IsError = true
		t.result, _ = json.Marshal(res)
		s.setStatusLocked(t, taskCancelled, "cancelled by tasks/cancel "+where)
	}
	if t.modern {
		return taskReply{result: map[string]any{"resultType": "complete"}}
	}
	return taskReply{result: t.legacyViewLocked()}
}

func (s *Server) serveTaskUpdate(t *task, responses map[string]json.RawMessage) taskReply {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	answer, ok := responses[inputKey]
	if t.status != taskInputRequired || !ok {
		// Responses to keys that are not outstanding are ignored, as the
		// extension says.
		t.logf(s, "tasks/update acknowledged; nothing outstanding it answers")
		return taskReply{result: map[string]any{"resultType": "complete"}}
	}
	t.inputRequests = nil
	select {
	case t.input <- answer:
		t.logf(s, "tasks/update answered %q", inputKey)
	default:
	}
	return taskReply{result: map[string]any{"resultType": "complete"}}
}

// serveTaskResult is the legacy tasks/result: it blocks until the task is
// terminal, then returns exactly what the tools/call would have, with the
// related-task metadata.
func (s *Server) serveTaskResult(ctx context.Context, t *task) taskReply {
	select {
	case <-t.done:
	case <-ctx.Done():
		return taskReply{}
	case <-s.closing:
		return taskReply{err: taskError(jsonrpc.CodeInternalError, "the demo server shut down before task %s ended", strconv.Quote(shortID(t.id)))}
	case <-t.killCtx.Done():
		// Deleted (its TTL passed) before it ended; a task that ended
		// is answered even when both are ready.
		select {
		case <-t.done:
		default:
			return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: task %s expired", strconv.Quote(shortID(t.id)))}
		}
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	var reply taskReply
	s.revealLocked(t)
	if t.tool == toolTaskFlip {
		// The status notification says "working" after the terminal
		// status the client just saw: the violation, on the wire.
		t.flipped = true
		t.logf(s, "notifies working after %s (a deliberate violation)", t.status)
		if params, err := json.Marshal(t.legacyViewLocked()); err == nil {
			reply.notes = append(reply.notes, &jsonrpc.Request{Method: notificationTaskStatus, Params: params})
		}
	}
	var res map[string]json.RawMessage
	_ = json.Unmarshal(t.result, &res)
	if res == nil {
		res = map[string]json.RawMessage{}
	}
	res["_meta"], _ = json.Marshal(map[string]any{metaRelatedTask: map[string]string{"taskId": t.id}})
	reply.result = res
	t.logf(s, "tasks/result answered (%s)", t.status)
	return reply
}

// serveTaskList is the legacy tasks/list of the requestor's own tasks.
func (s *Server) serveTaskList(c taskCall, now time.Time) taskReply {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(c.params, &p)
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(strings.TrimPrefix(*p.Cursor, "offset-"))
		if err != nil || n < 0 || !strings.HasPrefix(*p.Cursor, "offset-") {
			return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "tasks/list: invalid cursor")}
		}
		start = n
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	s.tasks.expireLocked(now)
	var mine []*task
	for _, t := range s.tasks.tasks {
		if !t.modern && (t.owner == "" || t.owner == c.owner) {
			mine = append(mine, t)
		}
	}
	slices.SortFunc(mine, func(a, b *task) int { return a.created.Compare(b.created) })
	if start > len(mine) {
		return taskReply{err: taskError(jsonrpc.CodeInvalidParams, "tasks/list: invalid cursor")}
	}
	end := min(start+taskListPage, len(mine))
	out := map[string]any{}
	list := []legacyTask{}
	for _, t := range mine[start:end] {
		list = append(list, t.legacyViewLocked())
	}
	out["tasks"] = list
	if end < len(mine) {
		out["nextCursor"] = "offset-" + strconv.Itoa(end)
	}
	return taskReply{result: out}
}

// response turns a reply into the JSON-RPC response to id.
func (r taskReply) response(id jsonrpc.ID) *jsonrpc.Response {
	if r.err != nil {
		return &jsonrpc.Response{ID: id, Error: r.err}
	}
	data, err := json.Marshal(r.result)
	if err != nil {
		return &jsonrpc.Response{ID: id, Error: taskError(jsonrpc.CodeInternalError, "encoding the result: %v", err)}
	}
	return &jsonrpc.Response{ID: id, Result: data}
}

// answered reports whether the reply has a response to send.
func (r taskReply) answered() bool { return r.err != nil || r.result != nil }

// taskToolArgs are the task tools' arguments when they run as an ordinary
// request (the SDK validates them against the schema).
type taskToolArgs struct {
	Seconds float64 `json:"seconds"`
	Steps   int     `json:"steps"`
	PollMs  int     `json:"pollMs"`
	Wait    float64 `json:"wait"`
}

// addTaskTools registers the task tools with the SDK, which lists them and
// runs the calls that are not tasks; the task layer serves the rest.
func (s *Server) addTaskTools() {
	asSteps := func(tool string, work func(context.Context, *mcp.CallToolRequest, slowArgs, string) (*mcp.CallToolResult, any, error)) mcp.ToolHandlerFor[taskToolArgs, any] {
		return func(ctx context.Context, req *mcp.CallToolRequest, a taskToolArgs) (*mcp.CallToolResult, any, error) {
			return work(ctx, req, slowArgs{Seconds: a.Seconds, Steps: a.Steps}, tool)
		}
	}
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: toolTaskJob,
		Description: "Demonstrates a well-behaved task: called as a task it answers at once with a task handle, works through its steps " +
			"(its statusMessage says \"step 3 of 6\") and honours tasks/cancel by moving to cancelled at once; without a task it behaves like slow.",
		InputSchema: taskJobSchema,
	}, asSteps(toolTaskJob, s.steps))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: toolTaskStubborn,
		Description: "Demonstrates a task that ignores cancellation: it acknowledges tasks/cancel, keeps working and ends completed anyway, " +
			"which in 2025-11-25 makes it a misbehaving server (the spec says the task MUST move to cancelled before the response) " +
			"and in the tasks extension is allowed (cancellation is cooperative); without a task it behaves like stubborn.",
		InputSchema: taskStubbornSchema,
	}, asSteps(toolTaskStubborn, s.stubbornAs))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: toolTaskFlip,
		Description: "Demonstrates a misbehaving task: it reaches completed and then says working again (in a later tasks/get, and in 2025-11-25 " +
			"in a notifications/tasks/status before the tasks/result), a status change after a terminal status that a client must flag; without a task it behaves like slow.",
		InputSchema: taskJobSchema,
	}, asSteps(toolTaskFlip, s.steps))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: toolTaskInput,
		Description: "Demonstrates a task that needs input: it runs only as a task (execution.taskSupport required) and after seconds moves to input_required " +
			"with an elicitation asking for a name (in the tasks extension in inputRequests, answered with tasks/update; the 2025-11-25 demo only says so " +
			"in its statusMessage and gives up after wait), then greets you.",
		InputSchema: taskInputSchema,
	}, func(context.Context, *mcp.CallToolRequest, taskToolArgs) (*mcp.CallToolResult, any, error) {
		// The task layer refuses calls that are not tasks before they get
		// here; this only answers if that ever changed.
		res := textResult("task_input runs only as a task")
		res.IsError = true
		return res, nil, nil
	})
}
