package session

import (
	"fmt"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// Found in review: two legacy hosts at once, each with its request 2 in flight (go-sdk
// clients both count from 1). B's 2 is "forwarded, not followed"; the
// server's answer to B's 2 (no session on server lines) completes A's 2,
// and A's own answer is then a duplicate: the server is flagged for what
// it did not do, and A's call shows B's result.
func TestObserveSessionsOtherSessionAnswerTakenForFollowed(t *testing.T) {
	const (
		call2A   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slowA"}}`
		list2B   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		answer2B = `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`
		answer2A = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"A"}]}}`
	)
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0}, // A
		{10, "host", hostInit, 0}, {12, "server", serverInit, 0}, // B
		{20, "host", call2A, 0},
		{30, "host", list2B, 0}, // not followed (A's 2 in flight)
		{40, "server", answer2B, 0},
		{900, "server", answer2A, 0},
	}, []string{"", "", "", "", "sA", "sB", "sB", "sA"}) // the proxy stamps an answer with its POST's session
	r, _ := tr.Get(wire.IntID(2))
	if v := violationCodes(tr); len(v) != 0 || r.Ended != ms(900) {
		t.Errorf("violations %v; A's call 2 ended at %v (want 900ms, by A's own answer)", v, r.Ended.Sub(t0))
	}
}

// Found in review: the proxy reports a closure CancelGrace (250ms) after it, with the
// closure's time, but a resumption at once. A host that resumes within
// 250ms (a server's SSE retry: hint) is seen resuming before it closed,
// and flagged for a closure it recovered from.
func TestObserveSessionsResumeSeenBeforeClosure(t *testing.T) {
	tr := observeAll(t, []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 0}, {10, "host", hostCall1, 0}})
	// closed at 50; resumed at 150; the closure's line reaches the tracker at 300.
	tr.HostResumed(ms(150))
	tr.HostClosedStreamIn(wire.IntID(1), "", ms(50))
	tr.expire(ms(50 + 6000))
	if hostClosedFlagged(tr) {
		t.Error("flagged host_closed_stream_legacy though the host resumed a stream 100ms after the closure")
	}
}

// Found in review: host B's resumption clears host A's closure: A gave up on its
// request without a cancel and is not flagged.
func TestObserveSessionsResumeOfAnotherSessionClearsClosure(t *testing.T) {
	const call2A = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostInit, 0}, {12, "server", serverInit, 0},
		{20, "host", call2A, 0},
	}, []string{"", "", "", "", "sA"})
	tr.HostClosedStreamIn(wire.IntID(2), "sA", ms(50))
	tr.HostResumedIn("sB", ms(1000)) // host B's GET with Last-Event-ID
	tr.expire(ms(50 + 6000))
	if !hostClosedFlagged(tr) {
		t.Error("A's closure is not flagged: B's resumption cleared it")
	}
}

// Found in review: a legacy host after a modern one (the tracker's era is modern from
// the first host's _meta) reuses an ID within its own session: hostMayUse
// takes it as modern (t.conn.Era) and retires the first, no violation.
func TestObserveSessionsLegacyDuplicateAfterModernHost(t *testing.T) {
	const (
		modernCall = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		modernDone = `{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","content":[]}}`
	)
	tr := observeAll(t, []step{
		{0, "host", modernCall, 0}, {5, "server", modernDone, 0},
		{10, "host", hostInit, 0}, {12, "server", serverInit, 0},
		{20, "host", hostCall1, 0}, {30, "server", answer1, 0},
		{40, "host", hostCall1, 0}, // same session, same ID
	})
	if v := violationCodes(tr); len(v) != 1 || v[0] != ViolationHostDuplicateID {
		t.Errorf("violations %v, want %s: the legacy host used 1 twice in one session", v, ViolationHostDuplicateID)
	}
}

// Found in review: hostEvictedMax is one for all sessions: host A's evicted IDs make
// host B's new IDs "evicted", and B is flagged host_duplicate_id.
func TestObserveSessionsEvictedIDsOfAnotherSession(t *testing.T) {
	tr := NewTracker(Config{HistoryLimit: 32})
	obs := func(at int, kind event.Kind, raw, sid string) {
		ev := msgEvent(t, kind, at, raw)
		ev.SessionID = sid
		tr.Observe(ev)
	}
	obs(0, event.Sent, hostInit, "")
	obs(1, event.Received, serverInit, "")
	obs(2, event.Sent, hostInit, "") // host B connects
	obs(3, event.Received, serverInit, "")
	for i := 1; i <= 200; i++ { // host A works on
		obs(10+i, event.Sent, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i), "sA")
		obs(10+i, event.Received, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tools":[]}}`, i), "")
	}
	obs(500, event.Sent, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "sB") // B's first request
	if v := violationCodes(tr); len(v) != 0 {
		t.Errorf("violations %v: B's request 1 is its first; A's evicted 1 is not B's", v)
	}
}

