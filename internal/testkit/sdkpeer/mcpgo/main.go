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
// Every line on stderr is stamped with the UTC date and time to the
// microsecond, and the line for a cancel names the request's progress
// token, so a test can show that the server saw the cancel after it was
// sent and before its answer arrived (sdkpeer.CancelSeenAt reads it).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

var logger = log.New(os.Stderr, "mcpgo: ", log.LstdFlags|log.Lmicroseconds|log.LUTC)

func main() {
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

	opts := []server.StdioOption{server.WithErrorLogger(logger)}
	if v := os.Getenv("SDKPEER_VERSIONS"); v != "" {
		versions := strings.Split(v, ",")
		opts = append(opts, server.WithStdioContextFunc(func(ctx context.Context) context.Context {
			return server.WithSupportedProtocolVersions(ctx, versions)
		}))
	}
	logger.Printf("serving on stdio, pid %d", os.Getpid())
	err := server.ServeStdio(s, opts...)
	logger.Printf("stdio ended: %v", err)
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
