// Command gosdk is a stdio MCP server written the way people write them on
// the official go-sdk (github.com/modelcontextprotocol/go-sdk), with nothing
// of inflight in it: the peer that shows how a real SDK server answers a
// cancelled request. Its one tool, slow, reports progress every intervalMs
// for steps steps and honours its context: when the client cancels, the
// handler returns the context's error, which the SDK sends back as the
// tool's result (isError, "context canceled") — an answer that is a reaction
// to the cancel, never one that crossed it.
//
// It speaks both protocol eras over stdio in one session: a client may open
// with initialize (legacy) or send server/discover and modern requests that
// carry their own _meta (2026-07-28). SDKPEER_VERSIONS (comma-separated)
// narrows the versions it accepts and advertises, e.g. "2025-11-25" for a
// legacy-only server.
//
// Every line on stderr is stamped with the UTC date and time to the
// microsecond, and the line for a cancel names the request's progress
// token, so a test can show that the server saw the cancel after it was
// sent and before its answer arrived (sdkpeer.CancelSeenAt reads it).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// slowSchema gives the defaults the scenario uses.
var slowSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"steps": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 6, "description": "How many progress notifications to send."},
		"intervalMs": {"type": "integer", "minimum": 0, "maximum": 3600000, "default": 200, "description": "Milliseconds between two progress notifications."}
	},
	"additionalProperties": false
}`)

type slowArgs struct {
	Steps      int `json:"steps"`
	IntervalMs int `json:"intervalMs"`
}

var logger = log.New(os.Stderr, "gosdk: ", log.LstdFlags|log.Lmicroseconds|log.LUTC)

func main() {
	opts := &mcp.ServerOptions{}
	if v := os.Getenv("SDKPEER_VERSIONS"); v != "" {
		opts.SupportedProtocolVersions = strings.Split(v, ",")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkpeer-gosdk", Version: "1.8.0"}, opts)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "slow",
		Description: "Reports progress every intervalMs for steps steps; when cancelled, returns the context's error.",
		InputSchema: slowSchema,
	}, slow)
	logger.Printf("serving on stdio, pid %d", os.Getpid())
	err := s.Run(context.Background(), &mcp.StdioTransport{})
	logger.Printf("stdio ended: %v", err)
}

func slow(ctx context.Context, req *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	interval := time.Duration(in.IntervalMs) * time.Millisecond
	logger.Printf("slow: start, token %v, %d steps every %s", token, in.Steps, interval)
	for step := 1; step <= in.Steps; step++ {
		if token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(step), Total: float64(in.Steps),
				Message: fmt.Sprintf("step %d of %d", step, in.Steps),
			})
			if err != nil {
				logger.Printf("slow: progress %d: %v", step, err)
			}
		}
		if step == in.Steps {
			break
		}
		select {
		case <-ctx.Done():
			logger.Printf("slow: cancel seen at step %d of %d, token %v: %v", step, in.Steps, token, ctx.Err())
			return nil, nil, ctx.Err()
		case <-time.After(interval):
		}
	}
	logger.Printf("slow: done")
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done after %d steps", in.Steps)}}}, nil, nil
}
