package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/session"
	"inflight/wire"
)

// TestHTTPHostsOneAfterAnother: hosts that connect one after another
// through one HTTP proxy (go-sdk's client, a new session each, whose IDs
// start over) are no host reusing IDs: nothing is flagged and every call
// is followed to its end, in both eras and with the eras mixed.
func TestHTTPHostsOneAfterAnother(t *testing.T) {
	up, _ := demoInProcess(t)
	rp := startHTTPProxy(t, up)
	rh := &ruleHTTP{runningHTTP: rp}
	versions := []string{"2025-11-25", "2025-11-25", "", ""}
	for i, v := range versions {
		cs := rh.connect(t, v)
		if _, _, err := callTool(cs, "slow", 0.01, 1, 5*time.Second); err != nil {
			t.Fatalf("host %d (%q): %v", i+1, v, err)
		}
		_ = cs.Close()
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
	calls := 0
	for i := 0; i < rp.tr.Len(); i++ {
		if q := rp.tr.At(i); q.Method == wire.MethodToolsCall {
			calls++
			if q.State != session.StateCompleted {
				t.Errorf("call %s: %s, want completed", q.ID, q.State)
			}
		}
	}
	if calls != len(versions) {
		t.Errorf("%d calls followed, want %d (one per host)", calls, len(versions))
	}
}

// TestHTTPTwoHostsAtOnce: two legacy hosts (go-sdk's clients, both
// counting from 1) connected to one HTTP proxy at the same time are two
// sessions: IDs one uses are new in the other, so nothing is flagged; a
// call is followed unless the other host has one with the same ID in
// flight at that moment, which the log says.
func TestHTTPTwoHostsAtOnce(t *testing.T) {
	up, _ := demoInProcess(t)
	rp := startHTTPProxy(t, up)
	rh := &ruleHTTP{runningHTTP: rp}
	a := rh.connect(t, "2025-11-25")
	b := rh.connect(t, "2025-11-25")
	for i := 0; i < 2; i++ {
		for _, cs := range []*mcp.ClientSession{a, b} {
			if _, _, err := callTool(cs, "slow", 0.01, 1, 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
	_ = a.Close()
	_ = b.Close()
	time.Sleep(100 * time.Millisecond)
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, ch := range rp.changes {
		if ch.Kind == session.ChangeViolation {
			t.Errorf("flagged: %s: %s", ch.Violation.Code, ch.Violation.Detail)
		}
	}
	calls := 0
	for i := 0; i < rp.tr.Len(); i++ {
		if q := rp.tr.At(i); q.Method == wire.MethodToolsCall && q.State == session.StateCompleted {
			calls++
		}
	}
	if calls != 4 {
		t.Errorf("%d calls followed to completion, want 4 (one after another, never two with one ID in flight)", calls)
	}
}

// TestHTTPClosureOfAnEarlierRequestWithTheID: a modern host whose answer a
// drop rule kept gives up (its stream closed, reported CancelGrace later);
// meanwhile the next host's request took the ID, the first being over.
// The closure is the first request's, already over: the second is not
// cancelled by it (seen in tmux: "cancelled 0ms" on the new row).
func TestHTTPClosureOfAnEarlierRequestWithTheID(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	// The next host's request is still in flight when the closure comes.
	up := newJSONUpstream(t, func(body string) time.Duration {
		if strings.Contains(body, "tools/list") {
			return 600 * time.Millisecond
		}
		return 0
	})
	rules, err := ParseRules([]string{"tools/call: drop"})
	if err != nil {
		t.Fatal(err)
	}
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.Rules = rules })
	const v = "2026-07-28"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `"}`
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rp.url,
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x",`+meta+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", v)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.ReadAll(resp.Body) // the drop: nothing comes, the host gives up
		resp.Body.Close()
	}
	// Within the grace: the next host's request with ID 2.
	if resp, _, _ := post(t, rp.url, v, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list: %s", resp.Status)
	}
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	r, ok := rp.tr.Get(wire.IntID(2))
	if !ok || r.Method != wire.MethodToolsList || r.State != session.StateCompleted || r.Cancel != nil {
		t.Fatalf("request 2: %+v; want the tools/list, completed, never cancelled", r)
	}
}

// TestHTTPModernHostThenLegacyAtOnce: a modern host that gives up on its
// call (its stream closed: its cancel) and a legacy host that comes at
// once with the same ID are both followed to their own ends: a modern
// closure is reported at once (only a legacy one waits CancelGrace for
// the notifications/cancelled posted with it), and each modern POST is a
// session of its own, so the legacy call is not mistaken for it.
func TestHTTPModernHostThenLegacyAtOnce(t *testing.T) {
	up, _ := demoInProcess(t)
	rp := startHTTPProxy(t, up)
	rh := &ruleHTTP{runningHTTP: rp}
	modern := rh.connect(t, "")
	if _, _, err := callTool(modern, "stubborn", 0.6, 3, 100*time.Millisecond); err == nil {
		t.Fatal("the modern call did not time out")
	}
	_ = modern.Close()
	legacy := rh.connect(t, "2025-11-25")
	if _, _, err := callTool(legacy, "slow", 0.05, 1, 5*time.Second); err != nil {
		t.Fatalf("the legacy call: %v", err)
	}
	_ = legacy.Close()
	time.Sleep(CancelGrace + 100*time.Millisecond)
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, ch := range rp.changes {
		if ch.Kind == session.ChangeViolation {
			t.Errorf("flagged: %s: %s", ch.Violation.Code, ch.Violation.Detail)
		}
	}
	fates := map[string]session.State{}
	for i := 0; i < rp.tr.Len(); i++ {
		if q := rp.tr.At(i); q.Method == wire.MethodToolsCall {
			fates[q.Target] = q.State
		}
	}
	if fates["stubborn"] != session.StateCancelled || fates["slow"] != session.StateCompleted {
		t.Errorf("fates %v: want the modern stubborn cancelled by its closure, the legacy slow completed", fates)
	}
}
