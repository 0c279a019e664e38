package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/event"
	"inflight/internal/testkit/testbin"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// demoHTTP starts `inflight demo-server --http 127.0.0.1:0` and returns its
// /mcp URL.
func demoHTTP(t *testing.T) string {
	t.Helper()
	inflight := testbin.Build(t, "inflight")
	cmd := exec.Command(inflight, "demo-server", "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "inflight demo server: "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("the demo server printed no URL")
		return ""
	}
}

// httpProxy starts RunHTTP in front of upstream; it returns the proxy's
// URL and a stop that ends it and returns its tracker.
type runningHTTP struct {
	url     string
	stderr  *syncBuffer
	trace   *syncBuffer
	mu      sync.Mutex
	tr      *session.Tracker
	changes []session.Change
	stop    func() Result
}

func startHTTPProxy(t *testing.T, upstream string, with ...func(*Options)) *runningHTTP {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rp := &runningHTTP{url: "http://" + l.Addr().String() + "/mcp", stderr: &syncBuffer{}, trace: &syncBuffer{}}
	tw := trace.NewWriter(rp.trace, time.Now(), nil)
	tw.SetSenders("host", "server")
	opts := Options{Name: "demo-http", Stderr: rp.stderr, Trace: tw, ShutdownWait: 300 * time.Millisecond,
		OnEvent: func(ev event.Event, changes []session.Change, tr *session.Tracker) {
			rp.mu.Lock()
			rp.tr = tr
			rp.changes = append(rp.changes, changes...)
			rp.mu.Unlock()
		}}
	for _, f := range with {
		f(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		res, err := RunHTTP(ctx, l, upstream, opts)
		if err != nil {
			t.Errorf("RunHTTP: %v", err)
		}
		_ = tw.Close()
		done <- res
	}()
	var once sync.Once
	var res Result
	rp.stop = func() Result {
		once.Do(func() {
			cancel()
			res = <-done
		})
		return res
	}
	t.Cleanup(func() { rp.stop() })
	return rp
}

// call finds the host's last request of method (after stop).
func (rp *runningHTTP) request(method string) *session.Request {
	var found *session.Request
	for i := 0; i < rp.tr.Len(); i++ {
		if r := rp.tr.At(i); r.Method == method {
			found = r
		}
	}
	return found
}

// timedOutCall connects go-sdk's client through the proxy (version "":
// its latest, the modern era) and calls stubborn with a timeout shorter
// than the tool.
func timedOutCall(t *testing.T, rp *runningHTTP, version string) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-http-host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rp.url, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list through the proxy: %v", err)
	}
	callCtx, callCancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "stubborn", Arguments: map[string]any{"seconds": 0.6, "steps": 6},
		Meta: mcp.Meta{"progressToken": "http-1"}})
	callCancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the host's call ended with %v, want its own timeout", err)
	}
	// Long enough for the host's cancel to be judged.
	time.Sleep(CancelGrace + 100*time.Millisecond)
}

// checkDeadlineHostFindings: go-sdk's host cancels at its caller's deadline,
// which progress does not move; whether that is flagged
// host_cancelled_while_progressing depends on how many progress
// notifications (the tool sends one each 100 ms) came within the 200 ms
// it waits. That finding (naming the deadline as the host's reason, where
// a cancel carries one) is the only one allowed.
func checkDeadlineHostFindings(t *testing.T, rp *runningHTTP, era string) {
	t.Helper()
	for i := 0; i < rp.tr.Violations().Len(); i++ {
		v := rp.tr.Violations().At(i)
		if !strings.HasPrefix(v.Code, "host_") {
			continue
		}
		// A legacy cancel carries the host's reason; a modern one is the
		// stream's closing, which has none.
		if v.Code != session.ViolationHostCancelledWhileProgressing || (era == "legacy" && !strings.Contains(v.Detail, "context deadline exceeded")) {
			t.Errorf("go-sdk's %s host flagged: %s %s", era, v.Code, v.Detail)
		}
	}
}

