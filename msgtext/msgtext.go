// Package msgtext says in a few words what a JSON-RPC message says: the
// MESSAGE column of the TUI's protocol log and the rows of `inflight
// replay` are both worded here, so that the two read alike
// (`progress 3/6 "step 3 of 6"`, `result "stubborn finished 6 steps"`,
// `error -32601 method not found`, `tools/call slow {"seconds":10}`).
//
// Everything it returns is inert (termsafe.Line) and bounded: a server's
// text is clipped before it is quoted, so that a 30 MB result words as a
// line, not as 30 MB.
package msgtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"inflight/termsafe"
	"inflight/wire"
)

// Clip lengths, in bytes, of what a summary quotes from a message.
const (
	textClip   = 100
	paramsClip = 100
	errorClip  = 120
	rawClip    = 120
)

// Raw words the bytes of a message. method is the method of the request a
// response answers ("" when not known): with it a tools/list result says
// "result 5 tools" instead of its JSON. Bytes that are not a JSON-RPC
// message are shown clipped, as text.
func Raw(raw []byte, method string) string {
	m, err := wire.Decode(raw)
	if err != nil {
		return termsafe.Line(Clip(string(raw), rawClip))
	}
	return Of(m, method)
}

// Of words a decoded message; method is as for Raw.
func Of(m wire.Message, method string) string {
	switch m.Kind {
	case wire.KindRequest:
		return Request(m.Method, m.Params)
	case wire.KindNotification:
		return notification(m)
	case wire.KindResult:
		if method == "" {
			method = m.Method
		}
		if s, ok := taskResult(method, m.Result); ok {
			return s
		}
		return "result " + Result(method, m.Result)
	case wire.KindError:
		return Error(m.Error)
	}
	return "(not a JSON-RPC message)"
}

// Request words a request: its method, what it acts on, and the rest of
// its params compact ("tools/call slow {"seconds":10}").
func Request(method string, params json.RawMessage) string {
	s := termsafe.Line(method)
	target := wire.Target(method, params)
	if target != "" {
		s += " " + termsafe.Line(Clip(target, textClip))
	}
	if args := briefParams(params, target != ""); args != "" {
		s += " " + args
	}
	return s
}

// Error words a JSON-RPC error: "error -32601 method not found".
func Error(e *wire.Error) string {
	if e == nil {
		return "error"
	}
	s := "error " + strconv.Itoa(e.Code)
	if e.Message != "" {
		s += " " + termsafe.Line(Clip(e.Message, errorClip))
	}
	return s
}

// Progress words a progress notification's numbers and message:
// `progress 3/6 "step 3 of 6"`.
func Progress(p wire.Progress) string {
	s := "progress " + Numbers(p.Progress, p.Total)
	if p.Message != "" {
		s += " " + Quote(p.Message, textClip/5*4)
	}
	return s
}

// Numbers is a progress value and its total as a person reads them: "3/10",
// "0.5/1", "521367/1000000", "7" without a total. A server's numbers are
// bounded (termsafe.Number): 1e308 prints in a dozen columns, not 309.
func Numbers(v float64, total *float64) string {
	if total == nil {
		return termsafe.Number(v)
	}
	return termsafe.Number(v) + "/" + termsafe.Number(*total)
}

// notification words a notification.
func notification(m wire.Message) string {
	switch m.Method {
	case wire.NotifyProgress:
		p, err := wire.DecodeProgress(m.Params)
		if err != nil {
			return "progress (unreadable)"
		}
		return Progress(p)
	case wire.NotifyCancelled:
		s := m.Method
		c, err := wire.DecodeCancelled(m.Params)
		if err != nil {
			return s + " (malformed)"
		}
		s += " " + termsafe.Line(Clip(c.RequestID.String(), textClip))
		if c.Reason != "" {
			s += " " + Quote(c.Reason, textClip/5*4)
		}
		return s
	case wire.NotifyTaskStatus, wire.NotifyTasks:
		if ts, err := wire.DecodeTask(m.Params); err == nil {
			return "task " + taskID(ts.ID) + " " + taskWords(ts)
		}
	case wire.NotifySubscriptionAck:
		return "subscription acknowledged"
	case wire.NotifyResourceUpdated:
		var u struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &u) == nil && u.URI != "" {
			return "resource updated " + termsafe.Line(Clip(u.URI, textClip))
		}
	case wire.NotifyMessage:
		var l struct {
			Level string          `json:"level"`
			Data  json.RawMessage `json:"data"`
		}
		if json.Unmarshal(m.Params, &l) == nil && l.Level != "" {
			s := "log " + termsafe.Line(Clip(l.Level, 16))
			var text string
			if json.Unmarshal(l.Data, &text) == nil {
				return s + " " + Quote(text, textClip)
			}
			if c := compact(l.Data); c != "" {
				return s + " " + c
			}
			return s
		}
	}
	s := termsafe.Line(m.Method)
	if args := briefParams(m.Params, false); args != "" {
		s += " " + args
	}
	return s
}

