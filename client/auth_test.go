package client_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/internal/oauthas"
	"inflight/internal/testkit/testserver"
	"inflight/oauth"
	"inflight/wire"
)

// protectedDemo serves the demo's Streamable HTTP endpoint and its HTTP+SSE
// stream behind an in-process authorization server.
func protectedDemo(t *testing.T, cfg oauthas.Config) (mcpURL, sseURL string, as *oauthas.Server) {
	t.Helper()
	srv := testserver.NewDemo(t)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Close() })
	as = oauthas.New(ts.URL, cfg)
	mux.Handle("/", as.Handler())
	mcp := &oauthas.Resource{AS: as, URL: ts.URL + "/mcp", Scopes: []string{"mcp"}}
	mux.Handle("/mcp", mcp.Mount(mux, srv.HTTPHandler()))
	sse := &oauthas.Resource{AS: as, URL: ts.URL + "/sse", Scopes: []string{"mcp"}}
	mux.Handle("/sse", sse.Mount(mux, srv.SSEHandler()))
	return ts.URL + "/mcp", ts.URL + "/sse", as
}

func loopbackCallback(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/callback"
}

// followRedirects plays the browser: it follows the authorization URL to the
// callback.
func followRedirects(ctx context.Context, u string) error {
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	return nil
}

func TestOAuthConnectsAndReportsSteps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sse     bool
		version string
		era     event.Era
	}{
		{"modern", false, "", event.EraModern},
		{"legacy", false, wire.Version20251125, event.EraLegacy},
		{"HTTP+SSE", true, "", event.EraLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mcpURL, sseURL, as := protectedDemo(t, oauthas.Config{Dynamic: true, Scopes: []string{"mcp"}})
			u := mcpURL
			if tc.sse {
				u = sseURL
			}
			c, rec, info := connectClient(t, client.Config{URL: u, SSE: tc.sse, ProtocolVersion: tc.version,
				Auth: &oauth.Config{Interactive: true, CallbackURL: loopbackCallback(t), OpenBrowser: followRedirects, BrowserTimeout: 5 * time.Second}})
			if info.Era != tc.era {
				t.Fatalf("era %v", info.Era)
			}
			id := send(t, c, 1, wire.MethodToolsList, nil)
			rec.wait(t, "tools/list answer", responseTo(id))
			if as.Count("authorize") != 1 {
				t.Fatalf("authorize %d", as.Count("authorize"))
			}
			var kinds []string
			for _, ev := range rec.all() {
				if ev.Kind == event.Auth {
					kinds = append(kinds, ev.AuthStep.Kind.String())
					for _, tok := range as.Issued() {
						if strings.Contains(ev.Text, tok) {
							t.Fatalf("an event shows a token: %s", ev.Text)
						}
					}
				}
			}
			if len(kinds) < 6 || kinds[0] != "challenge" || kinds[len(kinds)-1] != "retry" {
				t.Fatalf("auth steps %v\n%s", kinds, rec.dump())
			}
		})
	}
}

func TestRefusalWithoutAuthSaysToLogIn(t *testing.T) {
	mcpURL, _, _ := protectedDemo(t, oauthas.Config{Dynamic: true})
	c, rec := newClient(t, client.Config{URL: mcpURL, ProtocolVersion: wire.Version20251125})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := c.Connect(ctx)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "inflight auth login "+mcpURL) {
		t.Fatalf("Connect: %v\n%s", err, rec.dump())
	}
}

func TestOAuthNotInteractiveSaysToLogIn(t *testing.T) {
	mcpURL, _, as := protectedDemo(t, oauthas.Config{Dynamic: true})
	c, rec := newClient(t, client.Config{URL: mcpURL, Auth: &oauth.Config{CallbackURL: loopbackCallback(t)}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := c.Connect(ctx)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "inflight auth login") {
		t.Fatalf("Connect: %v\n%s", err, rec.dump())
	}
	if as.Count("register") != 0 {
		t.Fatal("registered")
	}
}

// A token the server stops accepting mid-session: the request in flight
// keeps its stream, the next one is refused, refreshed and sent again —
// answered, not lost — and the steps name it.
func TestOAuthTokenRefusedMidSession(t *testing.T) {
	mcpURL, _, as := protectedDemo(t, oauthas.Config{Dynamic: true, Scopes: []string{"mcp"}})
	c, rec, _ := connectClient(t, client.Config{URL: mcpURL, ProtocolVersion: wire.Version20251125,
		Auth: &oauth.Config{Interactive: true, CallbackURL: loopbackCallback(t), OpenBrowser: followRedirects, BrowserTimeout: 5 * time.Second}})
	slow := send(t, c, 1, wire.MethodToolsCall, toolCall("slow", map[string]any{"seconds": 0.3, "steps": 2}))
	// The token goes once the slow call's stream is open: under a loaded
	// machine's -race its POST could otherwise still be on its way (seen
	// in .ci/run: the slow call, not the list, met the refusal).
	rec.wait(t, "the slow call's stream", func(ev event.Event) bool { return ev.Kind == event.StreamOpened && ev.RequestID == slow })
	as.Revoke()
	list := send(t, c, 2, wire.MethodToolsList, nil)
	rec.wait(t, "tools/list answer", responseTo(list))
	rec.wait(t, "slow answer", responseTo(slow))
	if as.Count("authorize") != 1 || as.Count("refresh_token") != 1 {
		t.Fatalf("authorize %d refresh %d", as.Count("authorize"), as.Count("refresh_token"))
	}
	retried := rec.count(func(ev event.Event) bool {
		return ev.Kind == event.Auth && ev.AuthStep.Kind == event.AuthRetry && ev.RequestID == list
	})
	if retried != 1 {
		t.Fatalf("%d retry steps naming request 2\n%s", retried, rec.dump())
	}
	if n := rec.count(failed(list)); n != 0 {
		t.Fatalf("request 2 failed\n%s", rec.dump())
	}
}