// Found in review: a modern host's request with the ID of a legacy host's request in
// flight: different eras, so different hosts; the modern host is flagged
// host_duplicate_id for the other host's ID.
func TestObserveSessionsModernIDOfLegacyInFlight(t *testing.T) {
	const modernCall1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0},
		{30, "host", modernCall1, 0},
	}, []string{"", "", "sA", ""})
	if v := violationCodes(tr); len(v) != 0 {
		t.Errorf("violations %v: the modern host never used 1 before", v)
	}
}

// Found in review: a host's tools/call answered with a task handle (legacy: the
// request carried task) is StateTask; a host request has no deadline
// (LimitNone, zero time), and expire's StateTask case takes the zero
// deadline as passed: the tracker "times out" the host's task itself.
func TestObserveSessionsHostTaskTimedOutByTracker(t *testing.T) {
	const (
		taskCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`
		handle   = `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T00:00:00Z","ttl":60000,"pollInterval":1000}}}`
	)
	tr := observeAll(t, []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 0}, {10, "host", taskCall, 0}, {20, "server", handle, 0}})
	r, _ := tr.Get(wire.IntID(1))
	if r.State != StateTask {
		t.Skipf("state %s: not a task here", r.State)
	}
	tr.expire(ms(30))
	if r.State != StateTask || r.Cancel != nil {
		t.Errorf("the host's task is %s, cancel %+v: the tracker never cancels a host's request", r.State, r.Cancel)
	}
}

// Found in review: one host, restarted: its request 5 was left in flight (legacy: a
// closure is no cancel). The new session's 5 is "forwarded, not
// followed", and the server's answer to it completes the old 5.
func TestObserveSessionsRestartedHostAnswerTakenForOld(t *testing.T) {
	const (
		call5    = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"old"}}`
		call5New = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"new"}}`
		answer5  = `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"for new"}]}}`
	)
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", call5, 0},
		{100, "host", hostInit, 0}, {102, "server", serverInit, 0},
		{110, "host", call5New, 0}, {120, "server", answer5, 0},
	}, []string{"", "", "s1", "", "", "s2", "s2"})
	if r, _ := tr.Get(wire.IntID(5)); r.Target == "old" && r.State == StateCompleted {
		t.Errorf("the old session's 5 (%s) completed by the answer to the new session's 5", r.Target)
	}
}

// Found in review: host A's cancel of its own 2 (crossing its answer) after host B's
// 2 took the ID: hostCancel looks the ID up without the session, and
// cancels B's request; B's answer is then judged after a cancel.
func TestObserveSessionsCancelOfOtherSessionsRetiredID(t *testing.T) {
	const (
		call2A   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`
		answer2  = `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`
		call2B   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`
		cancel2A = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`
	)
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostInit, 0}, {12, "server", serverInit, 0},
		{20, "host", call2A, 0}, {30, "server", answer2, 0},
		{31, "host", call2B, 0},
		{32, "host", cancel2A, 0}, // A's cancel crossed A's answer
	}, []string{"", "", "", "", "sA", "", "sB", "sA"})
	if r, _ := tr.Get(wire.IntID(2)); r.Target != "b" || r.Cancel != nil {
		t.Errorf("B's request 2 (%s) has cancel %+v: A's cancel of its own 2 was applied to it", r.Target, r.Cancel)
	}
}

// Found in review: after a host's task (the tracker begins task work for it: a
// cancel, a listen) taskDue is set and only taskRequests clears it, which
// an observing tracker's Due never calls: NextDeadline stays in the past, and the proxy's
// recorder wakes every millisecond for good.
func TestObserveSessionsHostTaskDeadlineStaysDue(t *testing.T) {
	const (
		taskCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`
		handle   = `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T00:00:00Z","ttl":60000,"pollInterval":1000}}}`
		call2    = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`
		cancel2  = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`
	)
	tr := observeAll(t, []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 0}, {10, "host", taskCall, 0}, {20, "server", handle, 0},
		{30, "host", call2, 0}, {40, "host", cancel2, 0}})
	for at := 100; at <= 60000; at += 10000 {
		tr.Due(ms(at))
	}
	if next, ok := tr.NextDeadline(); ok && !next.After(ms(60000)) {
		t.Errorf("NextDeadline %v, in the past after every Due up to 60s: the proxy's recorder spins", next.Sub(t0))
	}
}

// A legacy host's initialize comes in a POST without a session (none
// known, ""), its later requests in its Mcp-Session-Id: one host. Its
// cancel of the initialize is still flagged. A modern host's POSTs are
// each their own session ("post N").
func TestObserveSessionsInitializeIsTheHostsOwn(t *testing.T) {
	const cancel0 = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"oops"}}`
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0},
		{5, "host", cancel0, 0},
	}, []string{"", "sA"})
	if v := violationCodes(tr); len(v) != 1 || v[0] != ViolationHostCancelledInitialize {
		t.Errorf("violations %v, want %s", v, ViolationHostCancelledInitialize)
	}
	if !otherSession(PostSession+"1", PostSession+"2") || otherSession("", "sA") || !otherSession("sA", "sB") || !otherSession(PostSession+"1", "sA") {
		t.Error("otherSession: two modern POSTs are two exchanges, an unknown session may be anyone's, two names are two")
	}
}
