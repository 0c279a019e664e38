package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/event"
	"inflight/internal/testkit/testbin"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// ruleRun is the demo server behind a proxy with rules, and go-sdk's
// client as the host, whose wire (what it wrote, what it read, and when)
// is kept.
type ruleRun struct {
	t      *testing.T
	cs     *mcp.ClientSession
	inR    *os.File
	inW    *os.File
	outR   *os.File
	outW   *os.File
	done   chan Result
	tw     *trace.Writer
	trace  syncBuffer
	stderr syncBuffer
	wire   hostWire
	mu     sync.Mutex
	tr     *session.Tracker
	closed bool
}

// hostWire records the host's side of the wire, line by line, with the
// time each line was written or read.
type hostWire struct {
	mu    sync.Mutex
	lines []wireLine
}

type wireLine struct {
	wrote bool
	at    time.Time
	msg   wire.Message
	raw   string
}

func (w *hostWire) add(wrote bool, p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		m, _ := wire.DecodeOwned(bytes.Clone(l))
		w.lines = append(w.lines, wireLine{wrote: wrote, at: time.Now(), msg: m, raw: string(l)})
	}
}

// await waits up to 5s for a line find would return.
func (w *hostWire) await(t *testing.T, wrote bool, f func(wire.Message) bool) wireLine {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if l, ok := w.find(wrote, f); ok {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host never %s the line awaited", map[bool]string{true: "wrote", false: "read"}[wrote])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// find returns the first line the host wrote (or read) that f accepts.
func (w *hostWire) find(wrote bool, f func(wire.Message) bool) (wireLine, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		if l.wrote == wrote && f(l.msg) {
			return l, true
		}
	}
	return wireLine{}, false
}

type wireReader struct {
	r io.Reader
	w *hostWire
	// buf is a line not read to its end yet.
	buf []byte
}

func (r *wireReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf = append(r.buf, p[:n]...)
	if i := bytes.LastIndexByte(r.buf, '\n'); i >= 0 {
		r.w.add(false, r.buf[:i+1])
		r.buf = append(r.buf[:0], r.buf[i+1:]...)
	}
	return n, err
}

type wireWriter struct {
	w  io.Writer
	hw *hostWire
}

func (w *wireWriter) Write(p []byte) (int, error) {
	w.hw.add(true, p)
	return w.w.Write(p)
}

func (w *wireWriter) Close() error { return nil }

func startRules(t *testing.T, rules ...string) *ruleRun {
	t.Helper()
	return startProxy(t, nil, rules...)
}

// startProxy is startRules with options of the test's (set, when not nil,
// changes them before the proxy starts).
func startProxy(t *testing.T, set func(*Options), rules ...string) *ruleRun {
	t.Helper()
	parsed, err := ParseRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	inflight := testbin.Build(t, "inflight")
	r := &ruleRun{t: t, done: make(chan Result, 1)}
	if r.inR, r.inW, err = os.Pipe(); err != nil {
		t.Fatal(err)
	}
	if r.outR, r.outW, err = os.Pipe(); err != nil {
		t.Fatal(err)
	}
	r.tw = trace.NewWriter(&r.trace, time.Now(), nil)
	r.tw.SetSenders("host", "server")
	opts := Options{Name: "demo", Stderr: &r.stderr, Trace: r.tw, Rules: parsed, ShutdownWait: time.Second,
		Tracker: session.Config{LateWindow: 2 * time.Second},
		OnEvent: func(ev event.Event, changes []session.Change, tr *session.Tracker) {
			r.mu.Lock()
			r.tr = tr
			r.mu.Unlock()
		}}
	if set != nil {
		set(&opts)
	}
	go func() {
		res, err := Run(context.Background(), Host{In: r.inR, Out: r.outW}, inflight, []string{"demo-server"}, opts)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		r.outW.Close()
		r.done <- res
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tp := &mcp.IOTransport{Reader: io.NopCloser(&wireReader{r: r.outR, w: &r.wire}), Writer: &wireWriter{w: r.inW, hw: &r.wire}}
	if r.cs, err = client.Connect(ctx, tp, nil); err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	t.Cleanup(func() { r.close() })
	return r
}

// call calls a demo tool with a host timeout.
func (r *ruleRun) call(tool string, seconds float64, steps int, timeout time.Duration) (*mcp.CallToolResult, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"seconds": seconds, "steps": steps}})
	return res, time.Since(start), err
}

