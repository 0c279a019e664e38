package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"inflight/session"
	"inflight/wire"
)

// Tool is what tools/list says of one tool that a headless run needs: its
// name and description, whether it runs as a task (execution.taskSupport:
// "required", "optional", or "" for never) and its input schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Execution   struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

// RequiresTask reports whether the tool runs only as a task.
func (t Tool) RequiresTask() bool { return t.Execution.TaskSupport == "required" }

// RequiredArgs are the names the tool's input schema requires.
func (t Tool) RequiredArgs() []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(t.InputSchema, &s)
	return s.Required
}

// DecodeTools reads a tools/list result: its tools and the cursor of the
// next page ("" when it is the last).
func DecodeTools(result json.RawMessage) ([]Tool, string, error) {
	var r struct {
		Tools      []Tool `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, "", fmt.Errorf("tools/list result: %w", err)
	}
	return r.Tools, r.NextCursor, nil
}

// DeclaresTaskTools reports whether a legacy server's initialize
// capabilities declare task-augmented tools/call
// (tasks.requests.tools.call). Without it a client must not ask for a
// task, whatever a tool's execution.taskSupport says (2025-11-25, tasks).
func DeclaresTaskTools(caps []byte) bool {
	var c struct {
		Tasks *struct {
			Requests *struct {
				Tools *struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	_ = json.Unmarshal(caps, &c)
	return c.Tasks != nil && c.Tasks.Requests != nil && c.Tasks.Requests.Tools != nil && c.Tasks.Requests.Tools.Call != nil
}

// maxToolPages bounds the pages read: a server that pages its tools
// without end must not keep a run from starting.
const maxToolPages = 10

// ListTools asks tools/list for every tool, page after page (at most
// maxToolPages), each request a tracked one bounded by timeout.
func (cn *Conn) ListTools(ctx context.Context, timeout time.Duration) ([]Tool, error) {
	var all []Tool
	err := cn.toolPages(ctx, timeout, func(tools []Tool) bool {
		all = append(all, tools...)
		return false
	})
	return all, err
}

// FindTool is ListTools until the tool called name comes: found is false
// when the server listed no such tool; err says why the list could not be
// read.
func (cn *Conn) FindTool(ctx context.Context, name string, timeout time.Duration) (tool Tool, found bool, err error) {
	err = cn.toolPages(ctx, timeout, func(tools []Tool) bool {
		for _, t := range tools {
			if t.Name == name {
				tool, found = t, true
			}
		}
		return found
	})
	return tool, found, err
}

// toolPages hands each page of tools/list to page until it returns true
// or the last page has come.
func (cn *Conn) toolPages(ctx context.Context, timeout time.Duration, page func([]Tool) (stop bool)) error {
	cursor := ""
	for range maxToolPages {
		var params json.RawMessage
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		tools, next, err := cn.listTools(ctx, params, timeout)
		if err != nil {
			return err
		}
		if page(tools) || next == "" {
			return nil
		}
		cursor = next
	}
	return fmt.Errorf("tools/list: more than %d pages, the rest not read", maxToolPages)
}

// listTools sends one tools/list and reads its answer.
func (cn *Conn) listTools(ctx context.Context, params json.RawMessage, timeout time.Duration) ([]Tool, string, error) {
	r, err := cn.Begin(ctx, wire.MethodToolsList, params, session.RequestOptions{Timeout: timeout, MaxTimeout: timeout})
	if err != nil {
		return nil, "", fmt.Errorf("tools/list: %w", err)
	}
	if cn.Wait(ctx, func() bool { return r.State.IsFinal() }, time.Time{}) == WaitInterrupted {
		_ = cn.Cancel(r.ID, InterruptReason(ctx), session.CauseInterrupted)
		return nil, "", fmt.Errorf("tools/list: %w", context.Cause(ctx))
	}
	if r.State != session.StateCompleted {
		why := r.State.String()
		if r.Error != nil {
			why = fmt.Sprintf("JSON-RPC error %d %s", r.Error.Code, r.Error.Message)
		}
		return nil, "", fmt.Errorf("tools/list ended %s", why)
	}
	raw, ok := cn.tr.RawResponse(r.ID)
	if !ok {
		return nil, "", fmt.Errorf("tools/list: its answer was not kept")
	}
	msg, err := wire.Decode(raw)
	if err != nil {
		return nil, "", fmt.Errorf("tools/list: %w", err)
	}
	return DecodeTools(msg.Result)
}
