package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests in this file speak Streamable HTTP with net/http directly, so
// they see every SSE event, status code and header the demo sends.

// httpPeer talks to a demo server's HTTPHandler behind an httptest server on
// 127.0.0.1.
type httpPeer struct {
	t      *testing.T
	url    string
	client *http.Client
}

func startHTTP(t *testing.T, s *Server) *httpPeer {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.HTTPHandler())
	srv := httptest.NewServer(mux)
	tr := &http.Transport{}
	t.Cleanup(func() {
		// Closing the demo first ends its sessions, so that no request (a
		// legacy GET stream, say) keeps the test server from closing.
		_ = s.Close()
		srv.CloseClientConnections()
		srv.Close()
		tr.CloseIdleConnections()
	})
	return &httpPeer{t: t, url: srv.URL + "/mcp", client: &http.Client{Transport: tr}}
}

// modernHeaders are the request metadata headers of a 2026-07-28 POST.
func modernHeaders(body map[string]any) http.Header {
	h := http.Header{}
	h.Set("MCP-Protocol-Version", modernVersion)
	h.Set("Mcp-Method", fmt.Sprint(body["method"]))
	if params, ok := body["params"].(map[string]any); ok {
		if name, ok := params["name"].(string); ok {
			h.Set("Mcp-Name", name)
		} else if uri, ok := params["uri"].(string); ok {
			h.Set("Mcp-Name", uri)
		}
	}
	return h
}

// legacyHeaders are the headers of a POST within a legacy session.
func legacyHeaders(session string) http.Header {
	h := http.Header{}
	h.Set("MCP-Protocol-Version", legacyVersion)
	h.Set("Mcp-Session-Id", session)
	return h
}

func (h *httpPeer) do(ctx context.Context, method string, body any, header http.Header) *http.Response {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.url, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// post sends one JSON-RPC message and returns the response's stream of
// messages.
func (h *httpPeer) post(ctx context.Context, body map[string]any, header http.Header) *sseStream {
	h.t.Helper()
	resp := h.do(ctx, http.MethodPost, body, header)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.t.Fatalf("POST %v: %s: %s", body["method"], resp.Status, data)
	}
	return readStream(h.t, resp)
}

// notify POSTs a notification, which must be accepted with 202.
func (h *httpPeer) notify(body map[string]any, header http.Header) {
	h.t.Helper()
	resp := h.do(context.Background(), http.MethodPost, body, header)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		h.t.Fatalf("POST %v: %s, want 202", body["method"], resp.Status)
	}
}

// initialize opens a legacy session and returns its ID.
func (h *httpPeer) initialize() (string, msg) {
	h.t.Helper()
	st := h.post(context.Background(), request(1, "initialize", initializeParams()), nil)
	session := st.resp.Header.Get("Mcp-Session-Id")
	resp := st.next()
	st.close()
	if session == "" || resp.Error != nil {
		h.t.Fatalf("initialize: session %q, %s", session, resp)
	}
	h.notify(notification("notifications/initialized", map[string]any{}), legacyHeaders(session))
	return session, resp
}

// sseStream is the body of one HTTP response, read as JSON-RPC messages:
// the events of a text/event-stream, or a single application/json body.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	msgs chan msg
	done chan struct{}
}

func readStream(t *testing.T, resp *http.Response) *sseStream {
	st := &sseStream{t: t, resp: resp, msgs: make(chan msg, 1<<12), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		defer close(st.msgs)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			data, _ := io.ReadAll(resp.Body)
			if len(bytes.TrimSpace(data)) > 0 {
				st.msgs <- decodeMsg(t, data)
			}
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				// An event whose data is empty is a priming event (an ID
				// to resume from, no message), which the legacy stateful
				// handler sends first now that it keeps its events.
				if joined := strings.Join(data, "\n"); strings.TrimSpace(joined) != "" {
					st.msgs <- decodeMsg(t, []byte(joined))
				}
				data = nil
				continue
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
	}()
	t.Cleanup(st.close)
	return st
}

// close closes the response body: on a modern request, the cancellation.
func (st *sseStream) close() {
	st.resp.Body.Close()
	<-st.done
}

func (st *sseStream) next() msg {
	st.t.Helper()
	select {
	case m, ok := <-st.msgs:
		if !ok {
			st.t.Fatal("the response stream ended")
		}
		return m
	case <-time.After(eventually):
		st.t.Fatal("timed out waiting for an event")
	}
	panic("unreachable")
}

