package demo

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The HTTP+SSE endpoint opens with its endpoint event, refuses a foreign
// Origin as /mcp does, and Close ends the open streams at once (shutdown
// must not wait for every client to hang up).
func TestSSEHandler(t *testing.T) {
	s := New(Options{TickInterval: time.Hour})
	srv := httptest.NewServer(s.SSEHandler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { s.Close() })

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: HTTP %d, want 403", resp.StatusCode)
	}

	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var head []string
	for sc.Scan() && sc.Text() != "" {
		head = append(head, sc.Text())
	}
	if len(head) != 2 || head[0] != "event: endpoint" || !strings.HasPrefix(head[1], "data: /?sessionid=") {
		t.Fatalf("the stream opens with %q, want the endpoint event", head)
	}
	ended := make(chan struct{})
	go func() {
		for sc.Scan() {
		}
		close(ended)
	}()
	s.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left the stream open")
	}
}
