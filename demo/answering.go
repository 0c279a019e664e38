package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools that ask the user (issue 12). In the modern era each question is
// an InputRequiredResult (inputRequests and an opaque requestState), and
// the client retries with inputResponses; in the legacy era the same tool
// asks with the server's own requests (elicitation/create,
// sampling/createMessage, roots/list) while the call is in flight.
const (
	toolConfirm   = "confirm"
	toolTwoRounds = "two_rounds"
	toolSample    = "sample"
	toolRoots     = "roots"
	toolNeverDone = "never_done"
	toolChatty    = "chatty"
	toolWithdrawn = "withdrawn"
)

var (
	chattySchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"steps": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 5, "description": "How many steps, each logged at debug and info."},
			"seconds": {"type": "number", "minimum": 0, "maximum": 600, "default": 1, "description": "How long the whole run takes."}
		},
		"additionalProperties": false
	}`)
	withdrawnSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"seconds": {"type": "number", "minimum": 0, "maximum": 600, "default": 3, "description": "How long the server waits for an answer before it withdraws its question (legacy)."}
		},
		"additionalProperties": false
	}`)
)

type chattyArgs struct {
	Steps   int     `json:"steps"`
	Seconds float64 `json:"seconds"`
}

type withdrawnArgs struct {
	Seconds float64 `json:"seconds"`
}

func (s *Server) addAnswering() {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: toolConfirm, InputSchema: emptySchema,
		Description: "Demonstrates a question before an action: an elicitation to confirm the deletion of 3 files (modern: one input_required round; legacy: elicitation/create), whose accept, decline and cancel give different results."}, s.confirm)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: toolTwoRounds, InputSchema: emptySchema,
		Description: "Demonstrates two questions in a row, the first answer carried to the second round in requestState (modern: two input_required rounds; legacy: two elicitation/create requests)."}, s.twoRounds)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: toolSample, InputSchema: emptySchema,
		Description: "Demonstrates a sampling request (sampling/createMessage, in an input_required round or, legacy, sent by the server) whose reply the tool returns."}, s.sample)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: toolRoots, InputSchema: emptySchema,
		Description: "Demonstrates a roots/list request (in an input_required round or, legacy, sent by the server) whose roots the tool returns."}, s.roots)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: toolNeverDone, InputSchema: emptySchema,
		Description: "Demonstrates a server that never completes: every answer brings another question (modern: another input_required round, until the client's round cap; legacy: another elicitation/create every 100ms)."}, s.neverDone)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: toolChatty, InputSchema: chattySchema,
		Description: "Demonstrates request-scoped logging: a notifications/message at debug and info for every step, sent only when the request asked (modern: _meta io.modelcontextprotocol/logLevel; legacy: logging/setLevel)."}, s.chatty)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: toolWithdrawn, InputSchema: withdrawnSchema,
		Description: "Demonstrates a server withdrawing its question: in the legacy era it cancels its elicitation/create with notifications/cancelled after seconds unless answered first (modern: a plain input_required round, since the client holds the question)."}, s.withdrawn)
}

// modernSession reports whether the request speaks the modern era, where
// the server asks with input_required (the SDK's own test: no initialize,
// or one at 2026-07-28 or later).
func modernSession(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= modernVersion
}

// asker puts one question of a tool run: in the modern era the answer is
// in the retry's inputResponses or the question goes back as
// input_required; in the legacy era it is asked with a request of the
// server's own.
type asker struct {
	req    *mcp.CallToolRequest
	modern bool
}

func newAsker(req *mcp.CallToolRequest) asker {
	return asker{req: req, modern: modernSession(req.Session)}
}

// state is the requestState the client echoed ("" on the first round).
func (a asker) state() string {
	if a.req.Params == nil {
		return ""
	}
	return a.req.Params.RequestState
}

// answer is the client's response to key on this round, if it gave one.
func (a asker) answer(key string) (mcp.InputResponse, bool) {
	if a.req.Params == nil || a.req.Params.InputResponses == nil {
		return nil, false
	}
	r, ok := a.req.Params.InputResponses[key]
	return r, ok && r != nil
}

