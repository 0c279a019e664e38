package hostile

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"inflight/wire"
)

// TaskRateLimitedHTTP is a Streamable HTTP task server (either era) whose
// tool answers with a task handle giving a TaskPollMs interval, and that
// refuses the first tasks/get of its task with HTTP 429 Too Many Requests
// (a plain-text body), though the client kept to that interval; later
// polls say completed. It records the Mcp-Name header of every tasks/get.
type TaskRateLimitedHTTP struct {
	mu      sync.Mutex
	legacy  bool
	gets    int
	mcpName []string
}

// McpNames is the Mcp-Name header of each tasks/get, in order.
func (h *TaskRateLimitedHTTP) McpNames() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.mcpName...)
}

// ServeHTTP implements http.Handler.
func (h *TaskRateLimitedHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	msg, err := wire.Decode(body)
	if err != nil {
		http.Error(w, "not JSON-RPC", http.StatusBadRequest)
		return
	}
	if msg.Kind != wire.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if msg.Method == wire.MethodInitialize {
		h.legacy = true
		w.Header().Set("Mcp-Session-Id", SessionID)
	}
	if reply, ok := setUpReplyOf("task-rate-limited-http", msg, true); ok {
		writeJSON(w, reply)
		return
	}
	tk := PeerTask{ID: "task-1", Status: wire.TaskWorking}
	switch msg.Method {
	case wire.MethodToolsCall:
		writeJSON(w, wire.ResultResponse(msg.ID, json.RawMessage(TaskHandleResult(tk, TaskPollMs, h.legacy))))
	case wire.MethodTasksGet:
		h.gets++
		h.mcpName = append(h.mcpName, r.Header.Get("Mcp-Name"))
		if h.gets == 1 {
			http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
			return
		}
		tk.Status, tk.Polls = wire.TaskCompleted, 1
		writeJSON(w, wire.ResultResponse(msg.ID, json.RawMessage(TaskStateResult(tk, TaskPollMs, h.legacy, true))))
	case wire.MethodTasksResult:
		writeJSON(w, wire.ResultResponse(msg.ID, json.RawMessage(textResult("the work of task-1 is done"))))
	default:
		writeJSON(w, wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound, "hostile peer: method not found"))
	}
}
