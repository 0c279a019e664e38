package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/demo"
	"inflight/event"
	"inflight/replay"
	"inflight/session"
	"inflight/wire"
)

// demoInProcess serves the demo over HTTP in this process; its log (what
// the upstream saw: its cancels) goes to the returned buffer.
func demoInProcess(t *testing.T) (string, *syncBuffer) {
	t.Helper()
	log := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := demo.ServeHTTP(ctx, "127.0.0.1:0", demo.Options{Logger: log, NoTimestamps: true}, func(u string) { urls <- u }); err != nil {
			t.Errorf("demo: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case u := <-urls:
		return u, log
	case <-time.After(5 * time.Second):
		t.Fatal("the demo did not start")
		return "", nil
	}
}

// ruleHTTP is the proxy with rules in front of the in-process demo.
type ruleHTTP struct {
	*runningHTTP
	demoLog *syncBuffer
	release chan struct{}
	inj     *httpInjector
}

// injectorMu keeps tests from sharing onHTTPInjector.
var injectorMu sync.Mutex

func startHTTPRules(t *testing.T, rules ...string) *ruleHTTP {
	t.Helper()
	parsed, err := ParseRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	up, log := demoInProcess(t)
	rh := &ruleHTTP{demoLog: log, release: make(chan struct{}, 1)}
	injectorMu.Lock()
	got := make(chan *httpInjector, 1)
	onHTTPInjector = func(in *httpInjector) { got <- in }
	rh.runningHTTP = startHTTPProxy(t, up, func(o *Options) {
		o.Rules = parsed
		o.Release = rh.release
		o.Tracker = session.Config{LateWindow: time.Second}
	})
	select {
	case rh.inj = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no injector")
	}
	onHTTPInjector = nil
	injectorMu.Unlock()
	return rh
}

// connect connects go-sdk's client through the proxy: version "" is its
// latest (the modern era), "2025-11-25" a legacy session.
func (rh *ruleHTTP) connect(t *testing.T, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-http-host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rh.url, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(cs *mcp.ClientSession, tool string, seconds float64, steps int, timeout time.Duration) (*mcp.CallToolResult, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"seconds": seconds, "steps": steps},
		Meta: mcp.Meta{"progressToken": "t-" + tool}})
	return res, time.Since(start), err
}

// waitFor waits until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// callRecord is the tracker's last tools/call of tool, after stop.
func (rh *ruleHTTP) callRecord(tool string) *session.Request {
	rh.mu.Lock()
	defer rh.mu.Unlock()
	var last *session.Request
	for i := 0; rh.tr != nil && i < rh.tr.Len(); i++ {
		if q := rh.tr.At(i); q.Method == wire.MethodToolsCall && q.Target == tool {
			last = q
		}
	}
	return last
}

var eras = []struct{ name, version string }{{"modern", ""}, {"legacy", "2025-11-25"}}

