package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests in this file drive ServeStdio with a raw peer that writes JSON
// lines itself, because the go-sdk client would hide exactly what they check:
// which messages are (and are not) on the wire after a cancellation.

var eras = []era{modern, legacy}

func TestStdioDiscoverListsModernVersion(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	resp := p.call(1, "server/discover", modern.params(nil, ""))
	if resp.Error != nil {
		t.Fatalf("server/discover: %s", resp)
	}
	var res struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Instructions      string                     `json:"instructions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Meta              map[string]struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.SupportedVersions, modernVersion) || !slices.Contains(res.SupportedVersions, legacyVersion) {
		t.Errorf("supportedVersions = %v, want %s and %s among them", res.SupportedVersions, modernVersion, legacyVersion)
	}
	if info := res.Meta["io.modelcontextprotocol/serverInfo"]; info.Name != serverName || info.Version != serverVersion {
		t.Errorf("serverInfo = %+v", info)
	}
	if res.Instructions != instructions {
		t.Errorf("instructions = %q", res.Instructions)
	}
	for _, c := range []string{"tools", "resources", "prompts"} {
		if _, ok := res.Capabilities[c]; !ok {
			t.Errorf("capabilities lack %q: %v", c, res.Capabilities)
		}
	}
}

func TestStdioLegacyInitialize(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	resp := p.initialize()
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities struct {
			Resources struct {
				Subscribe bool `json:"subscribe"`
			} `json:"resources"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != legacyVersion || res.ServerInfo.Name != serverName || !res.Capabilities.Resources.Subscribe {
		t.Errorf("initialize result = %s", resp)
	}
	// The session now serves legacy requests.
	resp = p.call(2, "tools/call", legacy.params(map[string]any{"name": toolFail, "arguments": args("message", "x")}, ""))
	if text, isErr := resp.toolText(t); !isErr || text != "x" {
		t.Errorf("fail after initialize = %s", resp)
	}
}

// TestStdioSlowCancelled checks that a cancelled slow sends no response and
// no progress past the step at which it says it stopped.
func TestStdioSlowCancelled(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			s, logs := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			const steps = 50
			p.send(toolCall(e, 10, toolSlow, args("seconds", float64(steps)*testStep.Seconds(), "steps", steps), "tok"))
			for seen := 0; seen < 2; {
				m := p.next()
				if m.isResponse(10) {
					t.Fatalf("slow answered before it was cancelled: %s", m)
				}
				if _, ok := m.asProgress(t, "tok"); ok {
					seen++
				}
			}
			p.send(cancelled(10))
			// The log names the call by the client's progress token too.
			stopped := stepOf(t, p.waitLog(logs, `slow #\d+ \(progress token "tok"\): cancelled after \S+ at step (\d+)/50; no response sent`))
			after := append(p.barrier(e, 11), p.quiet(quietPeriod)...)
			for _, m := range after {
				if m.isResponse(10) {
					t.Errorf("a cancelled slow was answered: %s", m)
				}
				if pr, ok := m.asProgress(t, "tok"); ok && pr.Progress > stopped {
					t.Errorf("progress %v sent after slow stopped at step %v: %s", pr.Progress, stopped, m)
				}
			}
		})
	}
}

// TestStdioStubbornAnswersLate checks that stubborn keeps reporting progress
// after a cancellation and then answers in full.
func TestStdioStubbornAnswersLate(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			s, logs := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			const steps = 8
			p.send(toolCall(e, 10, toolStubborn, args("seconds", float64(steps)*testStep.Seconds(), "steps", steps), "tok"))
			p.until(func(m msg) bool { _, ok := m.asProgress(t, "tok"); return ok })
			p.send(cancelled(10))
			ignoredAt := stepOf(t, p.waitLog(logs, `stubborn #\d+(?: \(progress token [^)]+\))?: cancellation ignored at step (\d+)/8`))

			before, resp := p.response(10)
			last := 0.0
			for _, m := range before {
				if pr, ok := m.asProgress(t, "tok"); ok {
					last = pr.Progress
				}
			}
			if last != steps || ignoredAt >= steps {
				t.Errorf("last progress = %v (cancellation seen at step %v), want progress up to %d after the cancel", last, ignoredAt, steps)
			}
			if text, isErr := resp.toolText(t); isErr || !strings.HasPrefix(text, "stubborn finished 8 steps in ") {
				t.Errorf("late response = %s", resp)
			}
			logs.waitFor(t, `stubborn #\d+(?: \(progress token [^)]+\))?: finished 8 steps .* \(answering anyway, after the client cancelled\)`)
		})
	}
}

