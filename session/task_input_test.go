package session

import (
	"encoding/json"
	"slices"
	"testing"

	"inflight/event"
	"inflight/wire"
)

const askName = `"inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}`

// A modern task in input_required asks through its polls' inputRequests;
// AnswerTask keeps the answers and Due begins the tasks/update carrying
// them, once; the key is not asked again however many polls repeat it,
// and a refused update lets it be answered again.
func TestTaskModernInputAnsweredWithUpdate(t *testing.T) {
	h := newTaskHarness(t, event.EraModern)
	r := h.call(0, true)
	h.handle(10, r, "m-1")
	if err := h.tr.AnswerTask(r.ID, map[string]json.RawMessage{"name": json.RawMessage(`{}`)}, ms(20)); err == nil {
		t.Fatal("a task at work, asking nothing, took an answer")
	}
	p := h.due(1010)
	h.answerTask(1020, p[0], "m-1", wire.TaskInputRequired, askName)
	asks := r.TaskAsks()
	if len(asks) != 1 || asks[0].Key != "name" || asks[0].Method != wire.MethodElicitationCreate {
		t.Fatalf("asks = %+v, want the name elicitation", asks)
	}
	if err := h.tr.AnswerTask(r.ID, map[string]json.RawMessage{"other": json.RawMessage(`{}`)}, ms(1030)); err == nil {
		t.Fatal("an answer to a key the task does not ask was taken")
	}
	answer := json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)
	if err := h.tr.AnswerTask(r.ID, map[string]json.RawMessage{"name": answer}, ms(1030)); err != nil {
		t.Fatalf("AnswerTask: %v", err)
	}
	if len(r.TaskAsks()) != 0 {
		t.Fatal("the key answered is still asked")
	}
	if next, ok := h.tr.NextDeadline(); !ok || next.After(ms(1030)) {
		t.Fatalf("NextDeadline = %v, want the update due at once", next.Sub(t0))
	}
	got := h.due(1030)
	if !slices.Equal(methods(got), []string{wire.MethodTasksUpdate}) || got[0].Role != RoleUpdate || got[0].Parent != r.ID {
		t.Fatalf("due after the answer: %v, want one tasks/update of the task", methods(got))
	}
	var params struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(got[0].ChildParams, &params); err != nil || params.TaskID != "m-1" || string(params.InputResponses["name"]) != string(answer) {
		t.Fatalf("tasks/update params %s", got[0].ChildParams)
	}
	if again := h.due(1031); slices.Contains(methods(again), wire.MethodTasksUpdate) {
		t.Fatal("the update was begun twice")
	}
	// The server refuses it: the key may be answered again.
	n, _ := got[0].ID.Int()
	h.recv(1040, rpcError(int(n), -32602, "no such task"))
	if r.Task.UpdateError == nil || len(r.TaskAsks()) != 1 {
		t.Fatalf("after a refused update: error %v, asks %v", r.Task.UpdateError, r.TaskAsks())
	}
	if err := h.tr.AnswerTask(r.ID, map[string]json.RawMessage{"name": answer}, ms(1050)); err != nil {
		t.Fatalf("answering again: %v", err)
	}
	got = h.due(1050)
	n, _ = got[0].ID.Int()
	h.recv(1060, result(int(n), `{"resultType":"complete"}`))
	if !r.Task.UpdateAckAt.Equal(ms(1060)) || r.Task.UpdateError != nil || r.Task.UpdateWords() != "answers acknowledged (tasks/update)" {
		t.Fatalf("after the ack: %+v", r.Task)
	}
	// A poll that still lists the key (eventually consistent) asks nothing.
	p = h.due(2060)
	h.answerTask(2070, p[0], "m-1", wire.TaskInputRequired, askName)
	if len(r.TaskAsks()) != 0 {
		t.Fatal("a key answered was asked again by a later poll")
	}
	p = h.due(3070)
	h.answerTask(3080, p[0], "m-1", wire.TaskCompleted, `"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}`)
	if r.State != StateCompleted {
		t.Fatalf("state %v", r.State)
	}
	if v := violationCodes(h.tr); len(v) != 0 {
		t.Errorf("violations %v", v)
	}
}

// A legacy task in input_required is fetched with tasks/result at once:
// the server asks on that call, tied to the task, and its answer is the
// outcome when the task ends.
func TestTaskLegacyInputFetchesResult(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	p := h.due(1010)
	h.answerTask(1020, p[0], "t-1", wire.TaskInputRequired, "")
	got := h.due(1020)
	if !slices.Equal(methods(got), []string{wire.MethodTasksResult}) {
		t.Fatalf("after input_required: %v, want tasks/result at once", methods(got))
	}
	if len(r.TaskAsks()) != 0 {
		t.Fatal("a legacy task has no inputRequests to answer with tasks/update")
	}
	// The server asks on it, naming the task.
	h.apply(serverReq(1030, 7, wire.MethodElicitationCreate, `{"message":"Your name?","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`, wire.ID{}))
	qs := h.tr.ServerRequests()
	if len(qs) != 1 || qs[0].During != r.ID || qs[0].TiedBy != TiedTask {
		t.Fatalf("the question: %+v, want it tied to the task's request", qs)
	}
	// Polls go on meanwhile, and no second tasks/result while one waits.
	p = h.due(2020)
	h.answerTask(2030, p[0], "t-1", wire.TaskInputRequired, "")
	if got := h.due(2030); slices.Contains(methods(got), wire.MethodTasksResult) {
		t.Fatal("a second tasks/result while the first waits")
	}
	// The terminal status comes while tasks/result is still out; its
	// answer is the outcome, and no second tasks/result follows.
	p = h.due(3030)
	h.answerTask(3040, p[0], "t-1", wire.TaskCompleted, "")
	n, _ := got[0].ID.Int()
	h.recv(3050, result(int(n), `{"content":[{"type":"text","text":"Hello"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-1"}}}`))
	if r.State != StateCompleted {
		t.Fatalf("after tasks/result: %v", r.State)
	}
	for _, at := range []int{3050, 5000, 9000} {
		if got := h.due(at); slices.Contains(methods(got), wire.MethodTasksResult) {
			t.Fatalf("at %dms a second tasks/result: %v", at, methods(got))
		}
	}
}