// TestHTTPRuleDelay: in both eras a delay past the host's timeout makes
// the host cancel (its stream closed on modern HTTP, notifications/
// cancelled on legacy); a delay under it reaches the host late by the
// delay; other calls are untouched; the trace marks it all.
func TestHTTPRuleDelay(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			rh := startHTTPRules(t, "tools/call slow: delay 250ms")
			cs := rh.connect(t, era.version)
			res, took, err := callTool(cs, "slow", 0.01, 1, 2*time.Second)
			if err != nil || res.IsError || took < 250*time.Millisecond {
				t.Fatalf("delayed call: %v %v after %s; want the result after at least 250ms", res, err, took)
			}
			if _, took, err := callTool(cs, "stubborn", 0.01, 1, 2*time.Second); err != nil || took > 200*time.Millisecond {
				t.Errorf("untouched call: %v after %s", err, took)
			}
			_, _, err = callTool(cs, "slow", 0.01, 1, 100*time.Millisecond)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call past the host's timeout ended with %v, want its timeout", err)
			}
			time.Sleep(CancelGrace + 100*time.Millisecond)
			rh.stop()
			tr := rh.trace.String()
			if !traceHas(tr, `"event":"injected"`, `"injected":"delay 250ms"`, "holding the response to tools/call slow") ||
				!traceHas(tr, `"event":"injected"`, `"injected":"delay 250ms"`, "released the response to tools/call slow", "after 250ms") ||
				!traceHas(tr, `"dir":"in"`, `"injected":"delay 250ms"`, `"result"`) {
				t.Errorf("the trace does not mark the delay:\n%s", tr)
			}
			replayHas(t, tr, "injected: holding the response to tools/call slow", "[injected delay 250ms]")
			if traceHas(tr, `"target":"stubborn"`, "injected") {
				t.Errorf("the untouched call is marked injected:\n%s", tr)
			}
			if !strings.Contains(rh.stderr.String(), "not passed on") {
				t.Errorf("stderr does not say the timed-out call's response was not passed on:\n%s", rh.stderr.String())
			}
			// The tracker judges the server, which answered in time, as
			// on stdio: the host's cancel came after that answer.
			q := rh.callRecord("slow")
			if q == nil || q.State != session.StateCompleted || q.Late.Response {
				t.Errorf("the host's timed-out call: %+v, want completed (the upstream answered before the host's cancel)", q)
			}
		})
	}
}

// TestHTTPRuleCancel: in both eras the rule cancels upstream with the
// era's signal (the demo's slow tool logs that it was cancelled) and
// answers the host with -32800.
func TestHTTPRuleCancel(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			rh := startHTTPRules(t, "tools/call slow: cancel 100ms")
			cs := rh.connect(t, era.version)
			_, took, err := callTool(cs, "slow", 2, 4, 5*time.Second)
			if err == nil || !strings.Contains(err.Error(), `cancelled by inflight proxy (rule \"tools/call slow: cancel 100ms\")`) &&
				!strings.Contains(err.Error(), `cancelled by inflight proxy (rule "tools/call slow: cancel 100ms")`) || took > time.Second {
				t.Fatalf("the host got %v after %s; want inflight's -32800 soon after 100ms", err, took)
			}
			waitFor(t, "the upstream saw the cancel", func() bool { return strings.Contains(rh.demoLog.String(), "cancelled after") })
			rh.stop()
			tr := rh.trace.String()
			signal := `"by":"inflight"`
			if era.name == "modern" {
				if !traceHas(tr, `"event":"injected"`, "closed the upstream request of tools/call slow", "answered the host with error -32800", `-32800`) {
					t.Errorf("the trace lacks the modern cancel:\n%s", tr)
				}
			} else if !traceHas(tr, signal, `"method":"notifications/cancelled"`, `"injected":"cancel 100ms"`) ||
				!traceHas(tr, `"event":"injected"`, "sent the upstream notifications/cancelled for tools/call slow", "answered the host with error -32800") {
				t.Errorf("the trace lacks the legacy cancel:\n%s", tr)
			}
			sent := map[string]string{"modern": "cancel signal: stream_closed (inflight closed", "legacy": "[injected cancel 100ms]"}[era.name]
			replayHas(t, tr, "injected: rule \"tools/call slow: cancel 100ms\" matches tools/call slow",
				"answered the host with error -32800", sent)
			q := rh.callRecord("slow")
			want := map[string]any{"modern": "stream closed", "legacy": "notification"}[era.name]
			if q == nil || q.Cancel == nil || q.Cancel.Cause != session.CauseUser {
				t.Fatalf("tools/call slow: %+v, want cancelled by inflight (%s)", q, want)
			}
			if (era.name == "modern") != (q.Cancel.Signal == event.SignalStreamClosed) {
				t.Errorf("cancel signal %v, want %s", q.Cancel.Signal, want)
			}
		})
	}
}

