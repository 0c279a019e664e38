package call

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/demo"
	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/redact"
	"inflight/runner"
	"inflight/target"
	"inflight/trace"
	"inflight/wire"

	"github.com/charmbracelet/x/exp/golden"
)

// The process path: the client starts the child, reads its stderr, and
// stops it at the end.
func TestCallProcess(t *testing.T) {
	for _, e := range testserver.Eras {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
			rep, code, _ := runCall(t, Options{
				Target:      testserver.DemoProcess(t, e),
				Method:      "tools/call",
				Params:      testserver.ToolParams(t, "slow", `{"seconds":1,"steps":10}`),
				CancelAfter: 250 * time.Millisecond,
				TracePath:   tracePath,
			})
			if code != exitcode.Cancelled || rep.Cancel == nil || *rep.Cancel.Signal != "notifications/cancelled" || rep.Era != e.Name {
				t.Fatalf("exit %d era %s cancel %+v", code, rep.Era, rep.Cancel)
			}
			data, err := os.ReadFile(tracePath)
			if err != nil {
				t.Fatal(err)
			}
			// The child's log lines arrive as stderr events.
			if !bytes.Contains(data, []byte(`"event":"stderr"`)) || !bytes.Contains(data, []byte("slow #1")) {
				t.Errorf("no stderr from the child in the trace:\n%s", data)
			}
		})
	}
}

// With no version forced, the client detects the demo as modern on both
// transports.
func TestCallDetectsEra(t *testing.T) {
	for _, tc := range testserver.Transports {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			rep, code, _ := runCall(t, Options{Target: tc.Target(t, testserver.Era{}), Method: "tools/list"})
			if code != 0 || rep.Era != "modern" || rep.ProtocolVersion != wire.VersionModern {
				t.Errorf("exit %d era %s version %s", code, rep.Era, rep.ProtocolVersion)
			}
		})
	}
}

// Ctrl+C (the context) cancels the request properly and waits for its fate.
func TestCallInterrupted(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stdout, stderr bytes.Buffer
		live := &signalWriter{seen: "progress", ch: make(chan struct{})}
		go func() {
			<-live.ch
			cancel()
		}()
		code := Run(ctx, Options{Target: tc.Target(t, e), Method: "tools/call", Params: testserver.ToolParams(t, "slow", `{"seconds":2,"steps":10}`),
			JSON: true, LateWindow: testserver.Late, Live: live}, &stdout, &stderr)
		var rep Report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatal(err, stdout.String())
		}
		if code != exitcode.Cancelled || rep.Cancel == nil || rep.Cancel.Cause != "interrupted" || rep.Cancel.Signal == nil {
			t.Errorf("exit %d cancel %+v", code, rep.Cancel)
		}
	})
}

// signalWriter closes ch the first time something containing seen is
// written to it.
type signalWriter struct {
	mu   sync.Mutex
	seen string
	ch   chan struct{}
	done bool
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && bytes.Contains(p, []byte(w.seen)) {
		w.done = true
		close(w.ch)
	}
	return len(p), nil
}