func TestStdioSilent(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e)+"/answers", func(t *testing.T) {
			s, _ := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			p.send(toolCall(e, 10, toolSilent, args("seconds", 0.05), "tok"))
			before, resp := p.response(10)
			for _, m := range before {
				if _, ok := m.asProgress(t, "tok"); ok {
					t.Errorf("silent sent progress: %s", m)
				}
			}
			if text, _ := resp.toolText(t); !strings.HasPrefix(text, "silent answered after ") {
				t.Errorf("silent result = %s", resp)
			}
		})
		t.Run(string(e)+"/cancelled", func(t *testing.T) {
			s, logs := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			p.send(toolCall(e, 10, toolSilent, args("seconds", 60), "tok"))
			p.waitLog(logs, `silent #\d+(?: \(progress token [^)]+\))?: started`)
			p.send(cancelled(10))
			p.waitLog(logs, `silent #\d+(?: \(progress token [^)]+\))?: cancelled after .*; no response sent`)
			for _, m := range append(p.barrier(e, 11), p.quiet(quietPeriod)...) {
				if m.isResponse(10) {
					t.Errorf("a cancelled silent was answered: %s", m)
				}
			}
		})
	}
}

func TestStdioFlood(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e)+"/complete", func(t *testing.T) {
			s, _ := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			const count = 300
			p.send(toolCall(e, 10, toolFlood, args("count", count), "tok"))
			before, resp := p.response(10)
			n := 0
			for _, m := range before {
				pr, ok := m.asProgress(t, "tok")
				if !ok {
					continue
				}
				n++
				want := fmt.Sprintf("notification %d of %d", n, count)
				if pr.Progress != float64(n) || pr.Total != count || pr.Message != want {
					t.Fatalf("progress %d = %+v, want progress %d, total %d, message %q", n, pr, n, count, want)
				}
			}
			if n != count {
				t.Errorf("got %d progress notifications, want %d", n, count)
			}
			if text, _ := resp.toolText(t); !strings.HasPrefix(text, "flood sent 300 progress notifications") {
				t.Errorf("flood result = %s", resp)
			}
		})
		t.Run(string(e)+"/cancelled", func(t *testing.T) {
			s, logs := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			p.send(toolCall(e, 10, toolFlood, args("count", 1000000), "tok"))
			for seen := 0; seen < 10; {
				if _, ok := p.next().asProgress(t, "tok"); ok {
					seen++
				}
			}
			p.send(cancelled(10))
			stopped := stepOf(t, p.waitLog(logs, `flood #\d+(?: \(progress token [^)]+\))?: cancelled after \S+ at notification (\d+)/1000000`))
			for _, m := range append(p.barrier(e, 11), p.quiet(quietPeriod)...) {
				if m.isResponse(10) {
					t.Errorf("a cancelled flood was answered: %s", m)
				}
				if pr, ok := m.asProgress(t, "tok"); ok && pr.Progress > stopped {
					t.Fatalf("progress %v sent after flood stopped at %v", pr.Progress, stopped)
				}
			}
		})
	}
}

func TestStdioFail(t *testing.T) {
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			s, _ := newTestServer(t)
			p := startStdio(t, s)
			p.open(e)
			resp := p.call(10, "tools/call", e.params(map[string]any{"name": toolFail}, ""))
			if text, isErr := resp.toolText(t); !isErr || text != "the demo tool failed on purpose" {
				t.Errorf("fail = %s, want a tool error result with the default message", resp)
			}
			resp = p.call(11, "tools/call", e.params(map[string]any{"name": toolFail, "arguments": args("message", "boom", "rpc", true)}, ""))
			if resp.Error == nil || resp.Error.Code != failCode || resp.Error.Message != "boom" {
				t.Errorf("fail rpc = %s, want JSON-RPC error %d boom", resp, failCode)
			}
		})
	}
}

// listenRequest opens a modern subscriptions/listen for the clock.
func listenRequest(id int) map[string]any {
	return request(id, methodListen, modern.params(map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{clockURI}},
	}, ""))
}

