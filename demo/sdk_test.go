package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests in this file use go-sdk's own client, as a typical MCP client
// would, over both transports in both eras. The go-sdk client is forced into
// the legacy era with ClientSessionOptions.ProtocolVersion: a version before
// 2026-07-28 makes Connect skip server/discover and perform initialize.

// sdkClient records what the server sends besides responses.
type sdkClient struct {
	mu       sync.Mutex
	progress map[any][]*mcp.ProgressNotificationParams
	updates  chan string // URIs of notifications/resources/updated
}

func (c *sdkClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.progress[req.Params.ProgressToken] = append(c.progress[req.Params.ProgressToken], req.Params)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case c.updates <- req.Params.URI:
			default: // the test has seen enough ticks
			}
		},
	}
}

func (c *sdkClient) progressFor(token string) []*mcp.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.progress[token]
}

// connectSDK connects go-sdk's client to a fresh demo server over the given
// transport ("stdio" or "http"), in the given era.
func connectSDK(t *testing.T, transport string, e era) (*mcp.ClientSession, *sdkClient) {
	t.Helper()
	s, _ := newTestServer(t)
	rec := &sdkClient{progress: map[any][]*mcp.ProgressNotificationParams{}, updates: make(chan string, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, rec.options())

	var ct mcp.Transport
	switch transport {
	case "stdio":
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan error, 1)
		go func() { served <- s.ServeStdio(context.Background(), inR, outW) }()
		t.Cleanup(func() {
			if err := <-served; err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		})
		ct = &mcp.IOTransport{Reader: outR, Writer: inW}
	case "http":
		mux := http.NewServeMux()
		mux.Handle("/mcp", s.HTTPHandler())
		srv := httptest.NewServer(mux)
		tr := &http.Transport{}
		t.Cleanup(func() {
			_ = s.Close()
			srv.CloseClientConnections()
			srv.Close()
			tr.CloseIdleConnections()
		})
		ct = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: tr}}
	default:
		t.Fatalf("unknown transport %q", transport)
	}

	var opts *mcp.ClientSessionOptions
	want := modernVersion
	if e == legacy {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}
		want = legacyVersion
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	defer cancel()
	cs, err := client.Connect(ctx, ct, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated %s, want %s", got, want)
	}
	return cs, rec
}

func TestSDKClient(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		for _, e := range eras {
			t.Run(transport+"/"+string(e), func(t *testing.T) {
				cs, rec := connectSDK(t, transport, e)
				exerciseTools(t, cs, rec)
				exerciseContent(t, cs, rec)
			})
		}
	}
}

func callText(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: empty result", params.Name)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", params.Name, res.Content[0])
	}
	if res.IsError {
		return "error: " + text.Text
	}
	return text.Text
}

func exerciseTools(t *testing.T, cs *mcp.ClientSession, rec *sdkClient) {
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	defer cancel()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		// Each description is one sentence that says what the tool shows.
		d := tool.Description
		if !strings.HasPrefix(d, "Demonstrates ") || !strings.HasSuffix(d, ".") || strings.Count(d, ". ") > 0 {
			t.Errorf("%s: description %q is not one sentence saying what it demonstrates", tool.Name, d)
		}
	}
	if got, want := strings.Join(names, ","), "chatty,confirm,end_subscriptions,fail,flood,never_done,roots,sample,silent,slow,stubborn,task_flip,task_input,task_job,task_stubborn,two_rounds,withdrawn"; got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}

	text := callText(t, cs, &mcp.CallToolParams{Name: toolSlow, Arguments: args("seconds", 0.05, "steps", 5), Meta: mcp.Meta{"progressToken": "slow"}})
	if !strings.HasPrefix(text, "slow finished 5 steps in ") {
		t.Errorf("slow = %q", text)
	}
	checkSteps(t, rec, "slow", 5, "step %d of 5")

	text = callText(t, cs, &mcp.CallToolParams{Name: toolStubborn, Arguments: args("seconds", 0.05, "steps", 5), Meta: mcp.Meta{"progressToken": "stubborn"}})
	if !strings.HasPrefix(text, "stubborn finished 5 steps in ") {
		t.Errorf("stubborn = %q", text)
	}
	checkSteps(t, rec, "stubborn", 5, "step %d of 5")

	text = callText(t, cs, &mcp.CallToolParams{Name: toolSilent, Arguments: args("seconds", 0.02), Meta: mcp.Meta{"progressToken": "silent"}})
	if !strings.HasPrefix(text, "silent answered after ") || len(rec.progressFor("silent")) != 0 {
		t.Errorf("silent = %q with %d progress notifications", text, len(rec.progressFor("silent")))
	}

	text = callText(t, cs, &mcp.CallToolParams{Name: toolFlood, Arguments: args("count", 50), Meta: mcp.Meta{"progressToken": "flood"}})
	if !strings.HasPrefix(text, "flood sent 50 progress notifications") {
		t.Errorf("flood = %q", text)
	}
	checkSteps(t, rec, "flood", 50, "notification %d of 50")
	if text := callText(t, cs, &mcp.CallToolParams{Name: toolFlood}); !strings.Contains(text, "no progressToken") {
		t.Errorf("flood without token = %q", text)
	}

	if text := callText(t, cs, &mcp.CallToolParams{Name: toolFail}); text != "error: the demo tool failed on purpose" {
		t.Errorf("fail = %q", text)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: toolFail, Arguments: args("message", "boom", "rpc", true)})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != failCode || werr.Message != "boom" {
		t.Errorf("fail rpc = %v, want JSON-RPC error %d boom", err, failCode)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolEndSubscriptions})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["ended"] != 0.0 {
		t.Errorf("end_subscriptions structured content = %#v", res.StructuredContent)
	}
}

// checkSteps checks one run's progress: every notification carries total and
// a message, and progress counts up to total.
func checkSteps(t *testing.T, rec *sdkClient, token string, total int, message string) {
	t.Helper()
	// The go-sdk client may deliver the result before it has handed the last
	// notifications to the handler, so wait for them briefly.
	got := rec.progressFor(token)
	for deadline := time.Now().Add(eventually); len(got) < total && time.Now().Before(deadline); got = rec.progressFor(token) {
		time.Sleep(time.Millisecond)
	}
	if len(got) != total {
		t.Fatalf("%d progress notifications, want %d", len(got), total)
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total != float64(total) || p.Message != fmt.Sprintf(message, i+1) {
			t.Errorf("progress %d = %+v", i+1, p)
		}
	}
}

func exerciseContent(t *testing.T, cs *mcp.ClientSession, rec *sdkClient) {
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	defer cancel()

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: clockURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || !strings.HasPrefix(res.Contents[0].Text, "tick ") || res.Contents[0].MIMEType != "text/plain" {
		t.Errorf("clock = %+v", res.Contents)
	}

	prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: promptExplain, Arguments: map[string]string{"transport": "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	if text, ok := prompt.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(text.Text, "notifications/cancelled") {
		t.Errorf("prompt = %+v", prompt.Messages[0].Content)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: promptExplain, Arguments: map[string]string{"transport": "carrier-pigeon"}}); err == nil {
		t.Error("prompt for an unknown transport succeeded")
	}

	// Legacy: resources/subscribe; modern: a subscriptions/listen opened by
	// the client in the background.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: clockURI}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-rec.updates:
		if uri != clockURI {
			t.Errorf("update for %q", uri)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated for the clock")
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: clockURI}); err != nil {
		t.Fatal(err)
	}
}
