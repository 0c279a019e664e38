package check

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"inflight/runner"
	"inflight/session"
	"inflight/wire"
)

// The battery's tool: the one --tool names, else the demo's slow, else —
// when the server lists no slow — the tool whose description promises the
// longest run with progress. A tool that runs only as a task serves the
// tasks group, never the cancellation checks (those need an ordinary call).

// tools is the server's tools/list, read once (nil when it could not be).
func (b *battery) tools() []runner.Tool {
	if b.toolsRead {
		return b.toolList
	}
	b.toolsRead = true
	tools, err := b.cn.ListTools(b.ctx, defaultProbeTimeout)
	if err != nil && b.ctx.Err() != nil {
		b.interrupted = true
	}
	if err != nil && len(tools) == 0 {
		b.toolListErr = err.Error()
		return nil
	}
	if tools == nil {
		tools = []runner.Tool{} // read, and empty
	}
	b.toolList = tools
	return tools
}

// checkToolListed makes sure the server has the tool before the battery
// leans on it, and picks one when the default is absent. A server whose
// tools/list fails is given the benefit of the doubt: the full run will say
// what is wrong.
func (b *battery) checkToolListed() {
	b.step("looking for %s in tools/list", b.o.Tool)
	tools := b.tools()
	if tools == nil {
		return
	}
	for _, t := range tools {
		if t.Name == b.o.Tool {
			if t.RequiresTask() {
				b.asTaskOnly(t)
			}
			return
		}
	}
	if b.o.toolDefaulted {
		if t, why, ok := pickSlowTool(tools); ok {
			b.useTool(t, why)
			return
		}
	}
	list := "it lists none"
	if len(tools) > 0 {
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		if len(names) > 20 {
			names = append(names[:20], fmt.Sprintf("and %d more", len(names)-20))
		}
		list = "its tools: " + strings.Join(names, ", ")
	}
	none := fmt.Sprintf("tools/list lists no tool %q", b.o.Tool)
	if b.o.toolDefaulted {
		none += " and none whose description speaks of progress or a long run"
	}
	b.unusable = fmt.Sprintf("%s (%s); name one that runs for a while and reports progress with --tool", none, list)
}

// useTool makes t the battery's tool, with arguments made from its input
// schema when it requires some, and says which and why.
func (b *battery) useTool(t runner.Tool, why string) {
	b.o.Tool = t.Name
	args := json.RawMessage("{}")
	if a, made := argsFromSchema(t.InputSchema); made {
		args = a
		why += fmt.Sprintf("; called with %s, made from its input schema (--args to choose)", a)
	}
	b.o.Args = args
	b.params, _ = runner.ToolCallParams(t.Name, args)
	b.toolChoice = why
	b.line("  %s", why)
}

// asTaskOnly is the battery's answer to a tool that runs only as a task:
// the cancellation checks need an ordinary call, so they are skipped, and
// the tasks group runs the tool as a task (unless --task-tool names
// another).
func (b *battery) asTaskOnly(t runner.Tool) {
	b.taskOnly = fmt.Sprintf("%s runs only as a task (its execution.taskSupport is \"required\"): the cancellation checks need an ordinary call; the tasks group runs it as a task", t.Name)
	if b.o.TaskTool == "" {
		b.o.TaskTool = t.Name
		if len(b.o.TaskArgs) == 0 {
			b.o.TaskArgs = b.o.Args
		}
	}
	b.line("  %s", b.taskOnly)
}

// slowWords are what a tool's description says when it runs for a while
// and reports progress, with their weight.
var slowWords = []struct {
	word   string
	weight int
}{
	{"long running", 3}, {"long-running", 3}, {"longrunning", 3}, {"slow", 2}, {"progress", 2},
	{"delay", 1}, {"sleep", 1}, {"wait", 1}, {"duration", 1}, {"seconds", 1},
}

