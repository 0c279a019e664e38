package proxy

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
)

// TestAnswerNeverRecordedBeforeItsRequest: the host writes requests in
// bulk to a server that answers each at once. Each forwarder hands the
// recorder copies of what it read; if the host's side did that only
// after writing to the server, the server's answer could be queued
// first — the recorder would then see a response to an ID the host never
// issued (unknown_response_id) and, at the end, the host leaving with
// that request in flight (host_abandoned). Seen with
// the MCP Inspector's CLI as the host, once in six runs.
func TestAnswerNeverRecordedBeforeItsRequest(t *testing.T) {
	t.Run("plain", func(t *testing.T) { answerAfterRequest(t, nil) })
	// With a rule (which acts on none of these), the host's side goes
	// through pumpVia and the injector's look at each line.
	r, err := ParseRule("tools/call never: delay 1ms")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("rule watching", func(t *testing.T) { answerAfterRequest(t, []Rule{r}) })
}

func answerAfterRequest(t *testing.T, rules []Rule) {
	const n = 20000
	h := newHost(t)
	exe, env := helper(t, "pong")
	var flags []string
	wait := run(t, h, exe, Options{Env: env, Rules: rules, OnEvent: func(_ event.Event, changes []session.Change, _ *session.Tracker) {
		for _, ch := range changes {
			if ch.Kind == session.ChangeViolation && len(flags) < 5 {
				flags = append(flags, ch.Violation.Code+": "+ch.Violation.Detail)
			}
		}
	}})
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	if _, err := h.inW.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		h.mu.Lock()
		got := bytes.Count(h.got.Bytes(), []byte("\n"))
		h.mu.Unlock()
		if got >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host got %d answers of %d", got, n)
		}
	}
	h.inW.Close()
	wait()
	if len(flags) != 0 {
		t.Errorf("the recorder saw answers before their requests: %q", flags)
	}
}
