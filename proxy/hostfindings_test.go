package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"inflight/internal/testkit/testbin"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// These tests are raw hosts of ours: a few lines of JSON-RPC written to a
// real `inflight proxy` (the built binary) in front of the demo server, or
// HTTP requests to `inflight proxy --url`, each doing one thing hosts get
// wrong. Each asserts what the proxy found of the host: the code, the
// words, the trace's violation line, the line on stderr and the summary
// the proxy gives at its end.

// legacyInit is a legacy host's initialize, with elicitation declared.
const legacyInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw-host","version":"1"}}}`

// stdioHost is a raw host on a real `inflight proxy -- inflight demo-server`.
type stdioHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *syncBuffer
	trace  string
}

// startStdioHost starts the proxy (its late window 300ms) and opens a
// legacy session through it.
func startStdioHost(t *testing.T) *stdioHost {
	t.Helper()
	inflight := testbin.Build(t, "inflight")
	dir := t.TempDir()
	h := &stdioHost{t: t, stderr: &syncBuffer{}, lines: make(chan string, 256), trace: filepath.Join(dir, "host.trace")}
	h.cmd = exec.Command(inflight, "proxy", "--name", "rawhost", "--trace", h.trace, "--late-window", "300ms", "--", inflight, "demo-server")
	h.cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
	h.cmd.Stderr = h.stderr
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	h.send(legacyInit)
	h.await(func(m wire.Message) bool { return m.IsResponse() && m.ID == wire.IntID(0) })
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

func (h *stdioHost) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		h.t.Fatalf("write %s: %v", line, err)
	}
}

// await reads the server's messages (through the proxy) until one that
// match accepts.
func (h *stdioHost) await(match func(wire.Message) bool) wire.Message {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("the proxy's stdout ended\nstderr:\n%s", h.stderr.String())
			}
			if m, err := wire.Decode([]byte(l)); err == nil && match(m) {
				return m
			}
		case <-deadline:
			h.t.Fatalf("no such message came\nstderr:\n%s", h.stderr.String())
		}
	}
}

// finish closes the proxy's stdin (the host leaves) and returns the
// trace once the proxy has ended.
func (h *stdioHost) finish() string {
	h.t.Helper()
	_ = h.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		h.t.Fatalf("the proxy did not end\nstderr:\n%s", h.stderr.String())
	}
	b, err := os.ReadFile(h.trace)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

// hostFinding checks what the proxy said of one finding (code, found n
// times): the violation line in the trace, with every one of words in its
// text; the stderr line; the summary at the end, on stderr and as the
// trace's note. It returns the trace's first violation record of code.
func hostFinding(t *testing.T, tr, stderr, code string, n int, words ...string) trace.Record {
	t.Helper()
	var found []trace.Record
	var summary string
	for _, l := range strings.Split(tr, "\n") {
		var rec trace.Record
		if json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		if rec.Event == trace.EventViolation && rec.Code == code {
			found = append(found, rec)
		}
		if rec.Event == trace.EventNote && strings.HasPrefix(rec.Text, "of the host: ") {
			summary = rec.Text
		}
	}
	if len(found) != n {
		t.Fatalf("the trace has %d violation lines of %s, want %d:\n%s\nstderr:\n%s", len(found), code, n, tr, stderr)
	}
	for _, w := range words {
		if !strings.Contains(found[0].Text, w) {
			t.Errorf("the finding %q lacks %q", found[0].Text, w)
		}
	}
	count := regexp.MustCompile(`\b` + code + ` ` + regexp.QuoteMeta(itoa(n)) + `\b`)
	if !count.MatchString(summary) {
		t.Errorf("the trace's summary %q does not count %s %d", summary, code, n)
	}
	if !strings.Contains(stderr, "inflight proxy ") || !count.MatchString(lastLine(stderr, "of the host: ")) {
		t.Errorf("stderr's summary does not count %s %d:\n%s", code, n, stderr)
	}
	return found[0]
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// lastLine is the last line of s that contains sub.
func lastLine(s, sub string) string {
	var last string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			last = l
		}
	}
	return last
}