func (st *sseStream) until(stop func(msg) bool) ([]msg, msg) {
	st.t.Helper()
	var before []msg
	for {
		m := st.next()
		if stop(m) {
			return before, m
		}
		before = append(before, m)
	}
}

// rest reads the stream to its end, which must come in time.
func (st *sseStream) rest() []msg {
	st.t.Helper()
	var got []msg
	timer := time.NewTimer(eventually)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-st.msgs:
			if !ok {
				return got
			}
			got = append(got, m)
		case <-timer.C:
			st.t.Fatalf("the response stream did not end; got %v", got)
		}
	}
}

func TestHTTPModernDiscover(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	body := request(1, "server/discover", modern.params(nil, ""))
	st := h.post(context.Background(), body, modernHeaders(body))
	if st.resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a modern request got a session ID")
	}
	resp := st.next()
	var res struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || !slices.Contains(res.SupportedVersions, modernVersion) {
		t.Errorf("server/discover = %s, want %s among supportedVersions", resp, modernVersion)
	}
}

// TestHTTPModernByMetaOnly checks the router's body peek: a request whose
// era shows only in its _meta reaches the stateless handler, which then
// rejects the missing header as the transport page requires.
func TestHTTPModernByMetaOnly(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	resp := h.do(context.Background(), http.MethodPost, request(1, "server/discover", modern.params(nil, "")), nil)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(data, []byte("-32020")) {
		t.Errorf("discover without header = %s %s, want 400 with HeaderMismatch (-32020)", resp.Status, data)
	}
}

func TestHTTPLegacyInitialize(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	_, resp := h.initialize()
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.ProtocolVersion != legacyVersion || res.ServerInfo.Name != serverName {
		t.Errorf("initialize = %s", resp)
	}
}

// TestHTTPModernCloseCancels checks that closing a modern request's response
// stream cancels its handler: the handler observes ctx.Done().
func TestHTTPModernCloseCancels(t *testing.T) {
	s, logs := newTestServer(t)
	h := startHTTP(t, s)
	body := toolCall(modern, 1, toolSlow, args("seconds", 50*testStep.Seconds(), "steps", 50), "tok")
	st := h.post(context.Background(), body, modernHeaders(body))
	for seen := 0; seen < 2; {
		if _, ok := st.next().asProgress(t, "tok"); ok {
			seen++
		}
	}
	st.close()
	logs.waitFor(t, `slow #\d+(?: \(progress token [^)]+\))?: cancelled after \S+ at step \d+/50; no response sent`)
}

func TestHTTPModernStubbornIgnoresClose(t *testing.T) {
	s, logs := newTestServer(t)
	h := startHTTP(t, s)
	body := toolCall(modern, 1, toolStubborn, args("seconds", 5*testStep.Seconds(), "steps", 5), "tok")
	st := h.post(context.Background(), body, modernHeaders(body))
	st.until(func(m msg) bool { _, ok := m.asProgress(t, "tok"); return ok })
	st.close()
	logs.waitFor(t, `stubborn #\d+(?: \(progress token [^)]+\))?: cancellation ignored at step \d+/5`)
	logs.waitFor(t, `stubborn #\d+(?: \(progress token [^)]+\))?: finished 5 steps .*after the client cancelled`)
}

func TestHTTPModernTools(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	call := func(id int, tool string, a map[string]any, token string) ([]msg, msg) {
		body := toolCall(modern, id, tool, a, token)
		st := h.post(context.Background(), body, modernHeaders(body))
		before, resp := st.until(func(m msg) bool { return m.isResponse(id) })
		if after := st.rest(); len(after) > 0 {
			t.Errorf("%s: messages after the response: %v", tool, after)
		}
		return before, resp
	}

	before, resp := call(1, toolSlow, args("seconds", 0.05, "steps", 5), "tok")
	if text, _ := resp.toolText(t); len(before) != 5 || !strings.HasPrefix(text, "slow finished 5 steps") {
		t.Errorf("slow: %d messages before %s", len(before), resp)
	}
	before, _ = call(2, toolFlood, args("count", 100), "tok")
	if len(before) != 100 {
		t.Errorf("flood: %d progress notifications, want 100", len(before))
	}
	if _, resp = call(3, toolFail, nil, ""); !strings.Contains(resp.raw, `"isError":true`) {
		t.Errorf("fail: %s", resp)
	}
	if _, resp = call(4, toolFail, args("rpc", true), ""); resp.Error == nil || resp.Error.Code != failCode {
		t.Errorf("fail rpc: %s", resp)
	}
}

