package session

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"inflight/wire"
)

// A task that needs the client's input says input_required. The two eras
// ask differently:
//
//   - modern (the tasks extension): tasks/get carries the questions in
//     inputRequests, keyed as a round's are (MRTR), and the client answers
//     them with tasks/update {taskId, inputResponses}; the task goes on
//     working, and polling goes on. A key is unique over the task's life,
//     so a key answered is never asked again, however many polls repeat
//     it.
//   - legacy (2025-11-25): the client calls tasks/result at once, and the
//     server sends its questions as requests of its own on that call,
//     tied to the task by io.modelcontextprotocol/related-task; they are
//     answered as any server request is (serverreq.go ties them,
//     TiedTask).
//
// The tracker does no I/O: AnswerTask keeps the answers, and Due begins
// the tasks/update that carries them, as it begins polls.

// TasksWaiting counts the modern tasks in flight that wait for the
// user's answer (TaskAsks asks something): the header's "waiting for you"
// counts them with the questions.
func (t *Tracker) TasksWaiting() int {
	n := 0
	for _, r := range t.active {
		if r.Task != nil && r.Task.Status == wire.TaskInputRequired && len(r.TaskAsks()) > 0 {
			n++
		}
	}
	return n
}

// TaskAsks is what a modern task waiting for input asks of the user now:
// its inputRequests not answered yet, ordered by key; nil when it asks
// nothing (or its request is not a modern task in input_required).
func (r *Request) TaskAsks() []InputRequest {
	tk := r.Task
	if tk == nil || !tk.modern || tk.Status != wire.TaskInputRequired || !r.State.IsActive() || r.ByHost {
		return nil
	}
	var raw map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal([]byte(tk.InputRequests), &raw) != nil {
		return nil
	}
	var out []InputRequest
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if tk.Answered[k] || tk.updateDue[k] != nil {
			continue
		}
		q := raw[k]
		p := q.Params
		if len(p) > maxAskedBytes {
			p = nil
		}
		out = append(out, InputRequest{Key: clip(k, 256), Method: clip(q.Method, 64), Params: p})
	}
	return out
}

// AnswerTask gives a modern task's input requests their answers, by key;
// Due begins the tasks/update that sends them. It refuses a request that
// is not a modern task waiting for input, and answers to keys it does not
// ask (or asked and had answered).
func (t *Tracker) AnswerTask(id wire.ID, answers map[string]json.RawMessage, now time.Time) error {
	r := t.lookup(id)
	if r == nil {
		if t.wasEvicted(id) {
			return &Refused{Why: RefusedEvicted, ID: id}
		}
		return &Refused{Why: RefusedUnknown, ID: id}
	}
	asks := r.TaskAsks()
	if len(asks) == 0 {
		return &Refused{Why: RefusedNotWaiting, ID: id, State: r.State}
	}
	for k := range answers {
		if !slices.ContainsFunc(asks, func(q InputRequest) bool { return q.Key == k }) {
			return &Refused{Why: RefusedNotWaiting, ID: id, State: r.State}
		}
	}
	tk := r.Task
	if tk.updateDue == nil {
		tk.updateDue = map[string]json.RawMessage{}
	}
	for k, v := range answers {
		tk.updateDue[k] = v
	}
	t.due(now)
	return nil
}

// beginUpdate begins the tasks/update carrying the answers given.
func (t *Tracker) beginUpdate(r *Request, now time.Time) *Request {
	tk := r.Task
	c := t.beginChild(r, wire.MethodTasksUpdate, RoleUpdate, now)
	if tk.Answered == nil {
		tk.Answered = map[string]bool{}
	}
	tk.updateKeys = tk.updateKeys[:0]
	for k := range tk.updateDue {
		tk.Answered[k] = true
		tk.updateKeys = append(tk.updateKeys, k)
	}
	tk.updateDue, tk.updating, tk.UpdateError = nil, c.ID, nil
	return c
}

// updateParams are a tasks/update's params.
func updateParams(taskID string, answers map[string]json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"taskId": taskID, "inputResponses": answers})
	return b
}

// updateAnswered applies the server's answer to a tasks/update: an
// acknowledgement, or an error, after which the answers it carried may be
// given again.
func (t *Tracker) updateAnswered(tk *Task, c *Request, msg *wire.Message, at time.Time) {
	if tk.updating != c.ID {
		return
	}
	tk.updating = wire.ID{}
	if msg.Kind == wire.KindError {
		tk.UpdateError = clipError(msg.Error)
		tk.unanswer()
		return
	}
	tk.UpdateAckAt = at
}

// unanswer forgets the keys of the last tasks/update as answered: the
// server refused it, or never answered it.
func (tk *Task) unanswer() {
	for _, k := range tk.updateKeys {
		delete(tk.Answered, k)
	}
	tk.updateKeys = nil
}

// fetchForInput calls tasks/result at once for a legacy task that says
// input_required: the server sends its questions on that call (the
// 2025-11-25 utility), and answers it with the outcome when the task ends.
func (t *Tracker) fetchForInput(r *Request, at time.Time) {
	tk := r.Task
	if tk.modern || tk.Status != wire.TaskInputRequired || !r.State.IsActive() || t.observing || r.ByHost {
		return
	}
	if tk.resultDue || !tk.fetching.IsZero() {
		return
	}
	tk.resultDue, tk.resultAt = true, at
	t.due(at)
}

// UpdateWords says where a modern task's answers stand, in words, for its
// detail ("" when none was given).
func (tk *Task) UpdateWords() string {
	switch {
	case tk.UpdateError != nil:
		return "tasks/update refused: error " + strconv.Itoa(tk.UpdateError.Code) + " " + tk.UpdateError.Message
	case !tk.updating.IsZero():
		return "answers sent (tasks/update), not acknowledged yet"
	case !tk.UpdateAckAt.IsZero():
		return "answers acknowledged (tasks/update)"
	}
	return ""
}
