package demo

import (
	"context"
	"fmt"
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
	return serveDemo(ctx, addr, opts, ready, "get a token and call the demo tools", func(s *Server, base string) (http.Handler, string) {
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
		return mux, fmt.Sprintf(" behind OAuth: authorization server %s (dynamic registration; machine client --client-id %s --client-secret %s)",
			base, DemoMachineClientID, DemoMachineClientSecret)
	})
}