// close ends the host's side and waits for the proxy; it returns what the
// proxy's stderr and trace hold.
func (r *ruleRun) close() Result {
	if r.closed {
		return Result{}
	}
	r.closed = true
	_ = r.cs.Close()
	r.inW.Close()
	var res Result
	select {
	case res = <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Fatal("the proxy did not end after the host closed")
	}
	r.inR.Close()
	r.outR.Close()
	_ = r.tw.Close()
	return res
}

// request returns the tracker's record of the host's request to tool.
func (r *ruleRun) request(tool string) *session.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; r.tr != nil && i < r.tr.Len(); i++ {
		if q := r.tr.At(i); q.Method == wire.MethodToolsCall && q.Target == tool {
			return q
		}
	}
	return nil
}

// waitStderr waits for stderr to say s.
func (r *ruleRun) waitStderr(s string) {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(r.stderr.String(), s) {
		if time.Now().After(deadline) {
			r.t.Fatalf("stderr never said %q:\n%s", s, r.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// traceHas reports whether a trace line holds every one of parts.
func traceHas(trace string, parts ...string) bool {
	for _, l := range strings.Split(trace, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

func isResponseTo(id wire.ID) func(wire.Message) bool {
	return func(m wire.Message) bool { return m.IsResponse() && m.ID == id }
}

// TestRuleDelay: the server's answer reaches the host the rule's delay
// after the server sent it, byte for byte, marked in the trace and on
// stderr; other calls are untouched.
func TestRuleDelay(t *testing.T) {
	r := startRules(t, "tools/call slow: delay 300ms")
	res, took, err := r.call("slow", 0.02, 1, 5*time.Second)
	if err != nil || res.IsError {
		t.Fatalf("the delayed call: %v %+v", err, res)
	}
	if took < 300*time.Millisecond {
		t.Errorf("the delayed call took %s, under the 300ms delay", took)
	}
	if _, took, err := r.call("stubborn", 0.02, 1, 5*time.Second); err != nil || took > 250*time.Millisecond {
		t.Errorf("a call no rule matches: %v after %s", err, took)
	}
	r.close()
	st := r.stderr.String()
	for _, want := range []string{
		`injected delay 300ms: holding the response to tools/call slow (id 2) for 300ms`,
		`injected delay 300ms: released the response to tools/call slow (id 2) after 300ms`,
	} {
		if !strings.Contains(st, want) {
			t.Errorf("stderr lacks %q:\n%s", want, st)
		}
	}
	tr := r.trace.String()
	if !traceHas(tr, `"dir":"in","by":"server","id":2`, `"injected":"delay 300ms"`, `"result"`) ||
		!traceHas(tr, `"event":"injected"`, `"injected":"delay 300ms"`, "released") ||
		!traceHas(tr, `"event":"injected"`, `matches tools/call slow (id 2)`) {
		t.Errorf("the trace does not mark the delay:\n%s", tr)
	}
	if traceHas(tr, `"target":"stubborn"`, "injected") {
		t.Errorf("the unmatched call is marked")
	}
	if q := r.request("slow"); q == nil || q.State != session.StateCompleted {
		t.Errorf("the tracker's tools/call slow: %+v", q)
	}
}

// TestRuleDropAndHold: a dropped answer never reaches the host, which
// times out and cancels; a held one reaches it only as the proxy ends.
func TestRuleDropAndHold(t *testing.T) {
	r := startRules(t, "tools/call slow: drop", "tools/call stubborn: hold")
	if _, _, err := r.call("slow", 0.01, 1, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the dropped call ended with %v, want the host's own timeout", err)
	}
	if _, _, err := r.call("stubborn", 0.01, 1, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the held call ended with %v, want the host's own timeout", err)
	}
	if _, ok := r.wire.find(false, isResponseTo(wire.IntID(2))); ok {
		t.Errorf("the host got the dropped response")
	}
	if _, ok := r.wire.find(false, isResponseTo(wire.IntID(3))); ok {
		t.Errorf("the host got the held response before the end")
	}
	// The host's cancels went through to the server, as always.
	for _, id := range []wire.ID{wire.IntID(2), wire.IntID(3)} {
		r.wire.await(t, true, func(m wire.Message) bool {
			c, err := wire.DecodeCancelled(m.Params)
			return m.Method == wire.NotifyCancelled && err == nil && c.RequestID == id
		})
	}
	// The host closes its stdin and keeps reading: the held answer is
	// passed on before the proxy's stdout ends.
	r.inW.Close()
	r.wire.await(t, false, isResponseTo(wire.IntID(3)))
	r.close()
	st := r.stderr.String()
	for _, want := range []string{
		`injected drop: dropped the response to tools/call slow (id 2): the host never gets it`,
		`injected hold: holding the response to tools/call stubborn (id 3) until released (the release key in inflight attach, or SIGUSR1) or the proxy ends`,
		`injected hold: released the response to tools/call stubborn (id 3) as the proxy ends, held`,
	} {
		if !strings.Contains(st, want) {
			t.Errorf("stderr lacks %q:\n%s", want, st)
		}
	}
	tr := r.trace.String()
	if !traceHas(tr, `"dir":"in","by":"server","id":2`, `"injected":"drop"`) || !traceHas(tr, `"dir":"in","by":"server","id":3`, `"injected":"hold"`) {
		t.Errorf("the trace does not mark the dropped and held responses:\n%s", tr)
	}
}

// TestRuleCancel: inflight cancels the call upstream on the host's
// behalf — notifications/cancelled with the request's ID to the server —
// and answers the host with an error saying so; the stubborn server's
// answer after that cancel is judged late and not passed on; the host's
// connection goes on working.
func TestRuleCancel(t *testing.T) {
	r := startRules(t, "tools/call stubborn: cancel 100ms")
	_, took, err := r.call("stubborn", 0.4, 4, 5*time.Second)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeCancelledByProxy || !strings.Contains(rpcErr.Message, "cancelled by inflight proxy") {
		t.Fatalf("the host's call ended with %v (%T), want error %d from inflight", err, err, CodeCancelledByProxy)
	}
	if took < 100*time.Millisecond || took > 350*time.Millisecond {
		t.Errorf("the host was answered after %s, want about 100ms", took)
	}
	r.waitStderr("after inflight's cancel: not passed on")
	if res, _, err := r.call("slow", 0.01, 1, 5*time.Second); err != nil || res.IsError {
		t.Errorf("a call after the cancel: %v", err)
	}
	r.close()
	if _, ok := r.wire.find(false, func(m wire.Message) bool { return m.Kind == wire.KindResult && m.ID == wire.IntID(2) }); ok {
		t.Errorf("the host got the server's answer after inflight's cancel")
	}
	q := r.request("stubborn")
	if q == nil || q.State != session.StateCancelled || q.Cancel == nil || q.Cancel.Cause != session.CauseUser ||
		q.Cancel.Signal != event.SignalNotification || !q.Late.Response {
		t.Errorf("the tracker's tools/call stubborn: %+v cancel %+v late %+v; want cancelled by inflight's notification, a late response", q, q.Cancel, q.Late)
	}
	tr := r.trace.String()
	for _, parts := range [][]string{
		{`"dir":"out","by":"inflight","id":2`, `"injected":"cancel 100ms"`, `"method":"notifications/cancelled"`, `"requestId":2`},
		{`"dir":"local","id":2,"event":"injected"`, `answered the host with error -32800: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32800`},
		{`"dir":"in","by":"server","id":2`, `"verdict":"late"`, `"injected":"cancel 100ms"`},
		{`"event":"cancel_sent"`, `"by":"inflight"`},
	} {
		if !traceHas(tr, parts...) {
			t.Errorf("the trace lacks a line with %q:\n%s", parts, tr)
		}
	}
	if !strings.Contains(r.stderr.String(), "injected cancel 100ms: sent the server notifications/cancelled for tools/call stubborn (id 2)") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}
}

// TestRuleCancelSilent: inflight cancels upstream and tells the host
// nothing; the host waits for its own timeout, and its own cancel follows.
func TestRuleCancelSilent(t *testing.T) {
	r := startRules(t, "tools/call stubborn: cancel-silent 50ms")
	_, took, err := r.call("stubborn", 0.15, 1, 400*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || took < 400*time.Millisecond {
		t.Fatalf("the host's call ended with %v after %s, want its own 400ms timeout", err, took)
	}
	r.waitStderr("after inflight's cancel: not passed on (the host was left waiting)")
	r.close()
	if _, ok := r.wire.find(false, isResponseTo(wire.IntID(2))); ok {
		t.Errorf("the host got an answer")
	}
	if !strings.Contains(r.stderr.String(), "the host is not told and waits for its own timeout") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}
}

// TestRuleRace: the answer is held until the host's own timeout cancel
// arrives, and released at that instant: the host reads the answer after
// it wrote its cancel — the crossing of the spec's timing section — while
// the server answered in time.
func TestRuleRace(t *testing.T) {
	r := startRules(t, "tools/call slow: race")
	if _, _, err := r.call("slow", 0.02, 1, 250*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the raced call ended with %v, want the host's own timeout", err)
	}
	resp := r.wire.await(t, false, isResponseTo(wire.IntID(2)))
	cancel := r.wire.await(t, true, func(m wire.Message) bool { return m.Method == wire.NotifyCancelled })
	if resp.at.Before(cancel.at) {
		t.Errorf("the host read the answer %s before its cancel: no crossing", cancel.at.Sub(resp.at))
	}
	if resp.msg.Kind != wire.KindResult || !strings.Contains(resp.raw, "slow finished") {
		t.Errorf("the host got %s, want the server's own answer", resp.raw)
	}
	r.close()
	if !strings.Contains(r.stderr.String(), "injected race: released the response to tools/call slow (id 2) the instant the host's cancel arrived") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}
	if q := r.request("slow"); q == nil || q.State != session.StateCompleted {
		t.Errorf("the tracker's tools/call slow: %+v; want completed: the server answered before the host's cancel", q)
	}
	if !traceHas(r.trace.String(), `"event":"injected"`, `"injected":"race"`, "crosses the host's cancel") {
		t.Errorf("trace:\n%s", r.trace.String())
	}
}

// TestRuleHeldWhenServerDies: the server answers (held by the rule) and
// dies; the proxy passes the held answer on, byte for byte with its CRLF,
// before the host sees the end of its stdout.
func TestRuleHeldWhenServerDies(t *testing.T) {
	hold, _ := ParseRule("tools/call: hold")
	cmd, env := helper(t, "answer-die")
	h := newHost(t)
	var stderr syncBuffer
	wait := run(t, h, cmd, Options{Env: env, Stderr: &stderr, Rules: []Rule{hold}})
	io.WriteString(h.inW, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`+"\n")
	res := wait()
	if res.End != EndServerExited {
		t.Errorf("end %v, want the server's exit", res.End)
	}
	if got, want := string(h.received()), `{"jsonrpc":"2.0","id":"a","result":{}}`+"\r\n"; got != want {
		t.Errorf("the host received %q, want the held answer %q", got, want)
	}
	if !strings.Contains(stderr.String(), `injected hold: released the response to tools/call x (id "a") as the proxy ends`) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestRuleNothingToDo: a cancel rule whose request is answered before its
// time passes the answer on and cancels nothing; a race whose host
// cancels before the answer passes the answer on at once.
func TestRuleNothingToDo(t *testing.T) {
	rules, err := ParseRules([]string{"tools/call quick: cancel 5s", "tools/call late: race"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got := dir + "/got"
	cmd, env := helper(t, "pong-after", "GOT="+got)
	h := newHost(t)
	var stderr syncBuffer
	wait := run(t, h, cmd, Options{Env: env, Stderr: &stderr, Rules: rules})
	io.WriteString(h.inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quick"}}`+"\n")
	io.WriteString(h.inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"late"}}`+"\n")
	io.WriteString(h.inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`+"\n")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(stderr.String(), "injected") < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	h.inW.Close()
	wait()
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	if got := string(h.received()); got != want {
		t.Errorf("the host received %q, want both answers %q", got, want)
	}
	if b, _ := os.ReadFile(got); strings.Count(string(b), "notifications/cancelled") != 1 {
		t.Errorf("the server got %q: want the host's one cancel and none of inflight's", b)
	}
	for _, want := range []string{
		"injected cancel 5s: the server answered tools/call quick (id 1) before the rule's cancel: passed on, nothing cancelled",
		"injected race: the host had cancelled tools/call late (id 2) before the server answered: nothing to race, passed on at once",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestGateCutsOnlyTheAnswer feeds the gate the same server output cut at
// every point: what reaches the host is the output without the marked
// request's answer (whose result holds the word "method"), byte for byte,
// however the reads fell.
func TestGateCutsOnlyTheAnswer(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"method\":\"x\"}"}],"method":1}}` + "\r\n"
	before := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":6,"result":{}}` + "\n"
	after := `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n" + `no newline at the end`
	all := before + answer + after
	drop, _ := ParseRule("tools/call: drop")
	for cut1 := 0; cut1 <= len(all); cut1 += 7 {
		for _, cut2 := range []int{cut1, min(cut1+1, len(all)), min(cut1+50, len(all)), len(all)} {
			var host bytes.Buffer
			q := newQueue(1 << 20)
			toHost := &lineWriter{w: &host}
			in := newInjector([]Rule{drop}, q, toHost, &lineWriter{w: io.Discard}, func() int64 { return 0 })
			req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`)
			in.hostLines([]line{{raw: req, total: len(req)}}, time.Now())
			g := &gate{in: in, out: toHost, max: 1 << 20}
			for _, part := range []string{all[:cut1], all[cut1:cut2], all[cut2:]} {
				if part != "" {
					if err := g.pass([]byte(part), time.Now()); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := g.pass(nil, time.Now()); err != nil {
				t.Fatal(err)
			}
			if got, want := host.String(), before+after; got != want {
				t.Fatalf("cut at %d and %d: the host got\n%q\nwant\n%q", cut1, cut2, got, want)
			}
		}
	}
}