// TestHTTPProxyModernHostCancel: go-sdk's client in the modern era times
// out on a tool slower than its timeout; it closes the request's stream,
// which is its cancel there, and the proxy judges it so.
func TestHTTPProxyModernHostCancel(t *testing.T) {
	rp := startHTTPProxy(t, demoHTTP(t))
	timedOutCall(t, rp, "")
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if info, _ := rp.tr.Conn(); info.Era != event.EraModern || info.Transport != event.TransportHTTP {
		t.Errorf("connection %+v: want modern HTTP", info)
	}
	if r := rp.request(wire.MethodToolsList); r == nil || r.State != session.StateCompleted || !r.ByHost {
		t.Fatalf("tools/list: %+v, want the host's, completed", r)
	}
	call := rp.request(wire.MethodToolsCall)
	if call == nil {
		t.Fatal("the host's tools/call was not tracked")
	}
	if call.State != session.StateCancelled || call.Cancel == nil || call.Cancel.Cause != session.CauseHost ||
		call.Cancel.Signal != event.SignalStreamClosed {
		t.Errorf("tools/call: state %s, cancel %+v; want cancelled by the host closing its stream", call.State, call.Cancel)
	}
	if call.Progress.Count == 0 {
		t.Errorf("no progress recorded from the SSE stream before the cancel")
	}
	checkDeadlineHostFindings(t, rp, "modern")
	if !strings.Contains(rp.trace.String(), `"by":"host"`) || !strings.Contains(rp.trace.String(), `"by":"server"`) {
		t.Errorf("the trace does not say who sent what:\n%s", rp.trace.String())
	}
}

// TestHTTPProxyLegacyHostCancel: go-sdk's client at 2025-11-25 (a legacy
// session: initialize, Mcp-Session-Id, the GET stream) times out; its
// notifications/cancelled goes through and is judged, the server's answer
// after it is late.
func TestHTTPProxyLegacyHostCancel(t *testing.T) {
	rp := startHTTPProxy(t, demoHTTP(t))
	timedOutCall(t, rp, "2025-11-25")
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if info, _ := rp.tr.Conn(); info.Era != event.EraLegacy || info.ProtocolVersion != "2025-11-25" {
		t.Errorf("connection %+v: want legacy 2025-11-25", info)
	}
	call := rp.request(wire.MethodToolsCall)
	if call == nil {
		t.Fatal("the host's tools/call was not tracked")
	}
	if call.Cancel == nil || call.Cancel.Cause != session.CauseHost || call.Cancel.Signal != event.SignalNotification {
		t.Errorf("tools/call: state %s, cancel %+v; want the host's notifications/cancelled", call.State, call.Cancel)
	}
	checkDeadlineHostFindings(t, rp, "legacy")
}

// TestHTTPProxyByteExact: what the host gets from the proxy is what the
// upstream sent, body and headers, an SSE stream event by event as it is
// written; what the upstream gets is what the host sent.
func TestHTTPProxyByteExact(t *testing.T) {
	var gotBody []byte
	var gotHeader http.Header
	step := make(chan struct{})
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotBody, _ = io.ReadAll(r.Body)
		gotHeader = r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "s-1")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		<-step
		_, _ = io.WriteString(w, "id: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n")
	})}
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve(ul) }()
	t.Cleanup(func() { up.Close() })
	rp := startHTTPProxy(t, "http://"+ul.Addr().String()+"/mcp")

	body := []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"_meta\":{\"progressToken\":1}}}\n")
	req, _ := http.NewRequest(http.MethodPost, rp.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "s-1")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", "0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Mcp-Session-Id") != "s-1" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("response headers %v", resp.Header)
	}
	// The first event arrives before the upstream writes the second.
	first := make([]byte, 200)
	n, err := io.ReadAtLeast(resp.Body, first, len("id: 1\ndata: "))
	if err != nil {
		t.Fatal(err)
	}
	close(step)
	rest, _ := io.ReadAll(resp.Body)
	got := string(first[:n]) + string(rest)
	want := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		"id: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n"
	if got != want {
		t.Errorf("the host got\n%q\nwant\n%q", got, want)
	}
	if !bytes.Equal(gotBody, body) {
		t.Errorf("the upstream got %q, want %q", gotBody, body)
	}
	for _, h := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Content-Type", "Accept"} {
		if gotHeader.Get(h) != req.Header.Get(h) {
			t.Errorf("upstream header %s = %q, want %q", h, gotHeader.Get(h), req.Header.Get(h))
		}
	}
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	call := rp.request(wire.MethodToolsCall)
	if call == nil || call.State != session.StateCompleted || call.Progress.Count != 1 {
		t.Errorf("tools/call recorded as %+v: want completed from the SSE events, with one progress", call)
	}
}

// TestHTTPProxyRefusesForeignOrigin: a request from a web page elsewhere
// never reaches the upstream.
func TestHTTPProxyRefusesForeignOrigin(t *testing.T) {
	reached := make(chan struct{}, 1)
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached <- struct{}{} })}
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve(ul) }()
	t.Cleanup(func() { up.Close() })
	rp := startHTTPProxy(t, "http://"+ul.Addr().String()+"/mcp")
	for origin, want := range map[string]int{"https://evil.example": 403, "http://localhost:3000": 200, "http://127.0.0.1": 200} {
		req, _ := http.NewRequest(http.MethodGet, rp.url, nil)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %s: status %d, want %d", origin, resp.StatusCode, want)
		}
		if want == 403 {
			select {
			case <-reached:
				t.Errorf("Origin %s reached the upstream", origin)
			default:
			}
		} else {
			<-reached
		}
	}
	if !strings.Contains(rp.stderr.String(), `refused GET with a foreign Origin "https://evil.example"`) {
		t.Errorf("stderr: %s", rp.stderr.String())
	}
}