// checkAck checks that m is the acknowledgement of listen id, for the clock.
func checkAck(t *testing.T, m msg, id int) {
	t.Helper()
	if m.Method != notificationAcknowledged || m.subscriptionID() != fmt.Sprint(id) {
		t.Fatalf("first message of subscription %d = %s, want its acknowledgement", id, m)
	}
	var p struct {
		Notifications struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || !slices.Equal(p.Notifications.ResourceSubscriptions, []string{clockURI}) {
		t.Errorf("acknowledgement = %s, want resourceSubscriptions [%s]", m, clockURI)
	}
}

// isClockUpdate reports whether m is notifications/resources/updated for the
// clock on subscription id.
func isClockUpdate(m msg, id int) bool {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return m.Method == notificationResourceUpdated && p.URI == clockURI && m.subscriptionID() == fmt.Sprint(id)
}

// checkListenResult checks the graceful end of listen id.
func checkListenResult(t *testing.T, m msg, id int) {
	t.Helper()
	var r struct {
		ResultType string `json:"resultType"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.ResultType != "complete" || m.subscriptionID() != fmt.Sprint(id) {
		t.Errorf("listen %d ended with %s, want a complete result carrying its subscriptionId", id, m)
	}
}

func TestStdioListenEndedByServer(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	p.send(listenRequest(10))
	_, first := p.until(func(m msg) bool { return m.subscriptionID() == "10" })
	checkAck(t, first, 10)
	p.until(func(m msg) bool { return isClockUpdate(m, 10) })

	p.send(toolCall(modern, 11, toolEndSubscriptions, nil, ""))
	var ended, tool bool
	for !ended || !tool {
		m := p.next()
		switch {
		case m.isResponse(10):
			checkListenResult(t, m, 10)
			ended = true
		case m.isResponse(11):
			if text, _ := m.toolText(t); text != "ended 1 subscription(s)" {
				t.Errorf("end_subscriptions = %s", m)
			}
			tool = true
		case ended && m.subscriptionID() == "10":
			t.Errorf("message for subscription 10 after its final result: %s", m)
		}
	}
	for _, m := range p.quiet(3 * testTick) {
		if m.subscriptionID() == "10" || m.isResponse(10) {
			t.Errorf("message for subscription 10 after its final result: %s", m)
		}
	}
}

func TestStdioListenCancelledByClient(t *testing.T) {
	s, logs := newTestServer(t)
	p := startStdio(t, s)
	p.send(listenRequest(10))
	_, first := p.until(func(m msg) bool { return m.subscriptionID() == "10" })
	checkAck(t, first, 10)
	p.until(func(m msg) bool { return isClockUpdate(m, 10) })

	p.send(cancelled(10))
	p.waitLog(logs, `listen #\d+: cancelled by the client .*; no response sent`)
	for _, m := range p.barrier(modern, 11) {
		if m.isResponse(10) {
			t.Errorf("a cancelled listen was answered: %s", m)
		}
	}
	// Once the server reports the listen ended, nothing more may follow for
	// it: the barrier above flushed what it wrote before.
	for _, m := range p.quiet(3 * testTick) {
		if m.isResponse(10) || m.subscriptionID() == "10" {
			t.Errorf("message for a cancelled listen: %s", m)
		}
	}
}

func TestStdioLegacySubscribe(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	p.initialize()
	if resp := p.call(2, "resources/subscribe", map[string]any{"uri": clockURI}); resp.Error != nil {
		t.Fatalf("resources/subscribe: %s", resp)
	}
	_, m := p.until(func(m msg) bool { return m.Method == notificationResourceUpdated })
	if m.subscriptionID() != "" || !strings.Contains(string(m.Params), clockURI) {
		t.Errorf("legacy update = %s", m)
	}
	if resp := p.call(3, "resources/read", map[string]any{"uri": clockURI}); !strings.Contains(string(resp.Result), "tick ") {
		t.Errorf("resources/read = %s", resp)
	}
	if resp := p.call(4, "resources/unsubscribe", map[string]any{"uri": clockURI}); resp.Error != nil {
		t.Errorf("resources/unsubscribe: %s", resp)
	}
}

// TestServeStdioStopsOnContext checks that a cancelled ServeStdio returns at
// once even with a tool running, and writes nothing more.
func TestServeStdioStopsOnContext(t *testing.T) {
	s, logs := newTestServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(ctx, inR, outW) }()
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(io.Discard, outR)
	}()

	line, _ := json.Marshal(toolCall(modern, 1, toolStubborn, args("seconds", 60), ""))
	if _, err := inW.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, `stubborn #\d+(?: \(progress token [^)]+\))?: started`)
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeStdio = %v, want context.Canceled", err)
		}
	case <-time.After(eventually):
		t.Fatal("ServeStdio did not return after its context was cancelled")
	}
	<-read // ServeStdio closed its output
	logs.waitFor(t, `stubborn #\d+(?: \(progress token [^)]+\))?: connection gone`)
}

func TestServeStdioAfterClose(t *testing.T) {
	s, _ := newTestServer(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	if err := s.ServeStdio(context.Background(), inR, io.Discard); !errors.Is(err, errClosed) {
		t.Errorf("ServeStdio after Close = %v, want errClosed", err)
	}
}

// TestCloseEndsStdioListen checks that Close ends an open listen gracefully:
// its final result goes out before the connection closes.
func TestCloseEndsStdioListen(t *testing.T) {
	s, _ := newTestServer(t)
	p := startStdio(t, s)
	p.send(listenRequest(10))
	_, first := p.until(func(m msg) bool { return m.subscriptionID() == "10" })
	checkAck(t, first, 10)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, final := p.response(10)
	checkListenResult(t, final, 10)
	if rest := p.quiet(eventually); len(rest) > 0 {
		t.Errorf("messages after the final result: %v", rest)
	}
}
