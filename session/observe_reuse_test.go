package session

import (
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// observeAll feeds a proxied conversation (host and server lines at their
// milliseconds) to a new tracker.
func observeAll(t *testing.T, steps []step) *Tracker {
	t.Helper()
	tr := NewTracker(Config{})
	for _, s := range steps {
		kind := event.Sent
		if s.from == "server" {
			kind = event.Received
		}
		tr.Observe(msgEvent(t, kind, s.at, s.raw))
	}
	return tr
}

const (
	answer1Done = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"first"}]}}`
	answer1Two  = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"second"}]}}`
	hostCall1B  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`
)

// A legacy host that connects again (a second initialize: the next
// `inflight call` through an HTTP proxy, a restarted desktop app) begins a
// new session whose IDs start over: no violation, both calls followed, and
// the first keeps its row, raw bytes and log under "1·1".
func TestObserveNewSessionReusesIDs(t *testing.T) {
	tr := observeAll(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0}, {20, "server", answer1Done, 0},
		{100, "host", hostInit, 0}, {102, "server", serverInit, 0},
		{110, "host", hostCall1B, 0}, {120, "server", answer1Two, 0},
	})
	if v := violationCodes(tr); len(v) != 0 {
		t.Fatalf("violations %v: a new session may use the IDs of an earlier one", v)
	}
	first, ok := tr.Get(wire.StringID("1·1"))
	if !ok || first.Target != "slow" || first.State != StateCompleted {
		t.Fatalf("the first session's call under 1·1: %+v %v", first, ok)
	}
	second, ok := tr.Get(wire.IntID(1))
	if !ok || second.Target != "echo" || second.State != StateCompleted {
		t.Fatalf("the second session's call under 1: %+v %v", second, ok)
	}
	if raw, _ := tr.RawResponse(first.ID); !strings.Contains(string(raw), "first") {
		t.Errorf("the first call's response is %s", raw)
	}
	if raw, _ := tr.RawResponse(second.ID); !strings.Contains(string(raw), "second") {
		t.Errorf("the second call's response is %s", raw)
	}
	if _, ok := tr.Get(wire.StringID("0·1")); !ok {
		t.Error("the first initialize is not kept under 0·1")
	}
	var firstLog, secondLog int
	for i := 0; i < tr.Log().Len(); i++ {
		switch e := tr.Log().At(i); e.ID {
		case first.ID:
			firstLog++
		case second.ID:
			secondLog++
		}
	}
	if firstLog == 0 || secondLog == 0 {
		t.Errorf("log entries: %d of the first call, %d of the second; want each its own", firstLog, secondLog)
	}
	if tr.Counts().InFlight != 0 {
		t.Errorf("counts %+v", tr.Counts())
	}
}

// Within one legacy session a reused ID stays a violation, and a request
// of an earlier session still in flight keeps its ID: the new one is only
// said, not followed, and not blamed on the host.
func TestObserveReuseWithinASession(t *testing.T) {
	tr := observeAll(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0}, {20, "server", answer1Done, 0},
		{30, "host", hostCall1B, 0},
	})
	if v := violationCodes(tr); len(v) != 1 || v[0] != ViolationHostDuplicateID {
		t.Fatalf("violations %v, want one %s", v, ViolationHostDuplicateID)
	}
	tr = observeAll(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0},
		{100, "host", hostInit, 0}, {102, "server", serverInit, 0},
		{110, "host", hostCall1B, 0},
	})
	if v := violationCodes(tr); len(v) != 0 {
		t.Fatalf("violations %v: another session's request in flight is not the host's fault", v)
	}
	if r, _ := tr.Get(wire.IntID(1)); r == nil || r.Target != "slow" || !r.State.IsActive() {
		t.Fatalf("request 1: %+v, want the first session's slow call, still followed", r)
	}
	said := false
	for i := 0; i < tr.Log().Len(); i++ {
		if strings.Contains(tr.Log().At(i).Text, "still in flight from an earlier session") {
			said = true
		}
	}
	if !said {
		t.Error("the log does not say the second call is not followed")
	}
}

// In the modern era an ID only has to differ from those in flight: a
// finished request's ID may be used again; one in flight may not.
func TestObserveModernReuse(t *testing.T) {
	const (
		modernCall1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		modernDone  = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`
		modernCall2 = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	)
	tr := observeAll(t, []step{
		{10, "host", modernCall1, 0}, {20, "server", modernDone, 0},
		{30, "host", modernCall1, 0}, {40, "server", modernDone, 0},
		{50, "host", modernCall2, 0}, {60, "host", modernCall2, 0},
	})
	if v := violationCodes(tr); len(v) != 1 || v[0] != ViolationHostDuplicateID {
		t.Fatalf("violations %v, want one (request 2 while 2 was in flight)", v)
	}
	if r, ok := tr.Get(wire.StringID("1·1")); !ok || r.State != StateCompleted {
		t.Errorf("the first request 1 under 1·1: %+v", r)
	}
	if r, ok := tr.Get(wire.IntID(1)); !ok || r.State != StateCompleted {
		t.Errorf("the second request 1: %+v", r)
	}
}

// A proxy may see a modern host after a legacy one (two `inflight call`s
// through one HTTP proxy): the modern request's own era decides that its
// ID may follow a finished one, whatever the first host's era was.
func TestObserveModernHostAfterLegacy(t *testing.T) {
	const modernCall1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	tr := observeAll(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0}, {20, "server", answer1Done, 0},
		{30, "host", modernCall1, 0},
	})
	if v := violationCodes(tr); len(v) != 0 {
		t.Fatalf("violations %v", v)
	}
	if r, ok := tr.Get(wire.IntID(1)); !ok || r.Target != "echo" {
		t.Fatalf("request 1: %+v, want the modern host's echo", r)
	}
}