// taskResult words a result about a task: a task handle (either era's
// CreateTaskResult, whatever request it answers) as `task handle t-1
// working`, a tasks/get result as `task working "page 3 of 9"` (the
// request names the task), a tasks/cancel result as `task t-1 cancelled
// "…"`, or `acknowledged` when it carries no task (the modern era's empty
// answer). ok is false for any other result.
func taskResult(method string, result json.RawMessage) (string, bool) {
	for _, modern := range []bool{true, false} {
		if ts, ok := wire.TaskHandle(result, modern); ok {
			return "task handle " + taskID(ts.ID) + " " + taskWords(ts), true
		}
	}
	switch method {
	case wire.MethodTasksGet:
		if ts, err := wire.DecodeTask(result); err == nil {
			return "task " + taskWords(ts), true
		}
	case wire.MethodTasksCancel:
		ts, err := wire.DecodeTask(result)
		if err == nil {
			return "task " + taskID(ts.ID) + " " + taskWords(ts), true
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(result, &obj) == nil {
			return "acknowledged", true
		}
	}
	return "", false
}

// taskID is a task's ID as the summaries show it: made inert and clipped
// (servers use 32-digit IDs, and the status after it is what changes).
func taskID(id string) string { return termsafe.Line(Clip(id, 40)) }

// taskWords are a task's status, its message quoted, and the outcome a
// terminal task carries inline (the modern era): `working "page 3 of 9"`,
// `completed · "9 pages fetched"`, `failed · error -32000 quota`.
func taskWords(ts wire.TaskState) string {
	status := ts.Status
	if status == "" {
		status = "(no status)"
	}
	s := termsafe.Line(Clip(status, 32))
	if ts.Message != "" {
		s += " " + Quote(ts.Message, textClip/5*4)
	}
	switch {
	case ts.Error != nil:
		s += " · " + Error(ts.Error)
	case len(ts.Result) > 0 && string(ts.Result) != "null":
		s += " · " + Result(wire.MethodToolsCall, ts.Result)
	}
	return s
}

// Result words what a result carries for the method it answers: a tool
// result's first text (quoted), how many tools, resources, prompts or
// messages came back, or its JSON compact without _meta.
func Result(method string, result json.RawMessage) string {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
		Tools     []json.RawMessage `json:"tools"`
		Resources []json.RawMessage `json:"resources"`
		Templates []json.RawMessage `json:"resourceTemplates"`
		Prompts   []json.RawMessage `json:"prompts"`
		Messages  []json.RawMessage `json:"messages"`
	}
	ok := json.Unmarshal(result, &r) == nil
	switch {
	case ok && len(r.Content) > 0:
		s := ""
		for _, c := range r.Content {
			if c.Type == "text" && c.Text != "" {
				s = Quote(c.Text, textClip)
				break
			}
		}
		if s == "" {
			s = count(len(r.Content), "content item", "content items")
		}
		if r.IsError {
			s = "(tool error) " + s
		}
		return s
	case ok && method == wire.MethodToolsList:
		return count(len(r.Tools), "tool", "tools")
	case ok && method == wire.MethodResourcesList:
		return count(len(r.Resources), "resource", "resources")
	case ok && method == "resources/templates/list":
		return count(len(r.Templates), "resource template", "resource templates")
	case ok && method == wire.MethodPromptsList:
		return count(len(r.Prompts), "prompt", "prompts")
	case ok && method == wire.MethodPromptsGet:
		return count(len(r.Messages), "message", "messages")
	case ok && len(r.Contents) > 0:
		if r.Contents[0].Text != "" {
			return Quote(r.Contents[0].Text, textClip)
		}
		return count(len(r.Contents), "content item", "content items")
	}
	if c := compact(result); c != "" {
		return c
	}
	return "{}"
}

// Quote is text as a summary quotes it: clipped to n bytes, made inert,
// then quoted, so that its hazards show as the placeholders they show as
// everywhere else rather than as Go escapes.
func Quote(text string, n int) string {
	return strconv.Quote(termsafe.Line(Clip(text, n)))
}

// Clip cuts s to at most n bytes (and an ellipsis) on a rune boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// briefParams is params compact without _meta (and without the target's
// member when the summary names it already), clipped; "" when nothing is
// left.
func briefParams(params json.RawMessage, hasTarget bool) string {
	var m map[string]json.RawMessage
	if len(params) == 0 || json.Unmarshal(params, &m) != nil {
		return ""
	}
	delete(m, "_meta")
	if hasTarget {
		delete(m, "name")
		delete(m, "uri")
		delete(m, "taskId") // tasks/get, tasks/cancel: the target is the task
	}
	if len(m) == 0 {
		return ""
	}
	if args, ok := m["arguments"]; ok && len(m) == 1 && hasTarget {
		// A tool's or a prompt's arguments are what the call says.
		return compact(args)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	return termsafe.Line(Clip(string(b), paramsClip))
}

// compact is a JSON value compact without a top-level _meta, clipped.
func compact(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && m != nil {
		delete(m, "_meta")
		if b, err := json.Marshal(m); err == nil {
			raw = b
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return ""
	}
	return termsafe.Line(Clip(buf.String(), paramsClip))
}
