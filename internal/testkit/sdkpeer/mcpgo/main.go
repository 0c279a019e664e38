// Command mcpgo is a stdio MCP server written the way people write them on
// mark3labs/mcp-go, the other Go SDK servers ship on, with nothing of
// inflight in it: the second real peer that shows how an SDK server answers
// a cancelled request. Its one tool, slow, reports progress every intervalMs
// for steps steps and honours its context: when the client cancels
// (notifications/cancelled cancels the handler's context), the handler
// returns the context's error, which mcp-go sends back as a JSON-RPC error
// ("context canceled") — a reaction to the cancel, never one that crossed it.
//
// mcp-go v1.2.1 speaks both protocol eras over stdio in one session:
// initialize (legacy, up to 2025-11-25) or server/discover and modern
// requests carrying their own _meta (2026-07-28). SDKPEER_VERSIONS
// (comma-separated) narrows what server/discover advertises; mcp-go itself
// still accepts a modern request that names a version it knows.
//
// With -http it serves Streamable HTTP instead, at /mcp on a free loopback
// port (-addr to choose one), with server.NewStreamableHTTPServer's
// defaults (a session ID per initialize, SSE once a handler sends a
// notification) and no event store, so its events carry no IDs. -events
// adds mcp-go's server.NewInMemoryEventStore (server.WithEventStore), which
// gives every event an ID and replays a stream resumed with Last-Event-ID.
// Once it listens it logs "serving Streamable HTTP on <url>" on stderr.
//
// Every line on stderr is stamped with the UTC date and time to the
// microsecond, and the line for a cancel names the request's progress
// token, so a test can show that the server saw the cancel after it was
// sent and before its answer arrived (sdkpeer.CancelSeenAt reads it).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

var logger = log.New(os.Stderr, "mcpgo: ", log.LstdFlags|log.Lmicroseconds|log.LUTC)

func main() {
	httpMode := flag.Bool("http", false, "serve Streamable HTTP at /mcp instead of stdio")
	addr := flag.String("addr", "127.0.0.1:0", "the address -http listens on")
	events := flag.Bool("events", false, "with -http, keep every stream's events in mcp-go's in-memory event store, so that a stream can be resumed")
	flag.Parse()
	s := newServer()
	versions := versionsFromEnv()
	if *httpMode {
		logger.Printf("http ended: %v", serveHTTP(s, *addr, *events, versions))
		os.Exit(1)
	}
	opts := []server.StdioOption{server.WithErrorLogger(logger)}
	if versions != nil {
		opts = append(opts, server.WithStdioContextFunc(func(ctx context.Context) context.Context {
			return server.WithSupportedProtocolVersions(ctx, versions)
		}))
	}
	logger.Printf("serving on stdio, pid %d", os.Getpid())
	err := server.ServeStdio(s, opts...)
	logger.Printf("stdio ended: %v", err)
}

// versionsFromEnv is SDKPEER_VERSIONS split, nil when unset.
func versionsFromEnv() []string {
	if v := os.Getenv("SDKPEER_VERSIONS"); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

// newServer is the server with its tools, whatever the transport.
func newServer() *server.MCPServer {
	s := server.NewMCPServer("sdkpeer-mcpgo", "1.2.1", server.WithToolCapabilities(false),
		server.WithTaskCapabilities(true, true, true))
	s.AddTool(mcp.NewTool("slow",
		mcp.WithDescription("Reports progress every intervalMs for steps steps; when cancelled, returns the context's error."),
		mcp.WithNumber("steps", mcp.Description("How many progress notifications to send."), mcp.DefaultNumber(6)),
		mcp.WithNumber("intervalMs", mcp.Description("Milliseconds between two progress notifications."), mcp.DefaultNumber(200)),
	), slow)
	// The same work, which a legacy client may ask to run as a task
	// (taskSupport optional: mcp-go runs the handler in the background and
	// answers tasks/get, tasks/result and tasks/cancel itself).
	//
	// Its handler does not follow its context: mcp-go v1.2.1 derives a
	// task's context from the tools/call request's, which the stdio server
	// cancels as soon as the task handle is written, so a handler that
	// honours it ends every task "cancelled" at once (inflight reports
	// that as "the server cancelled the task"). mcp-go's tasks/cancel marks
	// the task cancelled itself, so the task's cancel still works.
	s.AddTool(mcp.NewTool("slow_task",
		mcp.WithDescription("slow, which may run as a task (taskSupport optional)."),
		mcp.WithNumber("steps", mcp.Description("How many progress notifications to send."), mcp.DefaultNumber(6)),
		mcp.WithNumber("intervalMs", mcp.Description("Milliseconds between two progress notifications."), mcp.DefaultNumber(200)),
		mcp.WithTaskSupport(mcp.TaskSupportOptional),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return slow(context.WithoutCancel(ctx), req)
	})
	return s
}

// serveHTTP serves s over Streamable HTTP at /mcp on addr until it fails.
func serveHTTP(s *server.MCPServer, addr string, events bool, versions []string) error {
	opts := []server.StreamableHTTPOption{}
	if events {
		opts = append(opts, server.WithEventStore(server.NewInMemoryEventStore()))
	}
	if versions != nil {
		opts = append(opts, server.WithHTTPContextFunc(func(ctx context.Context, _ *http.Request) context.Context {
			return server.WithSupportedProtocolVersions(ctx, versions)
		}))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, opts...))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Printf("serving Streamable HTTP on http://%s/mcp, event store %t, pid %d", l.Addr(), events, os.Getpid())
	return http.Serve(l, mux)
}

func slow(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	steps := req.GetInt("steps", 6)
	interval := time.Duration(req.GetInt("intervalMs", 200)) * time.Millisecond
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	logger.Printf("slow: start, token %v, %d steps every %s", token, steps, interval)
	srv := server.ServerFromContext(ctx)
	for step := 1; step <= steps; step++ {
		if token != nil && srv != nil {
			err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": token, "progress": step, "total": steps,
				"message": fmt.Sprintf("step %d of %d", step, steps),
			})
			if err != nil {
				logger.Printf("slow: progress %d: %v", step, err)
			}
		}
		if step == steps {
			break
		}
		select {
		case <-ctx.Done():
			logger.Printf("slow: cancel seen at step %d of %d, token %v: %v", step, steps, token, ctx.Err())
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
	logger.Printf("slow: done")
	return mcp.NewToolResultText(fmt.Sprintf("done after %d steps", steps)), nil
}