// TestHTTPProxyLegacyStreamClosedFlagged: a legacy host that closes its
// request's stream and sends no notifications/cancelled is flagged; the
// request stays in flight (the server was not told).
func TestHTTPProxyLegacyStreamClosedFlagged(t *testing.T) {
	// The flag waits a late window (here 300ms) for the host to resume a
	// stream; this host resumes none.
	rp := startHTTPProxy(t, demoHTTP(t), func(o *Options) { o.Tracker.LateWindow = 300 * time.Millisecond })
	post := func(ctx context.Context, session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rp.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	ctx := context.Background()
	resp := post(ctx, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no Mcp-Session-Id passed through: %v", resp.Header)
	}
	resp = post(ctx, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	callCtx, hangUp := context.WithCancel(ctx)
	resp = post(callCtx, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stubborn","arguments":{"seconds":0.6,"steps":6},"_meta":{"progressToken":"p"}}}`)
	if _, err := resp.Body.Read(make([]byte, 64)); err != nil {
		t.Fatalf("no stream: %v", err)
	}
	hangUp()
	resp.Body.Close()
	time.Sleep(CancelGrace + 300*time.Millisecond + 150*time.Millisecond)
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	flagged := false
	for i := 0; i < rp.tr.Violations().Len(); i++ {
		if v := rp.tr.Violations().At(i); v.Code == session.ViolationHostClosedStreamLegacy {
			flagged = true
		}
	}
	if !flagged {
		t.Errorf("the legacy stream closure was not flagged")
	}
	if !strings.Contains(rp.stderr.String(), "⚑ host closed the stream on legacy HTTP: not a cancel there (tools/call stubborn (id 2))") {
		t.Errorf("stderr:\n%s", rp.stderr.String())
	}
	if call := rp.request(wire.MethodToolsCall); call == nil || call.Cancel != nil {
		t.Errorf("tools/call %+v: want it in flight, not cancelled", call)
	}
}

// TestSSESplitter cuts a stream into its events' data however the reads
// fall (LF, CRLF, CR; multi-line data; comments and other fields), and
// keeps at most max bytes of one, its whole length said.
func TestSSESplitter(t *testing.T) {
	stream := ": hi\nevent: message\nid: 1\ndata: {\"a\":1}\n\n" +
		"data: {\"b\":\r\ndata: 2}\r\n\r\n" + "retry: 10\rdata:{\"c\":3}\r\r" +
		"data: " + strings.Repeat("x", 100) + "\n\n"
	for _, size := range []int{1, 3, 7, len(stream)} {
		s := &sseSplitter{max: 40}
		var got []line
		for b := []byte(stream); len(b) > 0; {
			n := min(size, len(b))
			got = append(got, s.feed(b[:n], time.Time{})...)
			b = b[n:]
		}
		if len(got) != 4 {
			t.Fatalf("reads of %d: %d events, want 4", size, len(got))
		}
		for i, want := range []string{`{"a":1}`, "{\"b\":\n2}", `{"c":3}`, strings.Repeat("x", 40)} {
			if string(got[i].raw) != want {
				t.Errorf("reads of %d: event %d %q, want %q", size, i, got[i].raw, want)
			}
		}
		if got[3].total != 100 || got[1].total != len("{\"b\":\n2}") {
			t.Errorf("reads of %d: totals %d, %d; want 100 and %d", size, got[3].total, got[1].total, len("{\"b\":\n2}"))
		}
	}
}

// An SSE event longer than the proxy keeps (4 MiB) goes on as it comes,
// in the default mode (rules may act) as in --read-only's plain copy: the
// host gets its bytes before its end, and the proxy keeps no more than its
// bound of it, as stdio's gate lets a line past its bound go on unjudged.
func TestHTTPHugeSSEEventForwardedAsItComes(t *testing.T) {
	for _, readOnly := range []bool{true, false} {
		name := map[bool]string{true: "read-only", false: "default"}[readOnly]
		t.Run(name, func(t *testing.T) {
			t.Cleanup(http.DefaultClient.CloseIdleConnections)
			release := make(chan struct{})
			defer close(release)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "event: message\ndata: ")
				chunk := bytes.Repeat([]byte("x"), 1<<20)
				for i := 0; i < 8; i++ {
					_, _ = w.Write(chunk)
				}
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}))
			defer up.Close()
			rp := startHTTPProxy(t, up.URL, func(o *Options) { o.ReadOnly = readOnly })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rp.url, strings.NewReader(
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got atomic.Int64
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := resp.Body.Read(buf)
					got.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
			deadline := time.Now().Add(3 * time.Second)
			for got.Load() < 5<<20 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := got.Load(); n < 5<<20 {
				t.Errorf("%s: the upstream sent 8 MiB of one SSE event; after 3s the host has %d bytes of it (the proxy keeps it back)", name, n)
			}
			cancel()
		})
	}
}

