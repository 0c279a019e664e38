package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Timing of the tests: short steps keep the suite fast, and every wait for
// something that should happen is bounded by eventually.
const (
	testTick   = 20 * time.Millisecond // the clock's interval in tests
	testStep   = 20 * time.Millisecond // one step of slow and stubborn in tests
	eventually = 5 * time.Second       // how long to wait for something that must happen
)

// quietPeriod is how long a test watches the wire for messages that must not
// come: three steps' (and three ticks') worth.
const quietPeriod = 3 * testStep

// logSink collects the demo's log lines so tests can wait for what the server
// says it did (a tool started, was cancelled, finished).
type logSink struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	changed chan struct{} // closed and replaced on every new line
}

func newLogSink() *logSink { return &logSink{changed: make(chan struct{})} }

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		close(l.changed)
		l.changed = make(chan struct{})
	}
	return len(p), nil
}

// waitFor waits until a log line matches re and returns its submatches.
func (l *logSink) waitFor(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.NewTimer(eventually)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if m := rx.FindStringSubmatch(line); m != nil {
				l.mu.Unlock()
				return m
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no log line matched %q; log:\n%s", re, l.String())
		}
	}
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newTestServer starts a demo server with a fast clock, closed when the test
// ends.
func newTestServer(t *testing.T) (*Server, *logSink) {
	t.Helper()
	logs := newLogSink()
	s := New(Options{Logger: logs, TickInterval: testTick})
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs)
		}
	})
	return s, logs
}

// msg is a JSON-RPC message as a raw test peer sees it.
type msg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
	raw string
}

func decodeMsg(t *testing.T, data []byte) msg {
	t.Helper()
	var m msg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Errorf("server wrote a line that is not JSON: %q: %v", data, err)
	}
	m.raw = string(data)
	return m
}

func (m msg) String() string { return m.raw }

// isResponse reports whether m answers the request with the given ID.
func (m msg) isResponse(id int) bool {
	return m.Method == "" && string(m.ID) == strconv.Itoa(id)
}

