package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPProxyStreamOutlivesTheHostsBody: the upstream answers a POST
// with an SSE stream before the host's body has ended (it read the one
// message it needed). By default Go's HTTP/1 server, once a handler
// writes its answer, first consumes what is left of the request's body
// and closes it. For the proxy that did two harms: with a body whose end
// comes late (chunked, from a pipe here) the answer waited for the body to
// end — and this host ends it only once it has the first event, so it
// never came; with a whole Content-Length body the transport's last read
// of it (for EOF) could come after the close, fail, and close the
// upstream connection under the stream — a flood cut mid-way in three
// benchmark runs of ten. The proxy serves in full duplex: the body is the
// transport's alone, and the stream reaches its end.
func TestHTTPProxyStreamOutlivesTheHostsBody(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	second := make(chan struct{})
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := bufio.NewReader(r.Body).ReadString('\n'); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = http.NewResponseController(w).EnableFullDuplex() // the upstream itself is not what is tested
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-second:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	})}
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve(ul) }()
	t.Cleanup(func() { up.Close() })
	rp := startHTTPProxy(t, "http://"+ul.Addr().String()+"/mcp")

	pr, pw := io.Pipe()
	// Without full duplex the proxy's answer waits for the host's body to
	// end, and the host waits for the answer: bounded here.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) }) // the transport waits for its body
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rp.url, pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	go func() {
		_, _ = io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`+"\n")
	}()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	first, err := rd.ReadString('\n')
	if err != nil || !strings.Contains(first, "notifications/progress") {
		t.Fatalf("first event %q: %v", first, err)
	}
	pw.Close()                        // the host's body ends now, the answer not yet sent
	time.Sleep(50 * time.Millisecond) // for the server and the transport to see it
	close(second)
	rest, err := io.ReadAll(rd)
	if err != nil || !strings.Contains(string(rest), `"result"`) {
		t.Fatalf("after the host's body ended the stream gave %q, %v: want the answer", rest, err)
	}
	if st := rp.stderr.String(); strings.Contains(st, "broke off") {
		t.Errorf("the proxy says the upstream broke off:\n%s", st)
	}
}