// FuzzGate: whatever the server writes and however the reads fall, the
// host gets it byte for byte, less the one line a drop rule caught: the
// first complete line that is the marked request's answer.
func FuzzGate(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`+"\n"), 3, 20)
	f.Add([]byte("x\n{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"m\"}}\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\nend"), 10, 11)
	f.Add([]byte("\n\n\r\n{\"id\":7}"), 0, 1)
	drop, _ := ParseRule("tools/call: drop")
	f.Fuzz(func(t *testing.T, out []byte, cut1, cut2 int) {
		if cut1 < 0 || cut2 < 0 {
			return
		}
		cut1 %= len(out) + 1
		cut2 = cut1 + cut2%(len(out)-cut1+1)
		var want []byte
		caught := false
		rest := out
		for {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				want = append(want, rest...)
				break
			}
			l := rest[:i+1]
			rest = rest[i+1:]
			if m, err := wire.Decode(bytes.TrimRight(l, "\r\n")); !caught && err == nil && m.IsResponse() && m.ID == wire.IntID(7) {
				caught = true
				continue
			}
			want = append(want, l...)
		}
		var host bytes.Buffer
		toHost := &lineWriter{w: &host}
		in := newInjector([]Rule{drop}, newQueue(1<<20), toHost, &lineWriter{w: io.Discard}, func() int64 { return 0 })
		req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`)
		in.hostLines([]line{{raw: req, total: len(req)}}, time.Now())
		g := &gate{in: in, out: toHost, max: 1 << 20}
		for _, part := range [][]byte{out[:cut1], out[cut1:cut2], out[cut2:]} {
			if len(part) > 0 {
				if err := g.pass(part, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := g.pass(nil, time.Now()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(host.Bytes(), want) {
			t.Fatalf("the host got\n%q\nwant\n%q", host.Bytes(), want)
		}
	})
}