// TestHTTPRuleCancelSilentAndDrop: cancel-silent cancels upstream and
// leaves the host to its own timeout; drop never answers, the host's
// stream open until it gives up.
func TestHTTPRuleCancelSilentAndDrop(t *testing.T) {
	rh := startHTTPRules(t, "tools/call slow: cancel-silent 50ms", "tools/call stubborn: drop")
	cs := rh.connect(t, "")
	if _, took, err := callTool(cs, "slow", 2, 4, 400*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) || took < 350*time.Millisecond {
		t.Fatalf("cancel-silent: the host got %v after %s, want its own timeout", err, took)
	}
	waitFor(t, "the upstream saw the cancel", func() bool { return strings.Contains(rh.demoLog.String(), "cancelled after") })
	if _, _, err := callTool(cs, "stubborn", 0.01, 1, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("drop: the host got %v, want its own timeout", err)
	}
	time.Sleep(CancelGrace + 50*time.Millisecond)
	rh.stop()
	tr := rh.trace.String()
	if !traceHas(tr, `"event":"injected"`, `"injected":"cancel-silent 50ms"`, "the host is not told") ||
		!traceHas(tr, `"event":"injected"`, `"injected":"drop"`, "dropped the response to tools/call stubborn") ||
		!traceHas(tr, `"dir":"in"`, `"injected":"drop"`, `"result"`) {
		t.Errorf("trace:\n%s", tr)
	}
}

// TestHTTPRuleRace: legacy, the held answer goes the instant the host's
// notifications/cancelled arrives, and the tracker judges the crossing;
// modern, the record says nothing can cross and the answer goes unheld.
func TestHTTPRuleRace(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		rh := startHTTPRules(t, "tools/call slow: race")
		cs := rh.connect(t, "2025-11-25")
		if _, _, err := callTool(cs, "slow", 0.01, 1, 150*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the raced call ended with %v, want the host's own timeout", err)
		}
		waitForOr(t, rh, "the race was released", func() bool {
			return strings.Contains(rh.stderr.String(), "the instant the host's cancel arrived")
		})
		rh.stop()
		if !traceHas(rh.trace.String(), `"event":"injected"`, `"injected":"race"`, "crosses the host's cancel") {
			t.Errorf("trace:\n%s", rh.trace.String())
		}
		// As on stdio: the upstream answered before the host's cancel
		// (completed); what crossed is what the host got, which the
		// injected line says.
		if q := rh.callRecord("slow"); q == nil || q.State != session.StateCompleted {
			t.Fatalf("tools/call slow: %+v; want completed: the upstream answered before the host's cancel", q)
		}
	})
	t.Run("modern", func(t *testing.T) {
		rh := startHTTPRules(t, "tools/call slow: race")
		cs := rh.connect(t, "")
		if res, _, err := callTool(cs, "slow", 0.01, 1, 2*time.Second); err != nil || res.IsError {
			t.Fatalf("the modern raced call: %v %v, want its result unheld", res, err)
		}
		rh.stop()
		if !traceHas(rh.trace.String(), `"event":"injected"`, `"injected":"race"`, "nothing can cross on modern HTTP") {
			t.Errorf("trace:\n%s", rh.trace.String())
		}
	})
}