// pickSlowTool is the tool that serves the battery best when none is
// named: the one whose description says most of a long run with progress
// (slowWords), among those that can be called without a task; ties go to
// one that needs no arguments, then to the first name. why says which and
// why, in words.
func pickSlowTool(tools []runner.Tool) (runner.Tool, string, bool) {
	best, bestScore, bestWords := runner.Tool{}, 0, []string(nil)
	for _, t := range tools {
		if t.RequiresTask() {
			continue
		}
		desc := strings.ToLower(t.Description)
		score, words := 0, []string(nil)
		for _, w := range slowWords {
			if strings.Contains(desc, w.word) {
				score += w.weight
				words = append(words, strconv.Quote(w.word))
			}
		}
		better := score > bestScore ||
			(score == bestScore && score > 0 && len(t.RequiredArgs()) < len(best.RequiredArgs())) ||
			(score == bestScore && score > 0 && len(t.RequiredArgs()) == len(best.RequiredArgs()) && t.Name < best.Name)
		if better {
			best, bestScore, bestWords = t, score, words
		}
	}
	if bestScore == 0 {
		return runner.Tool{}, "", false
	}
	why := fmt.Sprintf("the server lists no %s; the battery uses %s, whose description speaks most of a long run with progress (%s)",
		DefaultCheckTool, best.Name, strings.Join(bestWords, ", "))
	return best, why, true
}

// argsFromSchema makes the smallest arguments an input schema accepts:
// each required property its default, its first enum value, or a plain
// value of its type. made is false when nothing is required (no arguments
// are needed) or a required property has no type to go by.
func argsFromSchema(schema json.RawMessage) (args json.RawMessage, made bool) {
	var s struct {
		Properties map[string]struct {
			Type    any               `json:"type"`
			Default json.RawMessage   `json:"default"`
			Enum    []json.RawMessage `json:"enum"`
			Minimum *float64          `json:"minimum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for _, name := range s.Required {
		p, ok := s.Properties[name]
		switch {
		case !ok:
			return nil, false
		case len(p.Default) > 0:
			out[name] = p.Default
			continue
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
			continue
		}
		typ, _ := p.Type.(string)
		if list, ok := p.Type.([]any); ok && len(list) > 0 {
			typ, _ = list[0].(string)
		}
		switch typ {
		case "string":
			out[name] = json.RawMessage(`"inflight check"`)
		case "number", "integer":
			v := 1.0
			if p.Minimum != nil {
				v = *p.Minimum
			}
			out[name], _ = json.Marshal(v)
		case "boolean":
			out[name] = json.RawMessage("false")
		case "array":
			out[name] = json.RawMessage("[]")
		case "object":
			out[name] = json.RawMessage("{}")
		default:
			return nil, false
		}
	}
	raw, _ := json.Marshal(out)
	return raw, true
}

// whyNoTask says in words why a call meant to become a task did not: the
// server's refusal (by its code), a tool error, a timeout; the server's
// own words follow, cut short.
func whyNoTask(r *session.Request) string {
	var words string
	switch {
	case r.Error != nil && r.Error.Code == wire.CodeInvalidParams:
		words = fmt.Sprintf("the server refused the call as invalid params (%d): most often arguments the tool's schema requires are missing", r.Error.Code)
	case r.Error != nil && r.Error.Code == wire.CodeMethodNotFound:
		words = fmt.Sprintf("the server refused the call as unknown (%d): the tool may not exist, or may not run as a task", r.Error.Code)
	case r.Error != nil:
		words = fmt.Sprintf("the server answered with JSON-RPC error %d", r.Error.Code)
	case r.ToolError:
		words = "the tool answered at once with an error result instead of a task"
	case r.State == session.StateCompleted:
		words = "the server answered with an ordinary result instead of a task"
	default:
		return "it ended " + describeState(r)
	}
	if r.Error != nil && r.Error.Message != "" {
		words += fmt.Sprintf("; it said %q", oneLine(r.Error.Message, 160))
	}
	return words
}