// inputRequired is the modern result that asks for key, or, when the
// request's clientCapabilities did not declare what ir needs, a tool error
// saying so: "Servers MUST NOT send an inputRequests that the client has
// not declared support for" (mrtr.mdx).
func (a asker) inputRequired(key string, ir mcp.InputRequest, state string) *mcp.CallToolResult {
	caps := a.req.ClientCapabilities()
	var need string
	switch ir.(type) {
	case *mcp.ElicitParams:
		if caps == nil || caps.Elicitation == nil {
			need = "elicitation"
		}
	case *mcp.CreateMessageParams:
		if caps == nil || caps.Sampling == nil {
			need = "sampling"
		}
	case *mcp.ListRootsParams:
		if caps == nil || caps.RootsV2 == nil {
			need = "roots"
		}
	}
	if need != "" {
		r := text("the client did not declare %s in its clientCapabilities, so this server may not ask it", need)
		r.IsError = true
		return r
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{key: ir}, RequestState: state}
}

// elicit asks ep as key. It returns the answer, or (modern) the result to
// send instead when the client has not answered yet.
func (a asker) elicit(ctx context.Context, key string, ep *mcp.ElicitParams, state string) (*mcp.ElicitResult, *mcp.CallToolResult, error) {
	if !a.modern {
		res, err := a.req.Session.Elicit(ctx, ep)
		return res, nil, err
	}
	if r, ok := a.answer(key); ok {
		if er, ok := r.(*mcp.ElicitResult); ok {
			return er, nil, nil
		}
		return nil, nil, fmt.Errorf("the answer to %q is not an ElicitResult", key)
	}
	return nil, a.inputRequired(key, ep, state), nil
}

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"confirm": map[string]any{"type": "boolean", "title": "Delete them", "default": false},
	},
}

func (s *Server) confirm(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	a := newAsker(req)
	res, ask, err := a.elicit(ctx, "confirm", &mcp.ElicitParams{Mode: "form", Message: "Confirm deletion of 3 files?", RequestedSchema: confirmSchema}, "confirm-1")
	if err != nil || ask != nil {
		return ask, nil, err
	}
	s.logf("confirm: %s", res.Action)
	switch {
	case res.Action == "accept" && res.Content["confirm"] == true:
		return text("deleted 3 files (not really: this is a demo)"), nil, nil
	case res.Action == "accept":
		return text("kept the 3 files: the form said no"), nil, nil
	case res.Action == "decline":
		return text("kept the 3 files: you declined"), nil, nil
	}
	return text("kept the 3 files: you dismissed the question (%s)", res.Action), nil, nil
}

// twoRounds asks a name, then a colour, carrying the name to the second
// round in requestState (base64 of "name=…", opaque to the client).
func (s *Server) twoRounds(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	a := newAsker(req)
	nameQ := &mcp.ElicitParams{Mode: "form", Message: "What is your name?", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "default": "Ada"}}, "required": []string{"name"}}}
	colourQ := func(name string) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "form", Message: "Which colour, " + name + "?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"colour": map[string]any{"type": "string", "enum": []string{"red", "green", "blue"}, "default": "green"}}}}
	}
	var name string
	if st := a.state(); a.modern && strings.HasPrefix(st, "r2:") {
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(st, "r2:"))
		if err != nil {
			return nil, nil, errors.New("requestState failed verification")
		}
		name = strings.TrimPrefix(string(b), "name=")
	} else {
		res, ask, err := a.elicit(ctx, "name", nameQ, "r1")
		if err != nil || ask != nil {
			return ask, nil, err
		}
		if res.Action != "accept" {
			return text("no name given (%s)", res.Action), nil, nil
		}
		name, _ = res.Content["name"].(string)
		if a.modern {
			// Round 2: ask the colour, carrying the name.
			st := "r2:" + base64.StdEncoding.EncodeToString([]byte("name="+name))
			return a.inputRequired("colour", colourQ(name), st), nil, nil
		}
	}
	res, ask, err := a.elicit(ctx, "colour", colourQ(name), a.state())
	if err != nil || ask != nil {
		return ask, nil, err
	}
	if res.Action != "accept" {
		return text("%s gave no colour (%s)", name, res.Action), nil, nil
	}
	return text("%s likes %v", name, res.Content["colour"]), nil, nil
}

