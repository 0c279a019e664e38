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
	return observeSessions(t, steps, nil)
}

// observeSessions is observeAll with each host line's HTTP session
// (sessions[i] for steps[i]; "" or missing: none).
func observeSessions(t *testing.T, steps []step, sessions []string) *Tracker {
	t.Helper()
	tr := NewTracker(Config{})
	for i, s := range steps {
		kind := event.Sent
		if s.from == "server" {
			kind = event.Received
		}
		ev := msgEvent(t, kind, s.at, s.raw)
		if i < len(sessions) {
			ev.SessionID = sessions[i]
		}
		tr.Observe(ev)
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
		if strings.Contains(tr.Log().At(i).Text, "still in flight from another session") {
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

// Two legacy hosts through one HTTP proxy at the same time, each its own
// session (go-sdk's clients both count from 1): an ID one session used is
// new in the other, whatever the order of their initializes; and one
// host's closed stream is not the other's (found in review).
func TestObserveTwoLegacySessionsAtOnce(t *testing.T) {
	const (
		call2A   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`
		answer2A = `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`
		call2B   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`
		call3A   = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a3"}}`
	)
	steps := []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0}, // host A
		{10, "host", hostInit, 0}, {12, "server", serverInit, 0}, // host B
		{20, "host", call2A, 0}, {30, "server", answer2A, 0}, // A goes on
		{40, "host", call2B, 0}, // B's first call: 2 is new in B's session
		{50, "host", call3A, 0},
	}
	tr := observeSessions(t, steps, []string{"", "", "", "", "sA", "", "sB", "sA"})
	if v := violationCodes(tr); len(v) != 0 {
		t.Fatalf("violations %v: host B never reused an ID of its own session", v)
	}
	if r, ok := tr.Get(wire.IntID(2)); !ok || r.Target != "b" {
		t.Fatalf("request 2 is %+v: host B's call is not followed", r)
	}
	// A's closure of its own 3 is A's; a closure in session sA of ID 2
	// (A's, finished) is not B's 2.
	tr.HostClosedStreamIn(wire.IntID(2), "sA", ms(60))
	tr.expire(ms(60 + 5000))
	if hostClosedFlagged(tr) {
		t.Error("a closure in session sA was judged against session sB's request 2")
	}
	// Within one session a reused ID is still one.
	tr = observeSessions(t, append(steps[:6:6], step{40, "host", call2B, 0}), []string{"", "", "", "", "sA", "", "sA"})
	if v := violationCodes(tr); len(v) != 1 || v[0] != ViolationHostDuplicateID {
		t.Errorf("violations %v, want %s: sA used 2 twice", v, ViolationHostDuplicateID)
	}
}

// The integer 3 and the string "3" are two IDs: retired, they get two
// names, each found by its own (found in review).
func TestObserveRetiredNamesDoNotCollide(t *testing.T) {
	const (
		callInt  = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"int","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		doneInt  = `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}`
		callStr  = `{"jsonrpc":"2.0","id":"3","method":"tools/call","params":{"name":"str","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		doneStr  = `{"jsonrpc":"2.0","id":"3","result":{"resultType":"complete","content":[]}}`
		callLast = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"last","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	)
	tr := observeAll(t, []step{
		{10, "host", callInt, 0}, {20, "server", doneInt, 0},
		{30, "host", callStr, 0}, {40, "server", doneStr, 0},
		{50, "host", callLast, 0}, // retires the integer 3
		{60, "host", callStr, 0},  // retires the string "3"
	})
	seen := map[string]bool{}
	for i := 0; i < tr.Len(); i++ {
		r := tr.At(i)
		if got, ok := tr.Get(r.ID); !ok || got != r {
			t.Errorf("request %s (%s) is not found by its own ID", r.ID, r.Target)
		}
		if seen[r.ID.String()] {
			t.Errorf("two requests named %s", r.ID)
		}
		seen[r.ID.String()] = true
	}
}

// A legacy host after a modern one (two inflight calls through one HTTP
// proxy, the second at 2025-11-25) is judged by its own era: its closed
// stream is no cancel, flagged once it resumes nothing, and the server's
// legacy answers are not held to modern rules (found in review).
func TestObserveLegacyHostAfterModern(t *testing.T) {
	const (
		modernCall = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		modernDone = `{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","content":[]}}`
	)
	tr := observeAll(t, []step{
		{0, "host", modernCall, 0}, {5, "server", modernDone, 0},
		{10, "host", hostInit, 0}, {12, "server", serverInit, 0},
		{20, "host", hostCall1, 0},
	})
	tr.HostClosedStream(wire.IntID(1), ms(30))
	tr.expire(ms(30 + 5000))
	r, _ := tr.Get(wire.IntID(1))
	if v := violationCodes(tr); len(v) != 1 || v[0] != ViolationHostClosedStreamLegacy || r.Cancel != nil {
		t.Errorf("violations %v, request %s cancel %+v; want it flagged %s and left in flight",
			v, r.State, r.Cancel, ViolationHostClosedStreamLegacy)
	}
}

// A rename is a change of its own, at the time of the request that took
// the ID, so that what a consumer keeps by ID (the view's selection, a
// trace reader) can follow it.
func TestObserveRenameIsAChange(t *testing.T) {
	tr := NewTracker(Config{})
	for _, s := range []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0}, {20, "server", answer1Done, 0},
		{100, "host", hostInit, 0}, {102, "server", serverInit, 0},
	} {
		kind := event.Sent
		if s.from == "server" {
			kind = event.Received
		}
		tr.Observe(msgEvent(t, kind, s.at, s.raw))
	}
	changes := tr.Observe(msgEvent(t, event.Sent, 110, hostCall1B))
	for _, ch := range changes {
		if ch.Kind == ChangeRenamed {
			if ch.Was != wire.IntID(1) || ch.ID != wire.StringID("1·1") || !ch.At.Equal(ms(110)) {
				t.Errorf("rename %+v, want 1 → 1·1 at 110ms", ch)
			}
			return
		}
	}
	t.Errorf("no ChangeRenamed among %+v", changes)
}

// A rename re-keys every log entry of the earlier request, however long it
// lived, and only its: the walk goes back to a little before it began.
func TestObserveRenameReachesTheWholeRequest(t *testing.T) {
	tr := observeAll(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0}, {15_000, "server", prog(1), 0}, {30_000, "server", answer1Done, 0},
		{60_000, "host", hostInit, 0}, {60_002, "server", serverInit, 0},
		{60_010, "host", hostCall1B, 0},
	})
	old, ok := tr.Get(wire.StringID("1·1"))
	if !ok {
		t.Fatal("the earlier request 1 was not renamed")
	}
	for i := 0; i < tr.Log().Len(); i++ {
		e := tr.Log().At(i)
		if e.ID == wire.IntID(1) && e.Time.Before(ms(60_010)) {
			t.Errorf("a log entry of the earlier request 1 at %v kept its ID", e.Time.Sub(t0))
		}
	}
	if old.State != StateCompleted {
		t.Errorf("the earlier request: %s", old.State)
	}
}
