package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names are a contract with inflight's UI and compliance checks.
const (
	toolSlow             = "slow"
	toolStubborn         = "stubborn"
	toolSilent           = "silent"
	toolFlood            = "flood"
	toolFail             = "fail"
	toolEndSubscriptions = "end_subscriptions"
)

// Input schemas are written out rather than inferred, so that defaults and
// bounds appear in tools/list and the SDK fills in the defaults before the
// arguments reach a handler.
var (
	slowSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"seconds": {"type": "number", "minimum": 0, "maximum": 86400, "default": 10, "description": "How long the whole run takes."},
			"steps": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 10, "description": "How many steps (and progress notifications) the run is split into."}
		},
		"additionalProperties": false
	}`)
	silentSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"seconds": {"type": "number", "minimum": 0, "maximum": 86400, "default": 120, "description": "How long to wait before answering."}
		},
		"additionalProperties": false
	}`)
	floodSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"count": {"type": "integer", "minimum": 1, "maximum": 1000000, "default": 10000, "description": "How many progress notifications to send."}
		},
		"additionalProperties": false
	}`)
	failSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"message": {"type": "string", "default": "the demo tool failed on purpose", "description": "The error message."},
			"rpc": {"type": "boolean", "default": false, "description": "Fail with a JSON-RPC error instead of a tool error result."}
		},
		"additionalProperties": false
	}`)
	emptySchema = json.RawMessage(`{"type": "object", "additionalProperties": false}`)
)

type slowArgs struct {
	Seconds float64 `json:"seconds"`
	Steps   int     `json:"steps"`
}

type silentArgs struct {
	Seconds float64 `json:"seconds"`
}

type floodArgs struct {
	Count int `json:"count"`
}

type failArgs struct {
	Message string `json:"message"`
	RPC     bool   `json:"rpc"`
}

// endSubscriptionsOut is the structured result of end_subscriptions.
type endSubscriptionsOut struct {
	Ended int `json:"ended"`
}

// failCode is the JSON-RPC error code of fail with rpc:true. It lies in the
// implementation-defined range of the 2026-07-28 error code policy.
const failCode = -32000

func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        toolSlow,
		Description: "Demonstrates a well-behaved long request: it reports progress at every step and, when cancelled, stops at once and sends nothing more, not even a response.",
		InputSchema: slowSchema,
	}, s.slow)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        toolStubborn,
		Description: "Demonstrates a server that ignores cancellation: it keeps reporting progress and answers in full at the end, a late response the client must flag.",
		InputSchema: slowSchema,
	}, s.stubborn)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        toolSilent,
		Description: "Demonstrates a long request with no progress at all, which only a timeout or a cancellation (answered with silence) ends early.",
		InputSchema: silentSchema,
	}, s.silent)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        toolFlood,
		Description: "Demonstrates a progress flood: it sends count progress notifications as fast as it can and then answers, or stops without answering when cancelled.",
		InputSchema: floodSchema,
	}, s.flood)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        toolFail,
		Description: "Demonstrates both ways a tool call fails: a tool error result (isError true), or a JSON-RPC error when rpc is true.",
		InputSchema: failSchema,
	}, s.fail)
	s.addTaskTools()
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        toolEndSubscriptions,
		Description: "Demonstrates a server ending subscriptions itself: every open subscriptions/listen stream gets its final result, and the tool reports how many it ended.",
		InputSchema: emptySchema,
	}, s.endSubscriptions)
}

// run is one tool invocation, kept for its log lines.
type run struct {
	s     *Server
	tool  string
	n     int64
	token string // the progress token, which names the request for its client
	start time.Time
}

// startRun logs the start of a tool call. Its lines name the call by the
// server's own count and, when the client sent one, by its progress token:
// inflight's tokens are its request IDs, so the TUI's stderr view and its
// request list agree.
func (s *Server) startRun(req *mcp.CallToolRequest, tool, format string, args ...any) *run {
	r := &run{s: s, tool: tool, n: s.runs.Add(1), start: time.Now()}
	if req != nil && req.Params != nil {
		if t := req.Params.GetProgressToken(); t != nil {
			if b, err := json.Marshal(t); err == nil {
				r.token = string(b) // as on the wire: 7, or "tok"
			}
		}
	}
	r.logf("started ("+format+")", args...)
	return r
}

