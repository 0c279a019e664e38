package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"inflight/internal/oauthas"
)

// AuthOptions shape the protected demo (`inflight demo-server --http ADDR
// --auth`).
type AuthOptions struct {
	// TokenLifetime is how long an access token lives (default 1 hour);
	// short ones show the refresh.
	TokenLifetime time.Duration
}

// The demo authorization server's pre-registered machine client, for
// --client-credentials. It guards nothing but the demo.
const (
	DemoMachineClientID     = "demo-machine"
	DemoMachineClientSecret = "demo-secret"
)

// ServeHTTPAuth is ServeHTTP behind OAuth: a small authorization server
// (internal/oauthas: metadata, dynamic registration, PKCE, refresh, client
// credentials) on the same listener, and /mcp and /sse accept only its
// tokens (scope "mcp"), announcing it with a 401 and a WWW-Authenticate
// challenge that names their protected resource metadata. So
// `inflight URL` shows the whole authorization on one machine.
func ServeHTTPAuth(ctx context.Context, addr string, opts Options, aopts AuthOptions, ready func(url string)) error {
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
	if !isLoopbackHost(host) {
		s.logf("warning: listening on non-loopback address %s: anyone who can reach it can get a token and call the demo tools", host)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return fmt.Errorf("demo http: %w", err)
	}
	base := "http://" + ln.Addr().String()
	as := oauthas.New(base, oauthas.Config{
		Dynamic:           true,
		ClientCredentials: true,
		Scopes:            []string{"mcp"},
		TokenLifetime:     aopts.TokenLifetime,
		Clients:           map[string]oauthas.Client{DemoMachineClientID: {Secret: DemoMachineClientSecret}},
	})
	mux := http.NewServeMux()
	mux.Handle("/", as.Handler())
	mcpRes := &oauthas.Resource{AS: as, URL: base + "/mcp", Scopes: []string{"mcp"}}
	mux.Handle("/mcp", mcpRes.Mount(mux, s.HTTPHandler()))
	sseRes := &oauthas.Resource{AS: as, URL: base + "/sse", Scopes: []string{"mcp"}}
	mux.Handle("/sse", sseRes.Mount(mux, s.SSEHandler()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	endpoint := base + "/mcp"
	s.logf("http: serving %s (HTTP+SSE at /sse) behind OAuth: authorization server %s (dynamic registration; machine client --client-id %s --client-secret %s)",
		endpoint, base, DemoMachineClientID, DemoMachineClientSecret)
	if ready != nil {
		ready(endpoint)
	}

	select {
	case err := <-served:
		return fmt.Errorf("demo http: %w", err)
	case <-ctx.Done():
	}
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
