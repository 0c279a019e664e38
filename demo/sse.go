package demo

import (
	"context"
	"inflight/internal/loopback"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SSEHandler serves the demo over the deprecated HTTP+SSE transport
// (protocol 2024-11-05), on the go-sdk's SSE handler: a GET opens a session's
// stream, whose endpoint event names the URL (this one, with ?sessionid=)
// that messages are POSTed to. Mount it at /sse; ServeHTTP does.
//
// As on Streamable HTTP, a foreign Origin is refused with 403 and the
// responses of requests whose handler honoured a cancel are withheld (the
// go-sdk would write them), so every demo tool behaves here as it does on
// the other transports. Close ends the open streams.
func (s *Server) SSEHandler() http.Handler {
	return &sseRouter{s: s, h: mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)}
}

type sseRouter struct {
	s *Server
	h *mcp.SSEHandler
}

func (rt *sseRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); !loopback.Origin(origin) {
		rt.s.logf("sse: refused %s with foreign Origin %q", r.Method, origin)
		writeForbidden(w, "Forbidden: Origin is not a loopback origin")
		return
	}
	if rt.s.isClosing() {
		http.Error(w, "the demo server is shutting down", http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodGet {
		// The stream lasts as long as its GET: end it when the demo closes,
		// or shutting down would wait for every client to hang up.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-rt.s.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		r = r.WithContext(ctx)
		rt.s.logf("sse: stream opened")
		defer rt.s.logf("sse: stream closed")
	}
	fw := &withholdingWriter{w: w}
	rt.h.ServeHTTP(fw, r)
	fw.finish()
}