func (r *run) logf(format string, args ...any) {
	if r.token != "" {
		r.s.logf("%s #%d (progress token %s): %s", r.tool, r.n, r.token, fmt.Sprintf(format, args...))
		return
	}
	r.s.logf("%s #%d: %s", r.tool, r.n, fmt.Sprintf(format, args...))
}

func (r *run) elapsed() time.Duration { return roundDuration(time.Since(r.start)) }

// stopped logs why the run ended early and returns the error that withholds
// its response (see errWithheld).
func (r *run) stopped(ctx context.Context, err error, at string) error {
	if errors.Is(err, errServerClosing) {
		r.logf("stopped by server shutdown after %s%s", r.elapsed(), at)
	} else {
		r.logf("cancelled after %s%s%s; no response sent", r.elapsed(), at, describeCause(ctx))
	}
	return errWithheld
}

// wait sleeps for d. It returns early with an error when ctx is done or the
// server is closing. The context is checked again after the timer fires,
// because select picks at random when the timer and the cancellation are both
// ready, and nothing may be sent once the cancellation has been seen.
func (s *Server) wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
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

// progress sends one progress notification, only if the request asked for
// progress with a progressToken.
func progress(ctx context.Context, req *mcp.CallToolRequest, done, total int, message string) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return
	}
	// A failed notification means the connection is breaking; the SDK then
	// cancels ctx, which the caller sees before its next step.
	_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      float64(done),
		Total:         float64(total),
		Message:       message,
	})
}

func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func (s *Server) slow(ctx context.Context, req *mcp.CallToolRequest, args slowArgs) (*mcp.CallToolResult, any, error) {
	return s.steps(ctx, req, args, toolSlow)
}

// steps is slow's work, which task_job and task_flip also do when they are
// called without a task.
func (s *Server) steps(ctx context.Context, req *mcp.CallToolRequest, args slowArgs, tool string) (*mcp.CallToolResult, any, error) {
	args.Steps = max(args.Steps, 1) // the schema's minimum, for callers that skip validation
	total := seconds(args.Seconds)
	r := s.startRun(req, tool, "%d steps over %s", args.Steps, total)
	step := total / time.Duration(args.Steps)
	for i := 1; i <= args.Steps; i++ {
		if err := s.wait(ctx, step); err != nil {
			return nil, nil, r.stopped(ctx, err, fmt.Sprintf(" at step %d/%d", i-1, args.Steps))
		}
		progress(ctx, req, i, args.Steps, fmt.Sprintf("step %d of %d", i, args.Steps))
	}
	// A cancellation that arrived during the last notification still wins:
	// the client asked for silence before the answer was ready.
	if err := ctx.Err(); err != nil {
		return nil, nil, r.stopped(ctx, err, fmt.Sprintf(" at step %d/%d", args.Steps, args.Steps))
	}
	r.logf("finished %d steps in %s", args.Steps, r.elapsed())
	return textResult("%s finished %d steps in %s", tool, args.Steps, r.elapsed()), nil, nil
}

// stubborn ignores cancellation on purpose. It still stops when the server
// shuts down or the stdio connection is gone, because then nobody could read
// the late answer it exists to produce.
func (s *Server) stubborn(ctx context.Context, req *mcp.CallToolRequest, args slowArgs) (*mcp.CallToolResult, any, error) {
	return s.stubbornAs(ctx, req, args, toolStubborn)
}

