package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
)

// Task statuses, the same in both eras.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// IsTerminalTaskStatus reports whether a task in status s can never change
// again (completed, failed, cancelled).
func IsTerminalTaskStatus(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskState is a task as the server described it, in either era's shape:
// a CreateTaskResult, a tasks/get result, a task status notification, or a
// legacy tasks/cancel result.
type TaskState struct {
	ID      string
	Status  string
	Message string
	// TTL is the time to live from creation in milliseconds; TTLSet says
	// the field was present, TTLNull that it was null (unlimited).
	// TTLOutOfRange: the server's value was more than MaxTaskMs (or no
	// number a float holds, 1e400), and TTL is MaxTaskMs.
	TTL                            float64
	TTLSet, TTLNull, TTLOutOfRange bool
	// PollInterval is the suggested polling interval in milliseconds (0:
	// none given), at most MaxTaskMs.
	PollInterval float64
	CreatedAt    string
	UpdatedAt    string
	// Result and Error are the inlined outcome of a terminal modern task;
	// InputRequests the outstanding requests of an input_required one.
	Result        json.RawMessage
	Error         *Error
	InputRequests json.RawMessage
}

// taskJSON is both eras' field names: legacy ttl and pollInterval, modern
// ttlMs and pollIntervalMs.
type taskJSON struct {
	TaskID          *string         `json:"taskId"`
	Status          string          `json:"status"`
	StatusMessage   string          `json:"statusMessage"`
	CreatedAt       string          `json:"createdAt"`
	LastUpdatedAt   string          `json:"lastUpdatedAt"`
	TTL             json.RawMessage `json:"ttl"`
	TTLMs           json.RawMessage `json:"ttlMs"`
	PollInterval    *float64        `json:"pollInterval"`
	PollIntervalMs  *float64        `json:"pollIntervalMs"`
	Result          json.RawMessage `json:"result"`
	Error           *Error          `json:"error"`
	InputRequests   json.RawMessage `json:"inputRequests"`
	Task            json.RawMessage `json:"task"`
	ResultTypeField *string         `json:"resultType"`
}

// MaxTaskMs is the largest TTL or poll interval kept, in milliseconds: the
// longest time.Duration (about 292 years). A larger value, which a server
// may send (1e300), would turn negative once converted.
const MaxTaskMs = float64(math.MaxInt64 / int64(time.Millisecond))

// ErrNotATask: the object does not describe a task (no string taskId).
var ErrNotATask = errors.New("not a task: no taskId")

// DecodeTask reads a task object (the members of a Task at the top level,
// as in a tasks/get result, a notification's params or a modern
// CreateTaskResult).
func DecodeTask(obj json.RawMessage) (TaskState, error) {
	var j taskJSON
	if err := json.Unmarshal(obj, &j); err != nil {
		return TaskState{}, err
	}
	return j.state()
}

func (j *taskJSON) state() (TaskState, error) {
	if j.TaskID == nil {
		return TaskState{}, ErrNotATask
	}
	ts := TaskState{ID: *j.TaskID, Status: j.Status, Message: j.StatusMessage, CreatedAt: j.CreatedAt, UpdatedAt: j.LastUpdatedAt,
		Result: j.Result, Error: j.Error, InputRequests: j.InputRequests}
	ttl := j.TTLMs
	if ttl == nil {
		ttl = j.TTL
	}
	if ttl != nil {
		ts.TTLSet = true
		if string(bytes.TrimSpace(ttl)) == "null" {
			ts.TTLNull = true
		} else if v, err := strconv.ParseFloat(string(bytes.TrimSpace(ttl)), 64); err == nil || errors.Is(err, strconv.ErrRange) {
			// ErrRange: a number past a float's range, read as ±Inf (or a
			// tiny one read as 0).
			ts.TTL = v
			if v > MaxTaskMs || math.IsNaN(v) {
				ts.TTL, ts.TTLOutOfRange = MaxTaskMs, true
			}
		}
	}
	switch {
	case j.PollIntervalMs != nil:
		ts.PollInterval = *j.PollIntervalMs
	case j.PollInterval != nil:
		ts.PollInterval = *j.PollInterval
	}
	ts.PollInterval = min(ts.PollInterval, MaxTaskMs)
	return ts, nil
}

// TaskHandle reports whether a result is a CreateTaskResult and returns
// its task: legacy results carry it in a "task" member, modern ones at the
// top level with resultType "task".
func TaskHandle(result json.RawMessage, modern bool) (TaskState, bool) {
	if !bytes.Contains(result, []byte(`"task`)) {
		return TaskState{}, false
	}
	var j taskJSON
	if json.Unmarshal(result, &j) != nil {
		return TaskState{}, false
	}
	if modern {
		if j.ResultTypeField == nil || *j.ResultTypeField != ResultTask {
			return TaskState{}, false
		}
		ts, err := j.state()
		return ts, err == nil
	}
	if len(j.Task) == 0 {
		return TaskState{}, false
	}
	ts, err := DecodeTask(j.Task)
	return ts, err == nil
}

// RelatedTask returns the io.modelcontextprotocol/related-task taskId of a
// message's params or result, if it names one.
func RelatedTask(obj json.RawMessage) (string, bool) {
	v, ok := MetaValue(obj, MetaRelatedTask)
	if !ok {
		return "", false
	}
	var rt struct {
		TaskID *string `json:"taskId"`
	}
	if json.Unmarshal(v, &rt) != nil || rt.TaskID == nil {
		return "", false
	}
	return *rt.TaskID, true
}

// TaskParams is the params of tasks/get, tasks/result and tasks/cancel.
func TaskParams(taskID string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"taskId": taskID})
	return b
}