func TestHTTPModernListen(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	body := listenRequest(7)
	listen := h.post(context.Background(), body, modernHeaders(body))
	checkAck(t, listen.next(), 7)
	listen.until(func(m msg) bool { return isClockUpdate(m, 7) })

	end := toolCall(modern, 8, toolEndSubscriptions, nil, "")
	st := h.post(context.Background(), end, modernHeaders(end))
	if text, _ := st.next().toolText(t); text != "ended 1 subscription(s)" {
		t.Errorf("end_subscriptions = %q", text)
	}
	_, final := listen.until(func(m msg) bool { return m.isResponse(7) })
	checkListenResult(t, final, 7)
	if after := listen.rest(); len(after) > 0 {
		t.Errorf("messages after the listen's final result: %v", after)
	}
}

func TestHTTPModernListenClosedByClient(t *testing.T) {
	s, logs := newTestServer(t)
	h := startHTTP(t, s)
	body := listenRequest(7)
	listen := h.post(context.Background(), body, modernHeaders(body))
	checkAck(t, listen.next(), 7)
	listen.close()
	logs.waitFor(t, `listen #\d+: cancelled by the client .*; no response sent`)
}

// TestHTTPLegacySlowCancelled cancels with notifications/cancelled: the
// request's stream stays open, so it shows that neither a response nor more
// progress follows.
func TestHTTPLegacySlowCancelled(t *testing.T) {
	s, logs := newTestServer(t)
	h := startHTTP(t, s)
	session, _ := h.initialize()
	st := h.post(context.Background(), toolCall(legacy, 10, toolSlow, args("seconds", 50*testStep.Seconds(), "steps", 50), "tok"), legacyHeaders(session))
	for seen := 0; seen < 2; {
		if _, ok := st.next().asProgress(t, "tok"); ok {
			seen++
		}
	}
	h.notify(cancelled(10), legacyHeaders(session))
	stopped := stepOf(t, logs.waitFor(t, `slow #\d+(?: \(progress token [^)]+\))?: cancelled after \S+ at step (\d+)/50`))
	// The SDK ends the stream once it believes the (withheld) response went
	// out, which bounds the watch.
	for _, m := range st.rest() {
		if m.isResponse(10) {
			t.Errorf("a cancelled slow was answered: %s", m)
		}
		if pr, ok := m.asProgress(t, "tok"); ok && pr.Progress > stopped {
			t.Errorf("progress %v after slow stopped at %v", pr.Progress, stopped)
		}
	}
}

func TestHTTPLegacyStubbornAnswersLate(t *testing.T) {
	s, logs := newTestServer(t)
	h := startHTTP(t, s)
	session, _ := h.initialize()
	st := h.post(context.Background(), toolCall(legacy, 10, toolStubborn, args("seconds", 8*testStep.Seconds(), "steps", 8), "tok"), legacyHeaders(session))
	st.until(func(m msg) bool { _, ok := m.asProgress(t, "tok"); return ok })
	h.notify(cancelled(10), legacyHeaders(session))
	ignoredAt := stepOf(t, logs.waitFor(t, `stubborn #\d+(?: \(progress token [^)]+\))?: cancellation ignored at step (\d+)/8`))
	before, resp := st.until(func(m msg) bool { return m.isResponse(10) })
	last := 0.0
	for _, m := range before {
		if pr, ok := m.asProgress(t, "tok"); ok {
			last = pr.Progress
		}
	}
	if last != 8 || ignoredAt >= 8 {
		t.Errorf("last progress %v (cancel seen at %v), want progress up to 8 after the cancel", last, ignoredAt)
	}
	if text, isErr := resp.toolText(t); isErr || !strings.HasPrefix(text, "stubborn finished 8 steps") {
		t.Errorf("late response = %s", resp)
	}
}

func TestHTTPLegacyDelete(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	session, _ := h.initialize()
	resp := h.do(context.Background(), http.MethodDelete, nil, legacyHeaders(session))
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %s, want 204", resp.Status)
	}
	resp = h.do(context.Background(), http.MethodPost, toolCall(legacy, 2, toolFail, nil, ""), legacyHeaders(session))
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST after DELETE: %s, want 404", resp.Status)
	}
}

