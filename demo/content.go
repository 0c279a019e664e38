package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clockURI is the demo resource that changes on its own, so that
// subscriptions have something to deliver.
const clockURI = "demo://clock"

// promptExplain is the demo prompt's name.
const promptExplain = "explain_cancellation"

func (s *Server) addClock() {
	s.mcp.AddResource(&mcp.Resource{
		URI:         clockURI,
		Name:        "clock",
		Title:       "Demo clock",
		Description: fmt.Sprintf("A clock that ticks every %s; subscribe to it to receive notifications/resources/updated.", s.interval),
		MIMEType:    "text/plain",
	}, s.readClock)
}

// runClock advances the clock every interval and tells subscribers, until
// Close.
func (s *Server) runClock() {
	defer s.clockDone.Done()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case now := <-t.C:
			s.clockMu.Lock()
			s.tick++
			s.tickAt = now
			s.clockMu.Unlock()
			// The SDK notifies legacy sessions that used resources/subscribe
			// and modern sessions whose subscriptions/listen asked for the URI.
			_ = s.mcp.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: clockURI})
		}
	}
}

// clockText is the clock's current content, e.g. "tick 42 at 15:04:05".
func (s *Server) clockText() string {
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	return fmt.Sprintf("tick %d at %s", s.tick, s.tickAt.Format("15:04:05.000"))
}

func (s *Server) readClock(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI:      req.Params.URI,
		MIMEType: "text/plain",
		Text:     s.clockText(),
	}}}, nil
}

// Explanations of cancellation per transport, for the demo prompt.
var cancellationByTransport = []struct {
	names []string
	text  string
}{
	{
		names: []string{"stdio"},
		text: "On stdio there is no per-request stream, so the client sends notifications/cancelled with the request's ID and an optional reason. " +
			"The server should stop the work and send nothing more for that request, not even a response; " +
			"a response already on its way may still arrive, and the client must ignore it.",
	},
	{
		names: []string{"http", "streamable-http", "modern"},
		text: "On Streamable HTTP (2026-07-28) each request has its own SSE response stream, and closing that stream is the cancellation: " +
			"no notifications/cancelled is sent, the server must treat the disconnect as cancellation, and nothing more can arrive for the request.",
	},
	{
		names: []string{"legacy-http", "legacy"},
		text: "On legacy Streamable HTTP (2025-11-25 and earlier) the client POSTs notifications/cancelled with its Mcp-Session-Id. " +
			"The response stream may stay open, so a late response can still arrive on it (or be replayed on resume) and must be flagged; " +
			"the client keeps reading for a bounded time, then closes the stream.",
	},
}

func (s *Server) addPrompt() {
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:        promptExplain,
		Title:       "Explain cancellation",
		Description: "Explains how a client cancels a request on the given transport, so prompts/get has something to show.",
		Arguments: []*mcp.PromptArgument{{
			Name:        "transport",
			Description: "stdio, http (2026-07-28) or legacy-http; omit it to hear about all three.",
		}},
	}, s.explainCancellation)
}

func (s *Server) explainCancellation(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	transport := strings.ToLower(strings.TrimSpace(req.Params.Arguments["transport"]))
	var parts []string
	for _, c := range cancellationByTransport {
		for _, name := range c.names {
			if transport == "" || transport == name {
				parts = append(parts, c.text)
				break
			}
		}
	}
	if len(parts) == 0 {
		return nil, &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("unknown transport %q: use stdio, http or legacy-http", transport),
		}
	}
	title := "How cancellation works"
	if transport != "" {
		title += " on " + transport
	}
	return &mcp.GetPromptResult{
		Description: title,
		Messages: []*mcp.PromptMessage{{
			Role:    "user",
			Content: &mcp.TextContent{Text: strings.Join(parts, "\n\n")},
		}},
	}, nil
}