// dyingServer answers server/discover, then dies when it gets a tools/call.
func dyingServer(t *testing.T) target.Target {
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return target.Target{Pipes: func(context.Context) (*client.Pipes, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer inR.Close()
			defer outW.Close()
			sc := bufio.NewScanner(inR)
			for sc.Scan() {
				m, err := wire.Decode(sc.Bytes())
				if err != nil {
					continue
				}
				switch m.Method {
				case wire.MethodDiscover:
					res := `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
					outW.Write(append(wire.ResultResponse(m.ID, json.RawMessage(res)), '\n'))
				case wire.MethodToolsCall:
					return
				}
			}
		}()
		return &client.Pipes{Stdin: inW, Stdout: outR}, nil
	}}
}

func TestCallConnectionLost(t *testing.T) {
	rep, code, _ := runCall(t, Options{Target: dyingServer(t), Method: "tools/call", Params: testserver.ToolParams(t, "x", "")})
	if code != exitcode.ConnectionLost || rep.State != "connection_lost" || rep.Error == nil || !rep.Error.Local {
		t.Errorf("exit %d state %s error %+v", code, rep.State, rep.Error)
	}
	if rep.Late == nil {
		t.Error("late is null for a lost request")
	}
}

// Secrets from -H never reach --json, the human summary, the trace or error
// messages, even when the server echoes them.
func TestCallRedaction(t *testing.T) {
	const secret = "sk-live-0123456789"
	tg := testserver.HTTP(t, testserver.Modern)
	tg.Headers = http.Header{"X-Api-Key": {secret}}
	params := testserver.ToolParams(t, "fail", `{"message":"bad key `+secret+`"}`)

	tracePath := filepath.Join(t.TempDir(), "t.jsonl")
	var stdout, stderr bytes.Buffer
	Run(context.Background(), Options{Target: tg, Method: "tools/call", Params: params, JSON: true, TracePath: tracePath}, &stdout, &stderr)
	if strings.Contains(stdout.String(), secret) || !strings.Contains(stdout.String(), redact.Placeholder) {
		t.Errorf("--json: %s", stdout.String())
	}
	data, _ := os.ReadFile(tracePath)
	if bytes.Contains(data, []byte(secret)) || !bytes.Contains(data, []byte(redact.Placeholder)) {
		t.Errorf("trace: %s", data)
	}
	if _, bad, err := trace.ReadAll(bytes.NewReader(data)); err != nil || len(bad) > 0 {
		t.Errorf("redacted trace unreadable: %v %v", err, bad)
	}

	stdout.Reset()
	Run(context.Background(), Options{Target: tg, Method: "tools/call", Params: params, Live: &stdout}, &stdout, &stderr)
	if strings.Contains(stdout.String(), secret) || !strings.Contains(stdout.String(), redact.Placeholder) {
		t.Errorf("human output: %s", stdout.String())
	}

	stderr.Reset()
	bad := target.Target{URL: "http://127.0.0.1:1/mcp?api_key=" + secret}
	Run(context.Background(), Options{Target: bad, Method: "tools/list"}, &stdout, &stderr)
	if strings.Contains(stderr.String(), secret) {
		t.Errorf("error message: %s", stderr.String())
	}
}

// The human output shows progress and the summary, with server text made
// inert.
func TestCallHumanOutput(t *testing.T) {
	var out bytes.Buffer
	code := Run(context.Background(), Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
		Params: testserver.ToolParams(t, "stubborn", `{"seconds":0.4,"steps":4}`), CancelAfter: 150 * time.Millisecond, LateWindow: time.Second,
		Live: &out}, &out, io.Discard)
	if code != exitcode.Cancelled {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"connected to an in-process stdio server", "progress 1/4", "cancel requested after",
		"sent notifications/cancelled", "late progress", "LATE RESPONSE", "state       cancelled (exit 4)", "late result (not the request's result)"} {
		testserver.MustContain(t, out.String(), want)
	}

	out.Reset()
	Run(context.Background(), Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
		Params: testserver.ToolParams(t, "fail", `{"message":"red \u001b[31m alert \u202e"}`), Live: &out}, &out, io.Discard)
	if strings.ContainsAny(out.String(), "\x1b\u202e") {
		t.Errorf("escape sequence reached the output: %q", out.String())
	}
	testserver.MustContain(t, out.String(), "␛[31m")
}

// The JSON summary's shape (its keys and the JSON types of their values)
// is a contract documented in docs/call.md; the golden files pin it for a
// completed call and for a cancelled call with a late response.
func TestCallReportShape(t *testing.T) {
	cases := map[string]Options{
		"completed": {Method: "tools/call", Params: testserver.ToolParams(t, "slow", `{"seconds":0.1,"steps":2}`)},
		"late": {Method: "tools/call", Params: testserver.ToolParams(t, "stubborn", `{"seconds":0.3,"steps":3}`),
			CancelAfter: 150 * time.Millisecond, LateWindow: time.Second},
		"rpc_error":  {Method: "tools/call", Params: testserver.ToolParams(t, "fail", `{"rpc":true}`)},
		"tool_error": {Method: "tools/call", Params: testserver.ToolParams(t, "fail", `{"message":"broken"}`)},
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			o := cases[name]
			o.Target = testserver.Stdio(t, testserver.Modern)
			o.JSON = true
			if o.LateWindow == 0 {
				o.LateWindow = testserver.Late
			}
			var stdout bytes.Buffer
			Run(context.Background(), o, &stdout, io.Discard)
			var v any
			if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(shape(v), "", "  ")
			golden.RequireEqual(t, append(got, '\n'))
		})
	}
}

// shape replaces every value by its JSON type, keeping object keys, so the
// golden files pin the structure and not the timings. result stays opaque:
// it is the server's.
func shape(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k == "result" && x != nil {
				out[k] = "object (the server's result)"
				continue
			}
			out[k] = shape(x)
		}
		return out
	case []any:
		if len(v) == 0 {
			return []any{}
		}
		return []any{shape(v[0])}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return nil
	}
	return "?"
}

// On modern Streamable HTTP the cancel is closing the request's stream:
// nothing is sent, and the summary must not say that something was.
func TestCallHumanOutputStreamClosed(t *testing.T) {
	var out bytes.Buffer
	code := Run(context.Background(), Options{Target: testserver.HTTP(t, testserver.Modern), Method: "tools/call",
		Params: testserver.ToolParams(t, "slow", `{"seconds":2,"steps":20}`), CancelAfter: 150 * time.Millisecond, LateWindow: time.Second},
		&out, io.Discard)
	if code != exitcode.Cancelled {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	testserver.MustContain(t, out.String(), "closed the request's stream")
	if strings.Contains(out.String(), "sent stream_closed") {
		t.Errorf("the summary says something was sent:\n%s", out.String())
	}
}

// A second Ctrl+C stops waiting for the cancel's fate: call still prints
// its JSON object, and the trace on disk holds the run, long before the
// late window would have ended.
func TestCallSecondInterruptReportsAtOnce(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	hurry := make(chan struct{})
	tracePath := filepath.Join(t.TempDir(), "t.jsonl")
	o := Options{Target: testserver.Stdio(t, testserver.Modern), Method: wire.MethodToolsCall,
		Params: testserver.ToolParams(t, "stubborn", `{"seconds":30,"steps":30}`), JSON: true,
		LateWindow: 10 * time.Minute, TracePath: tracePath}
	var stdout bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(runner.WithHurry(ctx, hurry), o, &stdout, io.Discard) }()

	// The trace reaches the file while the run is still going.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(tracePath)
		if bytes.Contains(b, []byte(`"notifications/progress"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress in the trace file while the run goes on:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	interrupt() // first Ctrl+C: cancel, then watch the late window
	time.Sleep(100 * time.Millisecond)
	close(hurry) // second: stop watching
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("call kept waiting after the second Ctrl+C")
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("no JSON object after the second Ctrl+C (%v): %q", err, stdout.String())
	}
	if code != exitcode.Cancelled || rep.State != "cancelled" || rep.Cancel == nil {
		t.Errorf("exit %d, state %s, cancel %+v", code, rep.State, rep.Cancel)
	}
	b, _ := os.ReadFile(tracePath)
	if !bytes.Contains(b, []byte(`"event":"cancel_sent"`)) {
		t.Errorf("the trace lacks the cancel:\n%s", b)
	}
}

// call subscriptions/listen shows the acknowledgement and each notification
// as it comes, and the JSON object counts them.
func TestCallListenShowsNotifications(t *testing.T) {
	const tick = 40 * time.Millisecond
	ticking := func() target.Target {
		srv := demo.New(demo.Options{TickInterval: tick})
		t.Cleanup(func() { srv.Close() })
		return testserver.StdioOf(t, testserver.Modern, srv)
	}
	o := Options{Target: ticking(), Method: wire.MethodSubscriptionsListen,
		Params:      json.RawMessage(`{"notifications":{"resourceSubscriptions":["demo://clock"]}}`),
		CancelAfter: 10 * tick, LateWindow: testserver.Late}
	rep, code, _ := runCall(t, o)
	if code != exitcode.Cancelled || rep.Subscription == nil || !rep.Subscription.Acknowledged || rep.Subscription.Notifications < 2 {
		t.Fatalf("exit %d, subscription %+v", code, rep.Subscription)
	}
	var live bytes.Buffer
	o.JSON, o.Live = false, &live
	o.Target = ticking()
	Run(context.Background(), o, io.Discard, io.Discard)
	testserver.MustContain(t, live.String(), "acknowledged: the subscription stays open")
	testserver.MustContain(t, live.String(), "notification #1: notifications/resources/updated demo://clock")
	testserver.MustContain(t, live.String(), "notification #2: ")
}
