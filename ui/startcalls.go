package ui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/runner"
	"inflight/session"
	"inflight/ui/composer"
	"inflight/wire"
)

// A legacy server that declares task-augmented tools refuses (-32601) a
// call of a tool that requires a task when it comes without one. As the
// composer and `inflight call` do, a --call of such a tool asks for the
// task by itself, which only tools/list can tell: the --call requests
// wait for it (waitsForTools), and go when it has ended (toolsListed). A
// modern server decides by itself.

// waitsForTools reports whether the --call requests wait for tools/list
// as a connection starts: a legacy server that declares task-augmented
// tools, and a tools/call among them.
func waitsForTools(t *session.Tracker, calls []Call) bool {
	if !declaresTaskTools(t) {
		return false
	}
	for _, c := range calls {
		if c.Method == wire.MethodToolsCall {
			return true
		}
	}
	return false
}

func declaresTaskTools(t *session.Tracker) bool {
	info, ok := t.Conn()
	return ok && info.Era == event.EraLegacy && runner.DeclaresTaskTools(info.Capabilities)
}

// toolsListed reports whether the connection's tools/list has ended
// (answered, failed or cancelled): the --call requests that waited go
// then, as asked when the tools could not be listed.
func toolsListed(t *session.Tracker) bool {
	for i := t.Len() - 1; i >= 0; i-- {
		if r := t.At(i); r.Method == wire.MethodToolsList {
			return r.State.IsFinal()
		}
	}
	return false
}

// tasksRequired is the names of the tools that must be called as tasks
// on this connection (none but on a legacy server that declares
// task-augmented tools).
func tasksRequired(t *session.Tracker, tools []composer.Tool) map[string]bool {
	if !declaresTaskTools(t) {
		return nil
	}
	out := map[string]bool{}
	for _, tool := range tools {
		if tool.TaskSupport == "required" {
			out[tool.Name] = true
		}
	}
	return out
}

// sendCalls sends the --call requests (and empties *calls), each at the
// composer's log level, through send (the root's); a tools/call of a tool
// that requires a task asks for one (the legacy tasks utility's
// "task": {}).
func sendCalls(t *session.Tracker, conn *connection, c composer.Model, calls *[]Call,
	send func(string, json.RawMessage, session.RequestOptions) tea.Cmd) tea.Cmd {
	asTask := tasksRequired(t, c.Tools())
	var cmds []tea.Cmd
	for _, call := range *calls {
		params := call.Params
		if call.Method == wire.MethodToolsCall && asTask[toolName(params)] {
			if p, err := runner.WithTask(params, 0); err == nil {
				params = p
			}
		}
		params, _ = conn.withLogLevel(t, call.Method, params, c.LogLevel())
		cmds = append(cmds, send(call.Method, params, session.RequestOptions{}))
	}
	*calls = nil
	return tea.Batch(cmds...)
}

// toolName is the name a tools/call's params call ("" when none).
func toolName(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Name
}