// The injector's framer passes on whole events as they end, and an event
// past its bound as unjudged pieces (its start, then what follows as it
// comes, to its end), however the reads fall; it keeps no more than the
// bound and one read; what it cuts is the stream, byte for byte.
func TestHTTPSSEFramerBoundsAnEvent(t *testing.T) {
	big := "event: message\ndata: " + strings.Repeat("x", 300) + "\r\n\r\n"
	stream := "data: {\"a\":1}\n\n" + big + ": c\r\rdata: {\"b\":2}\r\n\r\n" + big + "data: 3\n\n"
	for _, size := range []int{1, 7, 64, len(stream)} {
		f := &sseFramer{max: 100}
		var pieces []ssePiece
		for b := []byte(stream); len(b) > 0; {
			n := min(size, len(b))
			pieces = append(pieces, f.feed(b[:n])...)
			if len(f.buf) > f.max+n+1 {
				t.Fatalf("reads of %d: the framer keeps %d bytes (bound %d)", size, len(f.buf), f.max)
			}
			b = b[n:]
		}
		var all bytes.Buffer
		var whole []string
		unjudged := 0
		for _, p := range pieces {
			all.Write(p.b)
			if p.whole {
				whole = append(whole, string(p.b))
			} else {
				unjudged += len(p.b)
			}
		}
		all.Write(f.rest())
		if all.String() != stream {
			t.Errorf("reads of %d: the pieces are not the stream:\n%q", size, all.String())
		}
		want := []string{"data: {\"a\":1}\n\n", ": c\r\r", "data: {\"b\":2}\r\n\r\n", "data: 3\n\n"}
		if strings.Join(whole, "|") != strings.Join(want, "|") {
			t.Errorf("reads of %d: whole events %q, want %q", size, whole, want)
		}
		if unjudged != 2*len(big) {
			t.Errorf("reads of %d: %d bytes unjudged, want the two long events' %d", size, unjudged, 2*len(big))
		}
	}
}

// A response whose SSE event is longer than the proxy keeps (a long
// comment before its data) goes to the host unjudged, as it came; the
// rule that would hold it says so, and follows it no more.
func TestHTTPResponseInAHugeSSEEventPassesUnjudged(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, ": "+strings.Repeat("x", 5<<20)+"\nevent: message\ndata: "+answer+"\n\n")
	}))
	defer up.Close()
	rules, err := ParseRules([]string{"tools/call: hold"})
	if err != nil {
		t.Fatal(err)
	}
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.Rules = rules })
	type got struct {
		n    int
		body string
	}
	done := make(chan got, 1)
	go func() {
		_, b := hostPost(rp.url, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}`)
		done <- got{len(b), b[max(len(b)-200, 0):]}
	}()
	select {
	case g := <-done:
		if !strings.HasSuffix(g.body, "data: "+answer+"\n\n") || g.n < 5<<20 {
			t.Errorf("the host got %d bytes ending %q; want the whole event, its answer last", g.n, g.body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the host has no answer 5s on: the hold rule kept an event it cannot judge")
	}
	rp.stop()
	if tr := rp.trace.String(); !strings.Contains(tr, "longer than the 4194304 bytes the proxy keeps: passed on unjudged") {
		t.Errorf("the trace does not say the response went on unjudged:\n%s", tr[:min(len(tr), 4000)])
	}
}

// TestHTTPProxyAttachSocket: the HTTP proxy streams its record on the
// attach socket as the stdio one does, the host's stream closure in it.
func TestHTTPProxyAttachSocket(t *testing.T) {
	dir := privateTemp(t)
	rp := startHTTPProxy(t, demoHTTP(t), func(o *Options) { o.SocketDir = dir })
	var conn net.Conn
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c, err := Attach(dir, "demo-http")
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attach: %v", err)
		}
	}
	defer conn.Close()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(conn)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timedOutCall(t, rp, "")
	rp.stop()
	var all []string
	for l := range lines {
		all = append(all, l)
	}
	text := strings.Join(all, "\n")
	if len(all) == 0 || !strings.Contains(all[0], `"proxy":"demo-http"`) {
		t.Fatalf("no hello: %q", text)
	}
	for _, want := range []string{`"event":"stream_closed","byClient":true`, `"state":"cancelled"`, `"by":"host"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the socket's stream lacks %s:\n%s", want, text)
		}
	}
}
