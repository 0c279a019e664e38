package check

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/client"
	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/runner"
	"inflight/target"
)

// noSlowServer is a go-sdk server with no tool called slow: an echo that
// requires its text, a quick one, and countdown, whose description says it
// runs for a while with progress. It is served in-process over pipes.
func noSlowServer(t *testing.T, version string) target.Target {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "no-slow", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the text back."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "now", Description: "Answers at once with the time."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: time.Now().String()}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "countdown", Description: "A long running countdown that reports progress at each of its 6 steps."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for step := 1; step <= 6; step++ {
				if token != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(step), Total: 6})
				}
				select {
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "lift-off"}}}, nil, nil
		})
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return target.Target{ProtocolVersion: version, Pipes: func(ctx context.Context) (*client.Pipes, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Run(context.Background(), &mcp.IOTransport{Reader: inR, Writer: outW})
		}()
		return &client.Pipes{Stdin: inW, Stdout: outR}, nil
	}}
}

// With no tool named and no slow on the server, the battery picks the
// tool whose description speaks of a long run with progress, says which
// and why, and runs on it: no ERROR finding on the first try.
func TestCheckPicksASlowTool(t *testing.T) {
	rep, code := runCheck(t, Options{Target: noSlowServer(t, testserver.Legacy.Version), NoTasks: true})
	if rep.Tool != "countdown" || !strings.Contains(rep.ToolChoice, "lists no slow") || !strings.Contains(rep.ToolChoice, `"long running"`) {
		t.Errorf("tool %q, choice %q; want countdown, saying why", rep.Tool, rep.ToolChoice)
	}
	f := findingsByID(rep)
	if _, ok := f[CheckTool]; ok || code == exitcode.Usage {
		t.Fatalf("exit %d, tool finding %+v", code, f[CheckTool])
	}
	if f[CheckProgressIncreases].Status != StatusPass {
		t.Errorf("%s = %+v, want PASS on countdown", CheckProgressIncreases, f[CheckProgressIncreases])
	}
	// A tool named with --tool is never replaced.
	rep, code = runCheck(t, Options{Target: noSlowServer(t, testserver.Legacy.Version), Tool: "slow", NoTasks: true})
	if g, ok := findingsByID(rep)[CheckTool]; !ok || code != exitcode.Usage || rep.ToolChoice != "" || !strings.Contains(g.Detail, `lists no tool "slow"`) {
		t.Errorf("--tool slow: exit %d, choice %q, finding %+v", code, rep.ToolChoice, g)
	}
}

func TestPickSlowTool(t *testing.T) {
	tools := decodeTools(t, `[
		{"name":"research","description":"A long running research with progress","execution":{"taskSupport":"required"}},
		{"name":"b-wait","description":"Waits a while, reporting progress","inputSchema":{"type":"object","required":["x"],"properties":{"x":{"type":"number"}}}},
		{"name":"a-wait","description":"Waits a while, reporting progress"},
		{"name":"echo","description":"Echoes"}]`)
	got, why, ok := pickSlowTool(tools)
	// research runs only as a task; of the two waits, the one that needs
	// no arguments.
	if !ok || got.Name != "a-wait" || !strings.Contains(why, "a-wait") {
		t.Errorf("picked %q (%s), want a-wait", got.Name, why)
	}
	if _, _, ok := pickSlowTool(tools[3:]); ok {
		t.Error("picked a tool whose description says nothing of a run or progress")
	}
}

func TestArgsFromSchema(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"topic":{"type":"string"},"ambiguous":{"type":"boolean","default":false}},"required":["topic"]}`, `{"topic":"inflight check"}`},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":3},"mode":{"enum":["fast","slow"]},"d":{"type":"number","default":2}},"required":["n","mode","d"]}`, `{"d":2,"mode":"fast","n":3}`},
		{`{"type":"object","properties":{"x":{"type":"number"}}}`, ``},
		{`{"type":"object","required":["ghost"]}`, ``},
	} {
		got, made := argsFromSchema(json.RawMessage(tc.schema))
		if string(got) != tc.want || made != (tc.want != "") {
			t.Errorf("%s: %s (%t), want %s", tc.schema, got, made, tc.want)
		}
	}
}

// A tool that runs only as a task cannot serve the cancellation checks:
// they are skipped, saying so, and the tasks group runs it as a task.
func TestCheckTaskOnlyTool(t *testing.T) {
	rep, _ := runCheck(t, Options{Target: testserver.Stdio(t, testserver.Legacy), Tool: "task_input",
		Args: json.RawMessage(`{"seconds":0.05,"wait":0.1,"pollMs":20}`)})
	reasons := map[string]string{}
	for _, s := range rep.Skipped {
		reasons[s.ID] = s.Reason
	}
	for _, id := range []string{CheckProgressIncreases, CheckCancelStops} {
		if !strings.Contains(reasons[id], `task_input runs only as a task`) {
			t.Errorf("%s: skipped %q, want it skipped as a task-only tool", id, reasons[id])
		}
	}
	f := findingsByID(rep)
	if _, ok := f[CheckTool]; ok {
		t.Errorf("tool finding %+v", f[CheckTool])
	}
	if g, ok := f[CheckTaskTerminal]; !ok || !strings.Contains(g.Detail, "task") {
		t.Errorf("the tasks group did not run task_input: %+v (skipped %+v)", g, rep.Skipped)
	}
}

func decodeTools(t *testing.T, list string) []runner.Tool {
	t.Helper()
	var tools []runner.Tool
	if err := json.Unmarshal([]byte(list), &tools); err != nil {
		t.Fatal(fmt.Errorf("tools: %w", err))
	}
	return tools
}

// A tasks group whose tool did not become a task is skipped with why in
// words — what the server's refusal means — before its own message.
func TestCheckTaskGroupSkippedInWords(t *testing.T) {
	rep, _ := runCheck(t, Options{Target: testserver.Stdio(t, testserver.Legacy), Args: json.RawMessage(`{"seconds":0.2,"steps":2}`),
		TaskTool: "slow", TaskArgs: json.RawMessage(`{"seconds":0.1}`)})
	for _, s := range rep.Skipped {
		if s.ID == CheckTaskTerminal {
			if !strings.Contains(s.Reason, "slow did not become a task: the server refused the call as unknown (-32601): the tool may not exist, or may not run as a task; it said ") {
				t.Errorf("skipped for %q", s.Reason)
			}
			return
		}
	}
	t.Errorf("%s not skipped: %+v", CheckTaskTerminal, rep.Skipped)
}