func (s *Server) sample(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	a := newAsker(req)
	q := &mcp.CreateMessageParams{
		Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "What is the capital of France?"}}},
		SystemPrompt: "You are a helpful assistant.", MaxTokens: 100,
		ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "claude"}}, IntelligencePriority: 0.8},
	}
	var reply mcp.Content
	if !a.modern {
		res, err := req.Session.CreateMessage(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		reply = res.Content
	} else {
		r, ok := a.answer("capital")
		if !ok {
			return a.inputRequired("capital", q, ""), nil, nil
		}
		switch v := r.(type) {
		case *mcp.CreateMessageResult:
			reply = v.Content
		case *mcp.CreateMessageWithToolsResult:
			if len(v.Content) > 0 {
				reply = v.Content[0]
			}
		}
	}
	if t, ok := reply.(*mcp.TextContent); ok {
		return text("the model says: %s", t.Text), nil, nil
	}
	return text("the model answered without text"), nil, nil
}

func (s *Server) roots(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	a := newAsker(req)
	var roots []*mcp.Root
	if !a.modern {
		res, err := req.Session.ListRoots(ctx, &mcp.ListRootsParams{})
		if err != nil {
			return nil, nil, err
		}
		roots = res.Roots
	} else {
		r, ok := a.answer("roots")
		if !ok {
			return a.inputRequired("roots", &mcp.ListRootsParams{}, ""), nil, nil
		}
		lr, ok := r.(*mcp.ListRootsResult)
		if !ok {
			return nil, nil, errors.New("the answer to roots is not a ListRootsResult")
		}
		roots = lr.Roots
	}
	if len(roots) == 0 {
		return text("the client has no roots"), nil, nil
	}
	var b strings.Builder
	for _, r := range roots {
		fmt.Fprintf(&b, "%s\n", r.URI)
	}
	return text("%d root(s):\n%s", len(roots), b.String()), nil, nil
}

// neverDone asks question after question and never completes.
func (s *Server) neverDone(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	a := newAsker(req)
	q := func(n int) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "form", Message: "Question " + strconv.Itoa(n) + ": one more?", RequestedSchema: map[string]any{"type": "object"}}
	}
	if a.modern {
		n, _ := strconv.Atoi(strings.TrimPrefix(a.state(), "n="))
		return a.inputRequired("again", q(n+1), "n="+strconv.Itoa(n+1)), nil, nil
	}
	for n := 1; ; n++ {
		res, err := req.Session.Elicit(ctx, q(n))
		if err != nil {
			return nil, nil, err
		}
		if res.Action != "accept" {
			return text("stopped at question %d: %s", n, res.Action), nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-s.closing:
			return nil, nil, errServerClosing
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// chatty logs at every step; the SDK sends a line only when the request
// (modern) or the session (legacy) asked for that level.
func (s *Server) chatty(ctx context.Context, req *mcp.CallToolRequest, args chattyArgs) (*mcp.CallToolResult, any, error) {
	step := seconds(args.Seconds) / time.Duration(args.Steps)
	for i := 1; i <= args.Steps; i++ {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Logger: "chatty", Data: fmt.Sprintf("step %d of %d begins", i, args.Steps)})
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-s.closing:
			return nil, nil, errServerClosing
		case <-time.After(step):
		}
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "chatty", Data: map[string]any{"step": i, "of": args.Steps, "done": true}})
	}
	return text("%d steps, each logged", args.Steps), nil, nil
}

// withdrawn asks, and (legacy) withdraws the question after seconds.
func (s *Server) withdrawn(ctx context.Context, req *mcp.CallToolRequest, args withdrawnArgs) (*mcp.CallToolResult, any, error) {
	a := newAsker(req)
	ep := &mcp.ElicitParams{Mode: "form", Message: "Answer within " + strconv.FormatFloat(args.Seconds, 'f', -1, 64) + "s, or the question is withdrawn", RequestedSchema: map[string]any{"type": "object"}}
	if a.modern {
		res, ask, err := a.elicit(ctx, "quick", ep, "")
		if err != nil || ask != nil {
			return ask, nil, err
		}
		return text("answered: %s", res.Action), nil, nil
	}
	qctx, cancel := context.WithTimeout(ctx, seconds(args.Seconds))
	defer cancel()
	res, err := req.Session.Elicit(qctx, ep)
	switch {
	case err != nil && ctx.Err() == nil && qctx.Err() != nil:
		s.logf("withdrawn: no answer within %s; the question was withdrawn", roundDuration(seconds(args.Seconds)))
		return text("no answer within %s: the server withdrew its question", roundDuration(seconds(args.Seconds))), nil, nil
	case err != nil:
		return nil, nil, err
	}
	return text("answered in time: %s", res.Action), nil, nil
}
