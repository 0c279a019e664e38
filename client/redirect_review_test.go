package client_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"inflight/client"
	"inflight/oauth"
)

type capL struct {
	net.Listener
	mu  *sync.Mutex
	raw *strings.Builder
}

func (l capL) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return capC{c, l.mu, l.raw}, nil
}

type capC struct {
	net.Conn
	mu  *sync.Mutex
	raw *strings.Builder
}

func (c capC) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.raw.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// An https server redirecting to http on the same host: the redirect is
// followed (only the host is compared) and the bearer token goes out in
// clear text.
func TestReviewHTTPSDowngradeRedirectLeaksToken(t *testing.T) {
	const tok = "review-access-token-0123456789"
	var mu sync.Mutex
	var raw strings.Builder
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/mcp", http.StatusTemporaryRedirect)
	}))
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	srv.Listener = capL{l, &mu, &raw}
	srv.StartTLS()
	defer srv.Close()
	store := &oauth.Store{Dir: t.TempDir()}
	if err := store.Save(&oauth.Entry{Server: srv.URL + "/mcp", Issuer: "https://as.example", ClientID: "c",
		TokenURL: "https://as.example/token", Token: &oauth2.Token{AccessToken: tok, TokenType: "Bearer"}}); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Config{URL: srv.URL + "/mcp", HTTPClient: srv.Client(),
		Auth: &oauth.Config{Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, _ = c.Connect(ctx)
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(raw.String(), "Bearer "+tok) {
		t.Fatalf("the bearer token went out over plain http after an https→http redirect")
	}
}
