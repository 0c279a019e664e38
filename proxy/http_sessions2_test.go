package proxy

import (
	"testing"
	"time"

	"inflight/session"
	"inflight/wire"
)

// Found in review, through the proxy: two legacy hosts at once, each with its call 2 in
// flight (go-sdk clients count from 1). B's call is "not followed", but
// its answer (server lines carry no session) completes A's call, and A's
// own answer is then the server's duplicate_response.
func TestHTTPSessionsTwoHostsSameIDInFlight(t *testing.T) {
	up, _ := demoInProcess(t)
	rp := startHTTPProxy(t, up)
	rh := &ruleHTTP{runningHTTP: rp}
	a := rh.connect(t, "2025-11-25")
	b := rh.connect(t, "2025-11-25")
	done := make(chan error, 1)
	go func() { _, _, err := callTool(a, "slow", 0.6, 1, 5*time.Second); done <- err }()
	time.Sleep(150 * time.Millisecond)
	if _, _, err := callTool(b, "slow", 0.01, 1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, ch := range rp.changes {
		if ch.Kind == session.ChangeViolation {
			t.Errorf("flagged: %s: %s", ch.Violation.Code, ch.Violation.Detail)
		}
	}
	for i := 0; i < rp.tr.Len(); i++ {
		if q := rp.tr.At(i); q.Method == wire.MethodToolsCall {
			if d := q.Ended.Sub(q.Sent); d < 500*time.Millisecond {
				t.Errorf("call %s (A's 0.6s slow) completed after %v: by B's answer", q.ID, d)
			}
		}
	}
}

// Found in review: a rule's cancel of host B's call 2 (followed by the injector by
// session and ID) reaches the recorder as an injection naming the ID
// alone: the tracker's RequestCancel(2) cancels host A's call 2, and A's
// timely answer is judged after a cancel nobody sent it.
func TestHTTPSessionsRuleCancelOfOtherSessionsID(t *testing.T) {
	up, _ := demoInProcess(t)
	rules, err := ParseRules([]string{"tools/call silent: cancel 50ms"})
	if err != nil {
		t.Fatal(err)
	}
	rp := startHTTPProxy(t, up, func(o *Options) { o.Rules = rules })
	rh := &ruleHTTP{runningHTTP: rp}
	a := rh.connect(t, "2025-11-25")
	b := rh.connect(t, "2025-11-25")
	done := make(chan error, 1)
	go func() { _, _, err := callTool(a, "slow", 0.8, 1, 5*time.Second); done <- err }()
	time.Sleep(150 * time.Millisecond)
	_, _, _ = callTool(b, "silent", 0.5, 1, 2*time.Second) // the rule cancels it
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for i := 0; i < rp.tr.Len(); i++ {
		q := rp.tr.At(i)
		t.Logf("%s %s %s %s cancel=%+v", q.ID, q.Method, q.Target, q.State, q.Cancel)
		if q.Method == wire.MethodToolsCall && q.Target == "slow" && (q.State != session.StateCompleted || q.Cancel != nil || q.Late.Response) {
			t.Errorf("A's call %s (slow, never cancelled): %s, cancel %+v", q.ID, q.State, q.Cancel)
		}
	}
	for _, ch := range rp.changes {
		if ch.Kind == session.ChangeViolation || ch.Kind == session.ChangeLate {
			t.Logf("change %v %s %+v", ch.Kind, ch.ID, ch.Violation)
		}
	}
}