// stubbornAs is stubborn's work, which task_stubborn also does when it is
// called without a task.
func (s *Server) stubbornAs(ctx context.Context, req *mcp.CallToolRequest, args slowArgs, tool string) (*mcp.CallToolResult, any, error) {
	args.Steps = max(args.Steps, 1) // the schema's minimum, for callers that skip validation
	total := seconds(args.Seconds)
	r := s.startRun(req, tool, "%d steps over %s; cancellation will be ignored", args.Steps, total)
	var step atomic.Int64
	// The hook only logs; it is stopped before the handler returns, because
	// the SDK cancels every request's context once its handler has returned.
	stopHook := context.AfterFunc(ctx, func() {
		r.logf("cancellation ignored at step %d/%d%s", step.Load(), args.Steps, describeCause(ctx))
	})
	defer stopHook()

	// Progress goes out on a context without the client's cancellation: the
	// stdio transport refuses to write with a cancelled context.
	detached := context.WithoutCancel(ctx)
	gone := connectionGone(ctx)
	interval := total / time.Duration(args.Steps)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for i := 1; i <= args.Steps; i++ {
		select {
		case <-timer.C:
		case <-s.closing:
			return nil, nil, r.stopped(ctx, errServerClosing, fmt.Sprintf(" at step %d/%d", i-1, args.Steps))
		case <-gone:
			r.logf("connection gone after %s at step %d/%d; nobody is left to answer", r.elapsed(), i-1, args.Steps)
			return nil, nil, errWithheld
		}
		step.Store(int64(i))
		progress(detached, req, i, args.Steps, fmt.Sprintf("step %d of %d", i, args.Steps))
		timer.Reset(interval)
	}
	late := ""
	if ctx.Err() != nil {
		late = " (answering anyway, after the client cancelled)"
	}
	r.logf("finished %d steps in %s%s", args.Steps, r.elapsed(), late)
	return textResult("%s finished %d steps in %s", tool, args.Steps, r.elapsed()), nil, nil
}

func (s *Server) silent(ctx context.Context, req *mcp.CallToolRequest, args silentArgs) (*mcp.CallToolResult, any, error) {
	total := seconds(args.Seconds)
	r := s.startRun(req, toolSilent, "answering after %s, with no progress", total)
	if err := s.wait(ctx, total); err != nil {
		return nil, nil, r.stopped(ctx, err, "")
	}
	r.logf("finished in %s", r.elapsed())
	return textResult("silent answered after %s", r.elapsed()), nil, nil
}

func (s *Server) flood(ctx context.Context, req *mcp.CallToolRequest, args floodArgs) (*mcp.CallToolResult, any, error) {
	r := s.startRun(req, toolFlood, "%d progress notifications", args.Count)
	sent := 0
	if req.Params.GetProgressToken() != nil {
		for i := 1; i <= args.Count; i++ {
			if ctx.Err() != nil || s.isClosing() {
				err := ctx.Err()
				if err == nil {
					err = errServerClosing
				}
				return nil, nil, r.stopped(ctx, err, fmt.Sprintf(" at notification %d/%d", i-1, args.Count))
			}
			progress(ctx, req, i, args.Count, fmt.Sprintf("notification %d of %d", i, args.Count))
			sent = i
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, r.stopped(ctx, err, fmt.Sprintf(" at notification %d/%d", sent, args.Count))
	}
	r.logf("finished: sent %d notifications in %s", sent, r.elapsed())
	if sent == 0 {
		return textResult("flood sent no notifications: the request had no progressToken"), nil, nil
	}
	return textResult("flood sent %d progress notifications in %s", sent, r.elapsed()), nil, nil
}

func (s *Server) fail(_ context.Context, req *mcp.CallToolRequest, args failArgs) (*mcp.CallToolResult, any, error) {
	r := s.startRun(req, toolFail, "rpc=%t", args.RPC)
	if args.RPC {
		r.logf("failed with a JSON-RPC error: %s", args.Message)
		return nil, nil, &jsonrpc.Error{Code: failCode, Message: args.Message}
	}
	r.logf("failed with a tool error result: %s", args.Message)
	// The SDK turns a plain error into a result with isError set.
	return nil, nil, errors.New(args.Message)
}

func (s *Server) endSubscriptions(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, endSubscriptionsOut, error) {
	r := s.startRun(req, toolEndSubscriptions, "%d open", s.listens.count())
	n := s.listens.endAll(errEndedByServer)
	r.logf("ended %d subscription(s)", n)
	return textResult("ended %d subscription(s)", n), endSubscriptionsOut{Ended: n}, nil
}
