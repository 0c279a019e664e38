package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
)

// A host's POST is recorded only once the upstream answers it: a slow
// tools/call is not in flight in the record while it runs.
func TestReviewRequestRecordedOnlyWhenUpstreamAnswers(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(1500 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer up.Close()
	var sent atomic.Int64
	start := time.Now()
	rp := startHTTPProxy(t, up.URL, func(o *Options) {
		prev := o.OnEvent
		o.OnEvent = func(ev event.Event, ch []session.Change, tr *session.Tracker) {
			if ev.Kind != event.Note && sent.Load() == 0 {
				sent.Store(int64(time.Since(start)))
			}
			prev(ev, ch, tr)
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.Post(rp.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(700 * time.Millisecond)
	recorded := sent.Load() != 0
	<-done // the host's call ends before the test does (no goroutine outlives it)
	http.DefaultClient.CloseIdleConnections()
	if !recorded {
		t.Fatalf("700ms after the host posted tools/call the proxy has recorded nothing: the request is not in flight until the upstream answers")
	}
}

// The host's bearer token passes through; a server echoing it lands in the
// trace as it is: the proxy never learns the host's secret headers.
func TestReviewHostAuthorizationNotRedacted(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	const tok = "host-secret-token-0123456789abcdef"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"token ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + ` lacks scope"}}`))
	}))
	defer up.Close()
	rp := startHTTPProxy(t, up.URL)
	req, _ := http.NewRequest("POST", rp.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rp.stop()
	if strings.Contains(rp.trace.String(), tok) {
		t.Fatalf("the host's bearer token is in the proxy's trace unredacted")
	}
}

// Stopping the proxy with a modern request in flight is recorded as the
// host's cancel: the proxy's own closure of the stream is blamed on the host.
func TestReviewShutdownBlamedOnHost(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer up.Close()
	defer close(release)
	rp := startHTTPProxy(t, up.URL)
	go func() {
		resp, err := http.Post(rp.url, "application/json", strings.NewReader(
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
		if err == nil {
			defer resp.Body.Close()
			buf := make([]byte, 100)
			for {
				if _, err := resp.Body.Read(buf); err != nil {
					return
				}
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	rp.stop()
	r := rp.request("tools/call")
	if r == nil {
		t.Fatal("no tools/call recorded")
	}
	if r.Cancel != nil && r.Cancel.Cause == session.CauseHost {
		t.Fatalf("the proxy's own shutdown is recorded as the host's cancel: state %v, cancel %+v", r.State, *r.Cancel)
	}
}

// The upstream's stream breaking mid-way is forwarded as a clean end and
// recorded nowhere.
func TestReviewUpstreamBreakSilent(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"))
		w.(http.Flusher).Flush()
		time.Sleep(50 * time.Millisecond)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer up.Close()
	rp := startHTTPProxy(t, up.URL)
	resp, err := http.Post(rp.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var rerr error
	for rerr == nil {
		_, rerr = resp.Body.Read(buf)
	}
	resp.Body.Close()
	time.Sleep(100 * time.Millisecond)
	rp.stop()
	t.Logf("host read ended with %v; stderr: %q", rerr, rp.stderr.String())
	if rerr.Error() == "EOF" {
		t.Errorf("the host sees a clean end of stream although the upstream broke it")
	}
	if !strings.Contains(rp.stderr.String(), "upstream") {
		t.Errorf("nothing says the upstream's stream broke")
	}
}

// A host that sends a new token on every request (and a server that echoes
// each one back): no token lands in the trace, however many came before,
// though the proxy keeps only the newest redact.RecentSecrets of them.
func TestHostTokenChurnStaysRedacted(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"token ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") +
			` (key ` + r.Header.Get("Idempotency-Key") + `) lacks scope"}}`))
	}))
	defer up.Close()
	rp := startHTTPProxy(t, up.URL)
	const n = redact.RecentSecrets + 300
	var wg sync.WaitGroup
	work := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range work {
				req, _ := http.NewRequest("POST", rp.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", fmt.Sprintf("Bearer churned-token-%06d", i))
				req.Header.Set("Idempotency-Key", fmt.Sprintf("idem-key-%06d", i))
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	rp.stop()
	tr := rp.trace.String()
	if c := strings.Count(tr, "lacks scope"); c < n/2 {
		t.Fatalf("%d echoes recorded of %d", c, n)
	}
	if strings.Contains(tr, "churned-token-") || strings.Contains(tr, "idem-key-") {
		i := strings.Index(tr, "churned-token-")
		if i < 0 {
			i = strings.Index(tr, "idem-key-")
		}
		t.Fatalf("a host's credential is in the trace unredacted: …%s…", tr[max(0, i-100):min(len(tr), i+60)])
	}
}
