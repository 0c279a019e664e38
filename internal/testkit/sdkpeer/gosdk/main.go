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
// With -http it serves Streamable HTTP instead, at /mcp on a free loopback
// port (-addr to choose one), with mcp.NewStreamableHTTPHandler's defaults:
// stateful sessions, SSE responses, and no event store, so its events carry
// no IDs and a dropped stream cannot be resumed. -events adds the SDK's
// mcp.NewMemoryEventStore (StreamableHTTPOptions.EventStore), which gives
// every event an ID and replays a stream resumed with Last-Event-ID. Once
// it listens it logs "serving Streamable HTTP on <url>" on stderr.
//
// Every line on stderr is stamped with the UTC date and time to the
// microsecond, and the line for a cancel names the request's progress
// token, so a test can show that the server saw the cancel after it was
// sent and before its answer arrived (sdkpeer.CancelSeenAt reads it).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
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
	httpMode := flag.Bool("http", false, "serve Streamable HTTP at /mcp instead of stdio")
	addr := flag.String("addr", "127.0.0.1:0", "the address -http listens on")
	events := flag.Bool("events", false, "with -http, keep every stream's events in the SDK's memory event store, so that a stream can be resumed")
	flag.Parse()
	s := newServer()
	if *httpMode {
		logger.Printf("http ended: %v", serveHTTP(s, *addr, *events))
		os.Exit(1)
	}
	logger.Printf("serving on stdio, pid %d", os.Getpid())
	err := s.Run(context.Background(), &mcp.StdioTransport{})
	logger.Printf("stdio ended: %v", err)
}

// newServer is the server with its one tool, whatever the transport.
func newServer() *mcp.Server {
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
	return s
}

// serveHTTP serves s over Streamable HTTP at /mcp on addr until it fails.
func serveHTTP(s *mcp.Server, addr string, events bool) error {
	opts := &mcp.StreamableHTTPOptions{}
	if events {
		opts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Printf("serving Streamable HTTP on http://%s/mcp, event store %t, pid %d", l.Addr(), events, os.Getpid())
	return http.Serve(l, mux)
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
