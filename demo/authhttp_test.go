package demo

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The protected demo refuses a request without a token with a challenge
// that names its resource metadata, which names the authorization server
// on the same listener; and it stops when its context ends.
func TestServeHTTPAuthChallengesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ServeHTTPAuth(ctx, "127.0.0.1:0", Options{TickInterval: time.Hour}, AuthOptions{}, func(u string) { urls <- u })
	}()
	var endpoint string
	select {
	case endpoint = <-urls:
	case err := <-done:
		t.Fatal(err)
	}
	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`) {
		t.Fatalf("%d %q", resp.StatusCode, challenge)
	}
	prmURL := strings.SplitN(strings.SplitN(challenge, `resource_metadata="`, 2)[1], `"`, 2)[0]
	resp, err = http.Get(prmURL)
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		Resource string   `json:"resource"`
		Servers  []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if err != nil || prm.Resource != endpoint || len(prm.Servers) != 1 || prm.Servers[0]+"/mcp" != endpoint {
		t.Fatalf("metadata %+v %v", prm, err)
	}
	resp, err = http.Get(prm.Servers[0] + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("authorization server metadata: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
}
