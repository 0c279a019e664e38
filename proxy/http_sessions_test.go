package proxy

import (
	"testing"
	"time"

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