// TestHTTPRuleHoldRelease: hold keeps the answer until Options.Release
// (SIGUSR1) delivers.
func TestHTTPRuleHoldRelease(t *testing.T) {
	rh := startHTTPRules(t, "tools/call slow: hold")
	cs := rh.connect(t, "2025-11-25")
	done := make(chan error, 1)
	go func() {
		_, _, err := callTool(cs, "slow", 0.01, 1, 5*time.Second)
		done <- err
	}()
	waitFor(t, "the answer is held", func() bool { return strings.Contains(rh.stderr.String(), "holding the response") })
	select {
	case err := <-done:
		t.Fatalf("the held call ended before the release: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	rh.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatalf("the released call: %v", err)
	}
	rh.stop()
	if !traceHas(rh.trace.String(), `"event":"injected"`, `"injected":"hold"`, "released the response to tools/call slow", "on request, held") {
		t.Errorf("trace:\n%s", rh.trace.String())
	}
}

// TestHTTPActOnAndReleaseOne: the interface the attach view's keys call:
// a hold put on a request in flight holds its answer, releaseOne lets it
// go; the errors say why when there is nothing to act on.
func TestHTTPActOnAndReleaseOne(t *testing.T) {
	rh := startHTTPRules(t, "prompts/get nothing: drop") // a rule that acts on nothing here
	cs := rh.connect(t, "2025-11-25")
	hold, _ := ParseRule("* : hold")
	hold.Text = "key h in attach"
	if err := rh.inj.actOn(wire.IntID(99), &hold, time.Now()); err == nil || !strings.Contains(err.Error(), "no request 99") {
		t.Errorf("actOn an unknown ID: %v", err)
	}
	if _, err := rh.inj.releaseOne(wire.IntID(99), time.Now()); err == nil || !strings.Contains(err.Error(), "nothing of request 99 is held") {
		t.Errorf("releaseOne of nothing held: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := callTool(cs, "slow", 0.2, 2, 5*time.Second)
		done <- err
	}()
	var id wire.ID
	waitFor(t, "the call is in flight", func() bool {
		rh.inj.mu.Lock()
		defer rh.inj.mu.Unlock()
		for k, f := range rh.inj.flights {
			if f.method == wire.MethodToolsCall {
				id = k.id
				return true
			}
		}
		return false
	})
	if err := rh.inj.actOn(id, &hold, time.Now()); err != nil {
		t.Fatalf("actOn: %v", err)
	}
	if err := rh.inj.actOn(id, &hold, time.Now()); err == nil || !strings.Contains(err.Error(), "is acted on already (hold, key h in attach)") {
		t.Errorf("a second actOn before the answer: %v, want refused (a command acts on it)", err)
	}
	// A release before the answer came takes the hold back; the hold
	// can then be put on again.
	if took, err := rh.inj.releaseOne(id, time.Now()); err != nil || !took {
		t.Errorf("releaseOne before the answer came: %v, %v, want the hold taken back", took, err)
	}
	if _, err := rh.inj.releaseOne(id, time.Now()); err == nil || !strings.Contains(err.Error(), "nothing of request") {
		t.Errorf("a second releaseOne before the answer: %v, want nothing held", err)
	}
	if err := rh.inj.actOn(id, &hold, time.Now()); err != nil {
		t.Fatalf("actOn after the hold was taken back: %v", err)
	}
	waitFor(t, "the answer is held", func() bool { return strings.Contains(rh.stderr.String(), "holding the response") })
	if _, err := rh.inj.releaseOne(id, time.Now()); err != nil {
		t.Fatalf("releaseOne: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the released call: %v", err)
	}
	if err := rh.inj.actOn(id, &hold, time.Now()); err == nil {
		t.Errorf("actOn an answered request: nil")
	}
	// A cancel put on a request in flight cancels it upstream.
	cancel, _ := ParseRule("*: cancel")
	cancel.Text = "key c in attach"
	go func() {
		_, _, err := callTool(cs, "slow", 2, 4, 5*time.Second)
		done <- err
	}()
	waitFor(t, "the second call is in flight", func() bool {
		rh.inj.mu.Lock()
		defer rh.inj.mu.Unlock()
		for k, f := range rh.inj.flights {
			if f.method == wire.MethodToolsCall && k.id != id && f.ex.wrote {
				id = k.id
				return true
			}
		}
		return false
	})
	if err := rh.inj.actOn(id, &cancel, time.Now()); err != nil {
		t.Fatalf("actOn cancel: %v", err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "key c in attach") {
		t.Fatalf("the cancelled call: %v, want inflight's -32800", err)
	}
	waitFor(t, "the upstream saw the cancel", func() bool { return strings.Contains(rh.demoLog.String(), "cancelled after") })
	rh.stop()
	tr := rh.trace.String()
	if !traceHas(tr, `"event":"injected"`, `"code":"acting"`, "hold on tools/call slow", "(key h in attach), ") ||
		!traceHas(tr, `"event":"injected"`, "released the response to tools/call slow", "on request, held") ||
		!traceHas(tr, `"event":"injected"`, `"injected":"cancel"`, "sent the upstream notifications/cancelled") {
		t.Errorf("trace:\n%s", tr)
	}
}

// TestHTTPActOnTwoSessions: two legacy sessions with the same request ID
// in flight: actOn cannot tell which, and says so.
func TestHTTPActOnTwoSessions(t *testing.T) {
	rh := startHTTPRules(t, "prompts/get nothing: drop")
	a, b := rh.connect(t, "2025-11-25"), rh.connect(t, "2025-11-25")
	var wg sync.WaitGroup
	for _, cs := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = callTool(cs, "slow", 0.3, 1, 5*time.Second)
		}()
	}
	var id wire.ID
	waitFor(t, "both calls in flight", func() bool {
		rh.inj.mu.Lock()
		defer rh.inj.mu.Unlock()
		n := map[wire.ID]int{}
		for k, f := range rh.inj.flights {
			if f.method == wire.MethodToolsCall {
				n[k.id]++
				if n[k.id] == 2 {
					id = k.id
					return true
				}
			}
		}
		return false
	})
	hold, _ := ParseRule("*: hold")
	if err := rh.inj.actOn(id, &hold, time.Now()); err == nil || !strings.Contains(err.Error(), "2 host sessions") {
		t.Errorf("actOn with two sessions: %v", err)
	}
	wg.Wait()
}

// TestHTTPHostHeaderCheck: on loopback, a request whose Host is not a
// loopback name is refused before it reaches the upstream (DNS rebinding).
func TestHTTPHostHeaderCheck(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	var reached sync.Map
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Store(r.Header.Get("X-Case"), true) }))
	defer up.Close()
	rp := startHTTPProxy(t, up.URL)
	for host, want := range map[string]int{"evil.example": 403, "evil.example:8080": 403, "localhost": 200, "127.0.0.1:9": 200, "[::1]:80": 200} {
		req, _ := http.NewRequest(http.MethodGet, rp.url, nil)
		req.Host = host
		req.Header.Set("X-Case", host)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
		_, got := reached.Load(host)
		if got != (want == 200) {
			t.Errorf("Host %s reached the upstream: %v", host, got)
		}
		if want == 403 && !strings.Contains(string(body), "Host is not a loopback name or address") {
			t.Errorf("Host %s: body %s", host, body)
		}
	}
	if !strings.Contains(rp.stderr.String(), `refused GET with a foreign Host "evil.example"`) {
		t.Errorf("stderr: %s", rp.stderr.String())
	}
}