// progress is the payload of notifications/progress.
type progressParams struct {
	Token    any     `json:"progressToken"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// asProgress decodes m if it is a progress notification for token.
func (m msg) asProgress(t *testing.T, token string) (progressParams, bool) {
	t.Helper()
	if m.Method != "notifications/progress" {
		return progressParams{}, false
	}
	var p progressParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("progress params: %v", err)
	}
	return p, p.Token == token
}

// subscriptionID returns the io.modelcontextprotocol/subscriptionId in the
// _meta of m's params (or of its result) as raw JSON.
func (m msg) subscriptionID() string {
	obj := m.Params
	if obj == nil {
		obj = m.Result
	}
	var v struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(obj, &v)
	return string(v.Meta["io.modelcontextprotocol/subscriptionId"])
}

// toolText returns the text of the first content block of a tools/call result.
func (m msg) toolText(t *testing.T) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tools/call result: %s", m)
	}
	return r.Content[0].Text, r.IsError
}

// era selects how a raw peer speaks: modern requests carry their own _meta,
// legacy ones rely on the initialize handshake.
type era string

const (
	modern era = "modern"
	legacy era = "legacy"
)

// legacyVersion is the legacy protocol version the tests speak.
const legacyVersion = "2025-11-25"

// params builds request params; in the modern era they carry the per-request
// _meta, and a non-empty token asks for progress.
func (e era) params(fields map[string]any, token string) map[string]any {
	p := maps.Clone(fields)
	if p == nil {
		p = map[string]any{}
	}
	meta := map[string]any{}
	if e == modern {
		meta["io.modelcontextprotocol/protocolVersion"] = modernVersion
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "demo-test", "version": "0"}
	}
	if token != "" {
		meta["progressToken"] = token
	}
	if len(meta) > 0 {
		p["_meta"] = meta
	}
	return p
}

func request(id int, method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

func notification(method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
}

func toolCall(e era, id int, tool string, args map[string]any, token string) map[string]any {
	return request(id, "tools/call", e.params(map[string]any{"name": tool, "arguments": args}, token))
}

func cancelled(id int) map[string]any {
	return notification("notifications/cancelled", map[string]any{"requestId": id, "reason": "test cancelled it"})
}

func initializeParams() map[string]any {
	return map[string]any{
		"protocolVersion": legacyVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "demo-test", "version": "0"},
	}
}

// stdioPeer is a raw JSON-RPC peer on the other end of ServeStdio: it writes
// JSON lines itself and sees every line the server writes.
type stdioPeer struct {
	t       *testing.T
	w       *io.PipeWriter
	msgs    chan msg
	backlog []msg // read while waiting for a log line, not yet returned by next
}

func startStdio(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(context.Background(), inR, outW) }()

	// The buffer lets a flood pile up while the test looks elsewhere; the
	// cleanup drains whatever is left so the server never blocks on a write.
	p := &stdioPeer{t: t, w: inW, msgs: make(chan msg, 1<<15)}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(p.msgs)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			p.msgs <- decodeMsg(t, bytes.Clone(sc.Bytes()))
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		for range p.msgs {
		}
		<-readDone
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(eventually):
			t.Errorf("ServeStdio did not return after its input was closed")
		}
	})
	return p
}

func (p *stdioPeer) send(v any) {
	p.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.w.Write(append(data, '\n')); err != nil {
		p.t.Fatalf("write to server: %v", err)
	}
}

// next returns the next message the server wrote.
func (p *stdioPeer) next() msg {
	p.t.Helper()
	if len(p.backlog) > 0 {
		m := p.backlog[0]
		p.backlog = p.backlog[1:]
		return m
	}
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatal("the server closed its output")
		}
		return m
	case <-time.After(eventually):
		p.t.Fatal("timed out waiting for a message from the server")
	}
	panic("unreachable")
}

// until returns the messages before the first one for which stop is true,
// and that one.
func (p *stdioPeer) until(stop func(msg) bool) ([]msg, msg) {
	p.t.Helper()
	var before []msg
	for {
		m := p.next()
		if stop(m) {
			return before, m
		}
		before = append(before, m)
	}
}

// response reads until the response to id, returning what came before it.
func (p *stdioPeer) response(id int) ([]msg, msg) {
	p.t.Helper()
	return p.until(func(m msg) bool { return m.isResponse(id) })
}

// call sends a request and returns its response.
func (p *stdioPeer) call(id int, method string, params map[string]any) msg {
	p.t.Helper()
	p.send(request(id, method, params))
	_, resp := p.response(id)
	return resp
}

// waitLog waits for a log line matching re, reading the server's output
// meanwhile (into the backlog) so that a chatty server never blocks on a
// write while the test waits.
func (p *stdioPeer) waitLog(logs *logSink, re string) []string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.NewTimer(eventually)
	defer deadline.Stop()
	msgs := p.msgs
	for {
		logs.mu.Lock()
		for _, line := range logs.lines {
			if m := rx.FindStringSubmatch(line); m != nil {
				logs.mu.Unlock()
				return m
			}
		}
		changed := logs.changed
		logs.mu.Unlock()
		select {
		case <-changed:
		case m, ok := <-msgs:
			if !ok {
				msgs = nil // the output ended; keep waiting for the log
				continue
			}
			p.backlog = append(p.backlog, m)
		case <-deadline.C:
			p.t.Fatalf("no log line matched %q; log:\n%s", re, logs)
		}
	}
}

// quiet returns every message that arrives within d (after the backlog).
func (p *stdioPeer) quiet(d time.Duration) []msg {
	got := p.backlog
	p.backlog = nil
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				return got
			}
			got = append(got, m)
		case <-timer.C:
			return got
		}
	}
}

// initialize performs the legacy handshake.
func (p *stdioPeer) initialize() msg {
	p.t.Helper()
	resp := p.call(1, "initialize", initializeParams())
	if resp.Error != nil {
		p.t.Fatalf("initialize: %s", resp)
	}
	p.send(notification("notifications/initialized", map[string]any{}))
	return resp
}

// open prepares a peer for an era: the legacy era needs the handshake.
func (p *stdioPeer) open(e era) {
	p.t.Helper()
	if e == legacy {
		p.initialize()
	}
}

// barrier round-trips a request. Since the server's output is one ordered
// stream, every message it wrote before it answered has arrived once the
// answer has.
func (p *stdioPeer) barrier(e era, id int) []msg {
	p.t.Helper()
	p.send(request(id, "resources/read", e.params(map[string]any{"uri": clockURI}, "")))
	before, resp := p.response(id)
	if resp.Error != nil {
		p.t.Fatalf("barrier: %s", resp)
	}
	return before
}

// stepOf parses the "at step N/" or "at notification N/" a cancellation log
// line reports.
func stepOf(t *testing.T, m []string) float64 {
	t.Helper()
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatalf("log line step %q: %v", m[1], err)
	}
	return float64(n)
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m
}