// TestRawHostDuplicateID: a host that sends a second request with the ID
// of one still in flight is found (host_duplicate_id); the first is
// followed.
func TestRawHostDuplicateID(t *testing.T) {
	h := startStdioHost(t)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.4,"steps":2}}}`
	h.send(call)
	h.send(call)
	h.await(func(m wire.Message) bool { return m.IsResponse() && m.ID == wire.IntID(1) })
	time.Sleep(100 * time.Millisecond) // a second answer, if the server gives one, is in
	tr := h.finish()
	stderr := h.stderr.String()
	hostFinding(t, tr, stderr, session.ViolationHostDuplicateID, 1, "the host sent another request with ID 1", "which it had already used", "inflight follows the first")
	if !strings.Contains(stderr, "⚑ host reused request ID 1") {
		t.Errorf("stderr does not flag the reuse:\n%s", stderr)
	}
}

// TestRawHostCancelledAnswered: a host that cancels a request whose
// answer it had 300ms before (far past the crossing window) is found
// (host_cancelled_answered), with how long after.
func TestRawHostCancelledAnswered(t *testing.T) {
	h := startStdioHost(t)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.05,"steps":1}}}`)
	h.await(func(m wire.Message) bool { return m.IsResponse() && m.ID == wire.IntID(1) })
	time.Sleep(300 * time.Millisecond)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user gave up"}}`)
	tr := h.finish()
	stderr := h.stderr.String()
	rec := hostFinding(t, tr, stderr, session.ViolationHostCancelledAnswered, 1,
		"the host cancelled tools/call slow (id 1) ", " after the server's answer to it had passed (the crossing window is ")
	if rec.ID == nil || *rec.ID != wire.IntID(1) {
		t.Errorf("the violation line names %v, want request 1", rec.ID)
	}
	if !strings.Contains(stderr, "(host_cancelled_answered)") {
		t.Errorf("stderr does not flag the cancel:\n%s", stderr)
	}
	if strings.Contains(tr, session.ViolationHostCancelledUnknown) {
		t.Errorf("the cancel of an answered request was taken for one of an unknown ID:\n%s", tr)
	}
}

// TestRawHostAnsweredUnknownID: a host that answers a server request ID
// the server never sent, and then one it had answered already, is found
// twice (host_answered_unknown_id), each saying which.
func TestRawHostAnsweredUnknownID(t *testing.T) {
	h := startStdioHost(t)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{}}}`)
	ask := h.await(func(m wire.Message) bool { return m.Kind == wire.KindRequest && m.Method == "elicitation/create" })
	answer := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"decline"}}`
	}
	askID, _ := ask.ID.MarshalJSON()
	h.send(answer(string(askID)))
	h.await(func(m wire.Message) bool { return m.IsResponse() && m.ID == wire.IntID(1) })
	h.send(answer("4242"))
	h.send(answer(string(askID)))
	time.Sleep(100 * time.Millisecond)
	tr := h.finish()
	stderr := h.stderr.String()
	hostFinding(t, tr, stderr, session.ViolationHostAnsweredUnknownID, 2, "the host answered 4242, an ID the server sent no request with")
	if want := "the host answered " + ask.ID.String() + ", a request it had answered already"; !strings.Contains(tr, want) {
		t.Errorf("the trace does not say %q:\n%s", want, tr)
	}
	if !strings.Contains(stderr, "the host answered 4242, an ID the server sent no request with (host_answered_unknown_id)") {
		t.Errorf("stderr does not flag the answer:\n%s", stderr)
	}
}

// TestRawHostTimeoutDuringQuestionStdio: on stdio a host that gives up on
// its one call in flight while the server's elicitation for it waits is
// found (host_timeout_during_question): the question is tied to the only
// request in flight.
func TestRawHostTimeoutDuringQuestionStdio(t *testing.T) {
	h := startStdioHost(t)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{}}}`)
	ask := h.await(func(m wire.Message) bool { return m.Kind == wire.KindRequest && m.Method == "elicitation/create" })
	time.Sleep(150 * time.Millisecond)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"Request timed out"}}`)
	time.Sleep(100 * time.Millisecond)
	tr := h.finish()
	hostFinding(t, tr, h.stderr.String(), session.ViolationHostTimeoutDuringQuestion, 1,
		"the host gave up on tools/call confirm (id 1) (reason “Request timed out”) while the server's elicitation/create (id "+ask.ID.String()+") tied to it had waited ",
		" for the host's answer")
}

// interrupt ends a proxy as Ctrl+C does.
func interrupt(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the proxy did not end on SIGINT")
	}
}
