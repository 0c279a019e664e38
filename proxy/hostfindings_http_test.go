package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/testbin"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// httpHost is a raw legacy host on a real `inflight proxy --url`.
type httpHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	sid    string
	stderr *syncBuffer
	trace  string
}

// startHTTPHost starts the proxy (its late window 300ms) in front of
// upstream and opens a legacy session through it.
func startHTTPHost(t *testing.T, upstream string) *httpHost {
	t.Helper()
	inflight := testbin.Build(t, "inflight")
	dir := t.TempDir()
	h := &httpHost{t: t, stderr: &syncBuffer{}, trace: filepath.Join(dir, "host.trace")}
	h.cmd = exec.Command(inflight, "proxy", "--name", "rawhttp", "--trace", h.trace, "--late-window", "300ms", "--url", upstream)
	h.cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
	h.cmd.Stderr = h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); h.url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(h.stderr.String(), ": listening on "); ok {
			h.url, _, _ = strings.Cut(rest, " → ")
		}
	}
	if h.url == "" {
		t.Fatalf("the proxy printed no URL:\n%s", h.stderr.String())
	}
	resp := h.post(context.Background(), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw-http-host","version":"1"}}}`)
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if h.sid = resp.Header.Get("Mcp-Session-Id"); h.sid == "" {
		t.Fatalf("no Mcp-Session-Id passed through: %v", resp.Header)
	}
	resp = h.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	return h
}

// do makes an HTTP request of the host's session.
func (h *httpHost) do(ctx context.Context, method, body string, header ...string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, h.url, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.sid != "" {
		req.Header.Set("Mcp-Session-Id", h.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

func (h *httpHost) post(ctx context.Context, body string) *http.Response {
	h.t.Helper()
	return h.do(ctx, http.MethodPost, body)
}

// events reads an SSE response's messages onto a channel, closed at the
// stream's end.
func events(resp *http.Response) <-chan wire.Message {
	ch := make(chan wire.Message, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if m, err := wire.Decode([]byte(strings.Join(data, "\n"))); err == nil {
					ch <- m
				}
				data = data[:0]
				continue
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
	}()
	return ch
}

// awaitOn reads ch until a message match accepts.
func (h *httpHost) awaitOn(ch <-chan wire.Message, match func(wire.Message) bool) wire.Message {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				h.t.Fatalf("the stream ended first\nstderr:\n%s", h.stderr.String())
			}
			if match(m) {
				return m
			}
		case <-deadline:
			h.t.Fatalf("no such message came\nstderr:\n%s", h.stderr.String())
		}
	}
}

// waitTrace waits until the trace says want.
func (h *httpHost) waitTrace(want string) {
	h.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(h.trace); strings.Contains(string(b), want) {
			return
		}
	}
	h.t.Fatalf("the trace never said %q\nstderr:\n%s", want, h.stderr.String())
}

// finish ends the proxy (SIGINT) and returns its trace.
func (h *httpHost) finish() string {
	h.t.Helper()
	interrupt(h.t, h.cmd)
	b, err := os.ReadFile(h.trace)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

// drain reads a response's body to its end in the background.
func drain(resp *http.Response) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		close(done)
	}()
	return done
}