// TestHTTPBatchRecorded: a legacy host's batch body and the upstream's
// batch answer are forwarded byte for byte, and each message of them is
// recorded; with rules on (acting on nothing) the bytes are the same.
func TestHTTPBatchRecorded(t *testing.T) {
	for _, rules := range [][]Rule{nil, {{Method: "prompts/get", Name: "x", Action: ActDrop, Text: "prompts/get x: drop"}}} {
		var gotBody []byte
		answer := "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}},\n {\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{}}]"
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gotBody, _ = io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s-9")
			_, _ = io.WriteString(w, answer)
		}))
		rp := startHTTPProxy(t, up.URL, func(o *Options) { o.Rules = rules })
		body := "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}, {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"ping\"}]"
		req, _ := http.NewRequest(http.MethodPost, rp.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2025-03-26")
		req.Header.Set("Mcp-Session-Id", "s-9")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		rp.stop()
		up.Close()
		if string(got) != answer || string(gotBody) != body || resp.Header.Get("Mcp-Session-Id") != "s-9" {
			t.Errorf("rules %v: the host got %q (%v), the upstream %q", rules, got, resp.Header, gotBody)
		}
		tr := rp.trace.String()
		for _, parts := range [][]string{
			{`"dir":"out"`, `"method":"tools/list"`}, {`"dir":"out"`, `"method":"notifications/initialized"`},
			{`"dir":"out"`, `"method":"ping"`}, {`"dir":"in"`, `"id":1`}, {`"dir":"in"`, `"id":"b"`},
		} {
			if !traceHas(tr, parts...) {
				t.Errorf("rules %v: no trace line with %q:\n%s", rules, parts, tr)
			}
		}
		rp.mu.Lock()
		if q := rp.request(wire.MethodToolsList); q == nil || q.State != session.StateCompleted {
			t.Errorf("rules %v: tools/list of the batch: %+v, want completed", rules, q)
		}
		rp.mu.Unlock()
	}
}

