package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"inflight/internal/loopback"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTP header names and values the router looks at.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
	modernVersion         = "2026-07-28"
)

// maxPeekBytes bounds how much of a POST body the router reads to find its
// era; it matches the SDK's own default body limit.
const maxPeekBytes = 4 << 20

// shutdownTimeout bounds ServeHTTP's graceful shutdown.
const shutdownTimeout = 5 * time.Second

// HTTPHandler serves the MCP endpoint (mount it at /mcp) for both protocol
// eras.
//
// The SDK accepts 2026-07-28 requests only on a stateless handler, while
// legacy clients need a stateful one (sessions, GET stream, DELETE), so two
// SDK handlers share the one *mcp.Server: a request carrying Mcp-Session-Id
// goes to the stateful handler; a POST whose MCP-Protocol-Version header is
// 2026-07-28 or later, or whose params._meta carries
// io.modelcontextprotocol/protocolVersion, goes to the stateless one, which
// cancels a request's handler when its response stream closes; everything
// else (initialize, GET, DELETE) goes to the stateful one.
//
// Every request with a foreign Origin (one whose host is not loopback) is
// refused with 403; the SDK's DNS-rebinding Host check stays on in both.
func (s *Server) HTTPHandler() http.Handler { return s.http }

// router is the http.Handler behind HTTPHandler.
type router struct {
	s         *Server
	stateful  http.Handler
	stateless http.Handler
}

func (s *Server) newRouter() *router {
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	return &router{
		s: s,
		// The event store keeps a legacy request's stream (up to the SDK's
		// 10 MiB) so that a client whose connection broke resumes it with
		// Last-Event-ID and gets the rest: its events carry IDs.
		stateful: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}),
		stateless: mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Stateless: true,
			// Closing a modern request's response stream is its cancellation
			// signal, so the handler's context must end with the HTTP request.
			PropagateRequestCancellation: true,
		}),
	}
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); !loopback.Origin(origin) {
		rt.s.logf("http: refused %s with foreign Origin %q", r.Method, origin)
		writeForbidden(w, "Forbidden: Origin is not a loopback origin")
		return
	}
	if rt.s.isClosing() {
		http.Error(w, "the demo server is shutting down", http.StatusServiceUnavailable)
		return
	}
	var p peeked
	var body []byte
	if r.Method == http.MethodPost {
		var err error
		if body, err = peekBody(r); err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		p = peekMessage(body)
	}
	h := rt.stateful
	modern := r.Method == http.MethodPost && r.Header.Get(headerSessionID) == "" &&
		(r.Header.Get(headerProtocolVersion) >= modernVersion || carriesModernMeta(body))
	if modern {
		h = rt.stateless
	}
	if p.call && interceptsTask(p.method, p.params, modern) {
		rt.serveTaskHTTP(w, r, p, modern)
		return
	}
	fw := &withholdingWriter{w: w}
	if p.call && rewritten(p.method) {
		fw.rewriteID, fw.rewriteMethod = p.rawID, p.method
	}
	h.ServeHTTP(fw, r)
	fw.finish()
}

// peekBody reads a POST body, and puts it back for the SDK.
func peekBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBytes+1))
	_ = r.Body.Close()
	if len(body) > maxPeekBytes {
		return nil, fmt.Errorf("request body exceeds %d bytes", maxPeekBytes)
	}
	// A read error is left for the SDK to report: it reads the same (now
	// truncated) body and answers 400.
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, nil
	}
	return body, nil
}

// carriesModernMeta reports whether a JSON-RPC message's params._meta carries
// io.modelcontextprotocol/protocolVersion.
func carriesModernMeta(body []byte) bool {
	if !bytes.Contains(body, []byte(mcp.MetaKeyProtocolVersion)) {
		return false
	}
	var msg struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	_, ok := msg.Params.Meta[mcp.MetaKeyProtocolVersion]
	return ok
}

// writeForbidden answers 403 with a JSON-RPC error that has no id, as the
// transport page allows.
func writeForbidden(w http.ResponseWriter, message string) {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"error":   map[string]any{"code": -32600, "message": message},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(body)
}

// ServeHTTP runs a demo server on addr and serves its MCP endpoint at /mcp
// (and the deprecated HTTP+SSE transport at /sse) until ctx is done, then shuts down gracefully.
//
// An empty addr, or one without a host (":8080"), binds 127.0.0.1; port 0
// picks any free port. A non-loopback host is served only because it was
// given explicitly, and a warning is logged. ready, if not nil, is called
// with the endpoint's full URL (for example "http://127.0.0.1:PORT/mcp") once
// the listener is open.
func ServeHTTP(ctx context.Context, addr string, opts Options, ready func(url string)) error {
	return serveDemo(ctx, addr, opts, ready, "call the demo tools", func(s *Server, _ string) (http.Handler, string) {
		mux := http.NewServeMux()
		mux.Handle("/mcp", s.HTTPHandler())
		mux.Handle("/sse", s.SSEHandler()) // the deprecated HTTP+SSE transport (sse.go)
		return mux, ""
	})
}

// serveDemo runs a demo server on addr with the handler routes builds for
// it (given the listener's base URL, and returning a note for the log)
// until ctx is done, then shuts down gracefully. who says what anyone who
// can reach a non-loopback address can do.
func serveDemo(ctx context.Context, addr string, opts Options, ready func(url string), who string,
	routes func(s *Server, base string) (http.Handler, string)) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("demo http: address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	s := New(opts)
	defer s.Close()
	if !loopback.Host(host) {
		s.logf("warning: listening on non-loopback address %s: anyone who can reach it can %s", host, who)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return fmt.Errorf("demo http: %w", err)
	}
	base := "http://" + ln.Addr().String()
	handler, note := routes(s, base)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	endpoint := base + "/mcp"
	s.logf("http: serving %s (HTTP+SSE at /sse)%s", endpoint, note)
	if ready != nil {
		ready(endpoint)
	}

	select {
	case err := <-served:
		return fmt.Errorf("demo http: %w", err)
	case <-ctx.Done():
	}

	// Closing the demo first ends open listens with their final result and
	// stops the tools, so the hanging requests finish and Shutdown need not
	// wait for them. A peer that stopped reading could still hold a request
	// open; Close on the HTTP server then cuts its connection, which in turn
	// lets the demo finish closing.
	closed := make(chan struct{})
	go func() {
		_ = s.Close()
		close(closed)
	}()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	<-closed
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("demo http: %w", err)
	}
	return nil
}