// TestRawHTTPHostAbandonsByDelete: a host that ends its session (DELETE)
// while its call is in flight, without a cancel, is found
// (host_abandoned), saying how.
func TestRawHTTPHostAbandonsByDelete(t *testing.T) {
	h := startHTTPHost(t, demoHTTP(t))
	// The upstream sends its POST's head with its first event: the call is
	// made aside, and read to its end.
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		<-drain(h.post(context.Background(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":5,"steps":5}}}`))
	}()
	h.waitTrace(`"method":"tools/call"`)
	resp := h.do(context.Background(), http.MethodDelete, "")
	resp.Body.Close()
	h.waitTrace(session.ViolationHostAbandoned)
	<-ended
	time.Sleep(400 * time.Millisecond) // past the late window: nothing more is found of it
	tr := h.finish()
	stderr := h.stderr.String()
	hostFinding(t, tr, stderr, session.ViolationHostAbandoned, 1,
		"the host ended its HTTP session (DELETE) with tools/call 2 in flight and sent no cancel for it")
	if !strings.Contains(stderr, "⚑ host gave up without cancelling tools/call slow (id 2)") {
		t.Errorf("stderr does not flag the abandoned call:\n%s", stderr)
	}
	if strings.Contains(tr, session.ViolationHostNoResume) {
		t.Errorf("a host that ended its session was expected to resume a stream of it:\n%s", tr)
	}
}

// TestRawHTTPHostTimeoutDuringQuestion: over HTTP the server's
// elicitation comes on the stream of the call it belongs to, and the
// proxy ties it to that call though another call is in flight (on stdio
// it could not tell which): the host's giving up on the call while the
// question waits is found (host_timeout_during_question), and the trace
// names the question's owner, so that attach ties it the same way.
func TestRawHTTPHostTimeoutDuringQuestion(t *testing.T) {
	h := startHTTPHost(t, demoHTTP(t))
	// Another call in flight all along (the upstream answers its POST's
	// head only with its answer, so it is made aside).
	otherEnded := make(chan struct{})
	go func() {
		defer close(otherEnded)
		other := h.post(context.Background(), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":3,"steps":3}}}`)
		<-drain(other)
	}()
	h.waitTrace(`"id":3,"method":"tools/call"`)
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	stream := events(h.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{}}}`))
	ask := h.awaitOn(stream, func(m wire.Message) bool { return m.Kind == wire.KindRequest && m.Method == "elicitation/create" })
	time.Sleep(150 * time.Millisecond)
	resp := h.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"Request timed out"}}`)
	resp.Body.Close()
	hangUp()
	h.waitTrace(session.ViolationHostTimeoutDuringQuestion)
	<-otherEnded
	tr := h.finish()
	if !strings.Contains(tr, `"text":"slow finished`) || strings.Index(tr, `"text":"slow finished`) < strings.Index(tr, session.ViolationHostTimeoutDuringQuestion) {
		t.Fatalf("the other call was not in flight when the host gave up (the tie would not be the stream's):\n%s", tr)
	}
	hostFinding(t, tr, h.stderr.String(), session.ViolationHostTimeoutDuringQuestion, 1,
		"the host gave up on tools/call confirm (id 2) (reason “Request timed out”) while the server's elicitation/create (id "+ask.ID.String()+") tied to it had waited ",
		" for the host's answer")
	var owner *wire.ID
	for _, l := range strings.Split(tr, "\n") {
		var rec trace.Record
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Dir == trace.DirIn && strings.Contains(string(rec.Msg), `"elicitation/create"`) {
			owner = rec.Owner
		}
	}
	if owner == nil || *owner != wire.IntID(2) {
		t.Errorf("the trace's elicitation/create names the owner %v, want the call it came on (2):\n%s", owner, tr)
	}
}

// droppedStream opens a legacy session on a real `inflight proxy --url` in
// front of go-sdk's server with an event store, whose tool closes the
// call's stream after its first step and answers later (for a resume
// with Last-Event-ID), and reads the call's stream to that end. At the
// test's end it resumes the stream at the upstream itself and reads it to
// the answer, so that the tool is over before the upstream closes.
func droppedStream(t *testing.T) *httpHost {
	upstream, _ := resumableUpstream(t, 1)
	h := startHTTPHost(t, upstream)
	resp := h.post(context.Background(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"progressToken":"p"}}}`)
	var lastID string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
			lastID = strings.TrimSpace(v)
		}
		if strings.Contains(sc.Text(), `"result"`) {
			t.Fatalf("the call was answered on its first stream: %s", sc.Text())
		}
	}
	resp.Body.Close()
	if lastID == "" {
		t.Fatal("the call's stream carried no event ID to resume from")
	}
	t.Cleanup(func() {
		at := func(method string, header ...string) (*http.Response, error) {
			req, _ := http.NewRequest(method, upstream, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", h.sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			return http.DefaultClient.Do(req)
		}
		resp, err := at(http.MethodGet, "Last-Event-ID", lastID)
		if err != nil {
			t.Errorf("resume at the upstream: %v", err)
			return
		}
		for m := range events(resp) {
			if m.IsResponse() && m.ID == wire.IntID(2) {
				break
			}
		}
		resp.Body.Close()
		if resp, err := at(http.MethodDelete); err == nil {
			resp.Body.Close()
		}
	})
	h.waitTrace(trace.NoteUpstreamEnded)
	return h
}

// TestRawHTTPHostReopensWithoutLastEventID: the server ended the stream
// of an unanswered call, and the host opened a GET stream without
// Last-Event-ID: what the server sent meanwhile is not replayed
// (host_resumed_without_last_event_id).
func TestRawHTTPHostReopensWithoutLastEventID(t *testing.T) {
	h := droppedStream(t)
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	get := h.do(ctx, http.MethodGet, "")
	h.waitTrace(session.ViolationHostResumedWithoutLastEventID)
	hangUp()
	get.Body.Close()
	tr := h.finish()
	stderr := h.stderr.String()
	hostFinding(t, tr, stderr, session.ViolationHostResumedWithoutLastEventID, 1,
		"the server's stream of tools/call steps (id 2) ended before its answer, and ",
		" later the host opened a stream without Last-Event-ID: what the server sent meanwhile is not replayed")
	if !strings.Contains(stderr, "(host_resumed_without_last_event_id)") {
		t.Errorf("stderr does not flag it:\n%s", stderr)
	}
	if strings.Contains(tr, session.ViolationHostNoResume) {
		t.Errorf("a host that reopened a stream was also found not to resume:\n%s", tr)
	}
}

// TestRawHTTPHostNoResume: the server ended the stream of an unanswered
// call, and the host resumed nothing in the time watched (the late
// window, 300ms): host_no_resume, saying for how long it was watched.
func TestRawHTTPHostNoResume(t *testing.T) {
	h := droppedStream(t)
	h.waitTrace(session.ViolationHostNoResume)
	tr := h.finish()
	stderr := h.stderr.String()
	rec := hostFinding(t, tr, stderr, session.ViolationHostNoResume, 1,
		"the server's stream of tools/call steps (id 2) ended before its answer, and the host did not resume it (a GET with Last-Event-ID) in the ",
		" watched: the answer can no longer reach it")
	if !regexp.MustCompile(`in the 0\.[3-9]s watched|in the [1-9][0-9.]*s watched`).MatchString(rec.Text) {
		t.Errorf("the finding %q does not say it watched the late window (0.3s) at least", rec.Text)
	}
	if !strings.Contains(tr, trace.NoteResumeWaitOver) {
		t.Errorf("the trace does not note the watch's end:\n%s", tr)
	}
}