// TestHTTPRulesByteExact: with rules on that act on nothing here, an SSE
// answer reaches the host byte for byte, its events as they come.
func TestHTTPRulesByteExact(t *testing.T) {
	step := make(chan struct{})
	first := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	second := "id: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n: a comment\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		<-step
		_, _ = io.WriteString(w, second[:10])
		w.(http.Flusher).Flush()
		time.Sleep(10 * time.Millisecond)
		_, _ = io.WriteString(w, second[10:])
	}))
	defer up.Close()
	rules, _ := ParseRules([]string{"tools/call other: hold"})
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.Rules = rules })
	req, _ := http.NewRequest(http.MethodPost, rp.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, len(first))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != first {
		t.Fatalf("the first event: %q %v", buf, err)
	}
	close(step)
	rest, _ := io.ReadAll(resp.Body)
	if !bytes.Equal(rest, []byte(second)) {
		t.Errorf("the host got %q, want %q", rest, second)
	}
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if q := rp.request(wire.MethodToolsCall); q == nil || q.State != session.StateCompleted || q.Progress.Count != 1 {
		t.Errorf("tools/call: %+v", q)
	}
}

func waitForOr(t *testing.T, rh *ruleHTTP, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			rh.stop()
			t.Fatalf("never: %s\n%s\n%s", what, rh.stderr.String(), rh.trace.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// jsonUpstream answers every request carrying an ID with a JSON body after
// wait (unless its request is cancelled first), and keeps what it was sent.
type jsonUpstream struct {
	*httptest.Server
	mu       sync.Mutex
	cancels  []*http.Request // notifications/cancelled POSTs, their headers
	bodies   []string
	closedUp chan struct{} // a request's context ended before its answer
}

func newJSONUpstream(t *testing.T, wait func(body string) time.Duration) *jsonUpstream {
	u := &jsonUpstream{closedUp: make(chan struct{}, 4)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, string(body))
		if strings.Contains(string(body), wire.NotifyCancelled) {
			u.cancels = append(u.cancels, r)
		}
		u.mu.Unlock()
		m, err := wire.Decode(body)
		if err != nil || m.Kind != wire.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		select {
		case <-time.After(wait(string(body))):
		case <-r.Context().Done():
			u.closedUp <- struct{}{}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":{"ok":true}}`+"\n")
	}))
	t.Cleanup(u.Close)
	return u
}

// post sends a host's POST and reads its whole answer.
func post(t *testing.T, url, version, sid, body string) (*http.Response, []byte, time.Duration) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, got, time.Since(start)
}

