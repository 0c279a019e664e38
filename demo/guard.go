package demo

import (
	"bytes"
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guardMiddleware keeps a malformed request from taking the whole demo down.
// People probe the demo by hand, and the SDK runs handlers on goroutines of
// its own with no recover, so a panic there ends the process and every
// session with it.
//
// One such panic is known: go-sdk v1.8.0 applies schema defaults to
// tools/call arguments decoded into a map, and "arguments": null decodes to
// a nil map, which it then writes to (the same flaw as go-sdk issue 1062 had
// for elicitation results). The middleware treats null arguments
// as absent (which the spec allows), and turns any other panic into a
// JSON-RPC internal error.
func (s *Server) guardMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil &&
			bytes.Equal(bytes.TrimSpace(call.Params.Arguments), []byte("null")) {
			call.Params.Arguments = nil
		}
		defer func() {
			if p := recover(); p != nil {
				s.logf("%s: recovered from a panic: %v", method, p)
				res, err = nil, &jsonrpc.Error{
					Code:    jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("internal error in the demo server while handling %s", method),
				}
			}
		}()
		return next(ctx, method, req)
	}
}