func TestHTTPLegacyFail(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	session, _ := h.initialize()
	st := h.post(context.Background(), toolCall(legacy, 10, toolFail, args("message", "nope"), ""), legacyHeaders(session))
	if text, isErr := st.next().toolText(t); !isErr || text != "nope" {
		t.Errorf("fail = %q (isError %t)", text, isErr)
	}
	st = h.post(context.Background(), toolCall(legacy, 11, toolFail, args("rpc", true), ""), legacyHeaders(session))
	if resp := st.next(); resp.Error == nil || resp.Error.Code != failCode || resp.Error.Message != "the demo tool failed on purpose" {
		t.Errorf("fail rpc = %s", resp)
	}
}

func TestHTTPOrigin(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	discover := request(1, "server/discover", modern.params(nil, ""))
	for _, tc := range []struct {
		method, origin string
		want           int
	}{
		{http.MethodPost, "http://evil.example", http.StatusForbidden},
		{http.MethodGet, "http://evil.example", http.StatusForbidden},
		{http.MethodDelete, "https://127.0.0.1.evil.example", http.StatusForbidden},
		{http.MethodPost, "null", http.StatusForbidden},
		{http.MethodPost, "http://localhost:3000", http.StatusOK},
		{http.MethodPost, "http://127.0.0.1", http.StatusOK},
		{http.MethodPost, "http://[::1]:8080", http.StatusOK},
		{http.MethodPost, "", http.StatusOK},
	} {
		t.Run(tc.method+" "+tc.origin, func(t *testing.T) {
			header := modernHeaders(discover)
			if tc.origin != "" {
				header.Set("Origin", tc.origin)
			}
			var body any
			if tc.method == http.MethodPost {
				body = discover
			}
			resp := h.do(context.Background(), tc.method, body, header)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s with Origin %q: %s %s, want %d", tc.method, tc.origin, resp.Status, data, tc.want)
			}
			if tc.want == http.StatusForbidden {
				var e struct {
					ID    *json.RawMessage `json:"id"`
					Error struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				if json.Unmarshal(data, &e) != nil || e.ID != nil || e.Error.Message == "" {
					t.Errorf("403 body = %s, want a JSON-RPC error without id", data)
				}
			}
		})
	}
}

// TestHTTPHostCheck checks that the SDK's DNS-rebinding protection is still
// on: a loopback listener refuses a foreign Host.
func TestHTTPHostCheck(t *testing.T) {
	s, _ := newTestServer(t)
	h := startHTTP(t, s)
	body := request(1, "server/discover", modern.params(nil, ""))
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(data))
	req.Host = "evil.example"
	req.Header = modernHeaders(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %s, want 403", resp.Status)
	}
}

func TestServeHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	logs := newLogSink()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs)
		}
	})
	urls := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- ServeHTTP(ctx, "", Options{Logger: logs, TickInterval: testTick}, func(url string) { urls <- url })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-served:
		t.Fatalf("ServeHTTP: %v", err)
	case <-time.After(eventually):
		t.Fatal("ServeHTTP never became ready")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Errorf("url = %q, want http://127.0.0.1:PORT/mcp", url)
	}

	// A legacy session with its GET stream open must not hold up shutdown.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	h := &httpPeer{t: t, url: url, client: &http.Client{Transport: tr}}
	session, _ := h.initialize()
	get := h.do(context.Background(), http.MethodGet, nil, legacyHeaders(session))
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", get.Status)
	}
	defer get.Body.Close()
	body := listenRequest(3)
	listen := h.post(context.Background(), body, modernHeaders(body))
	checkAck(t, listen.next(), 3)

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeHTTP = %v", err)
		}
	case <-time.After(eventually):
		t.Fatal("ServeHTTP did not return after its context was cancelled")
	}
	// Shutdown ends an open listen gracefully, with its final result.
	_, final := listen.until(func(m msg) bool { return m.isResponse(3) })
	checkListenResult(t, final, 3)
}

func TestServeHTTPAddress(t *testing.T) {
	if err := ServeHTTP(context.Background(), "no-port", Options{}, nil); err == nil {
		t.Error("ServeHTTP with an address without port succeeded")
	}
	// An address without host binds loopback.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := ServeHTTP(ctx, ":0", Options{TickInterval: time.Hour}, func(url string) {
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Errorf("url = %q, want a loopback URL", url)
		}
		cancel()
	})
	if err != nil {
		t.Errorf("ServeHTTP(:0) = %v", err)
	}
}