// TestHTTPRuleJSONBodies: a JSON answer is held whole, its status and
// headers with it, and goes on byte for byte; a legacy cancel POSTs
// notifications/cancelled with the host's session headers and answers the
// host with a JSON -32800; a modern cancel closes the upstream request.
func TestHTTPRuleJSONBodies(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	// "gone" would take 2s: the host's next request on the same
	// connection must not wait for it once inflight answered.
	up := newJSONUpstream(t, func(body string) time.Duration {
		if strings.Contains(body, `"gone"`) {
			return 2 * time.Second
		}
		return 150 * time.Millisecond
	})
	rules, _ := ParseRules([]string{"tools/call late: delay 200ms", "tools/call gone: cancel 50ms"})
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.Rules = rules })

	resp, got, took := post(t, rp.url, "2025-11-25", "s-1", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"late"}}`)
	if string(got) != "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n" || resp.Header.Get("X-Upstream") != "yes" || took < 350*time.Millisecond {
		t.Errorf("delayed JSON: %q %v after %s", got, resp.Header, took)
	}

	resp, got, took = post(t, rp.url, "2025-11-25", "s-1", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gone"}}`)
	if resp.StatusCode != 200 || !strings.Contains(string(got), `"code":-32800`) || !strings.Contains(string(got), `"id":8`) || took > 140*time.Millisecond {
		t.Errorf("legacy cancel: %d %q after %s", resp.StatusCode, got, took)
	}
	waitFor(t, "the upstream got the cancel", func() bool {
		up.mu.Lock()
		defer up.mu.Unlock()
		return len(up.cancels) == 1
	})
	up.mu.Lock()
	c := up.cancels[0]
	if c.Header.Get("Mcp-Session-Id") != "s-1" || c.Header.Get("MCP-Protocol-Version") != "2025-11-25" {
		t.Errorf("the cancel's headers: %v", c.Header)
	}
	up.mu.Unlock()

	_, got, took = post(t, rp.url, "2026-07-28", "", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"gone","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if !strings.Contains(string(got), `"code":-32800`) || took > time.Second {
		t.Errorf("modern cancel: %q after %s", got, took)
	}
	select {
	case <-up.closedUp:
	case <-time.After(2 * time.Second):
		t.Errorf("the modern cancel did not close the upstream request")
	}
	up.mu.Lock()
	if len(up.cancels) != 1 {
		t.Errorf("a modern cancel POSTed notifications/cancelled: %d", len(up.cancels))
	}
	up.mu.Unlock()
	rp.stop()
	tr := rp.trace.String()
	if !traceHas(tr, `"dir":"in"`, `"id":7`, `"injected":"delay 200ms"`) ||
		!traceHas(tr, `"event":"cancel_sent"`, `"id":8`, `"signal":"notifications/cancelled"`) ||
		!traceHas(tr, `"event":"cancel_sent"`, `"id":9`, `"signal":"stream_closed"`) {
		t.Errorf("trace:\n%s", tr)
	}
}

// TestHTTPRuleHeldAtTheEnd: as the proxy ends, a held answer goes to its
// host; a dropped one's host sees its connection end, not an answer.
func TestHTTPRuleHeldAtTheEnd(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	up := newJSONUpstream(t, func(string) time.Duration { return 0 })
	rules, _ := ParseRules([]string{"tools/call kept: hold", "tools/call lost: drop"})
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.Rules = rules })
	type answer struct {
		body []byte
		err  error
	}
	ask := func(id, tool string) chan answer {
		ch := make(chan answer, 1)
		go func() {
			resp, err := http.Post(rp.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+tool+`"}}`))
			if err != nil {
				ch <- answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			ch <- answer{b, err}
		}()
		return ch
	}
	kept, lost := ask("1", "kept"), ask("2", "lost")
	waitFor(t, "both answered upstream", func() bool {
		s := rp.stderr.String()
		return strings.Contains(s, "holding the response to tools/call kept") && strings.Contains(s, "dropped the response to tools/call lost")
	})
	rp.stop()
	if a := <-kept; a.err != nil || !strings.Contains(string(a.body), `"id":1`) {
		t.Errorf("the held answer at the end: %q %v", a.body, a.err)
	}
	if a := <-lost; a.err == nil {
		t.Errorf("the dropped request's host got %q, want its connection ended", a.body)
	}
	if !strings.Contains(rp.stderr.String(), "released the response to tools/call kept (id 1) as the proxy ends") {
		t.Errorf("stderr:\n%s", rp.stderr.String())
	}
}

// replayHas replays a proxy's trace and wants each of parts in it.
func replayHas(t *testing.T, tr string, parts ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := replay.Reader(strings.NewReader(tr), "proxy", replay.Options{}, &out, &errOut); code != 0 {
		t.Fatalf("replay exit %d: %s", code, errOut.String())
	}
	for _, p := range parts {
		if !strings.Contains(out.String(), p) {
			t.Errorf("replay lacks %q:\n%s", p, out.String())
		}
	}
}
