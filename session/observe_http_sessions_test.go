package session

import (
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// A legacy host on a server that gives no Mcp-Session-Id (sessions are
// optional in legacy Streamable HTTP: every stateless server): the proxy
// knows no session for its POSTs (only a modern POST is one of its own).
// Its notifications/cancelled, POSTed apart from the call, is the host's
// cancel of its call (found in review: it had been taken for another
// session's).
func TestObserveHTTPSessionsStatelessLegacyCancel(t *testing.T) {
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0},
		{50, "host", hostCancel1, 0},
	}, []string{"", "", "", ""})
	r, _ := tr.Get(wire.IntID(1))
	if r.State != StateCancelRequested || r.Cancel == nil || r.Cancel.Cause != CauseHost {
		t.Errorf("call 1: %s, cancel %+v; want the host's cancel", r.State, r.Cancel)
	}
	// Its stream's closure after the cancel is then flagged as one without a cancel.
	tr.HostClosedStreamIn(wire.IntID(1), "", ms(60))
	tr.expire(ms(60 + 6000))
	if hostClosedFlagged(tr) {
		t.Error("flagged host_closed_stream_legacy though the host sent notifications/cancelled")
	}
}

// The same host reusing an ID within its one (stateless) session: a duplicate.
func TestObserveHTTPSessionsStatelessLegacyDuplicate(t *testing.T) {
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostCall1, 0}, {20, "server", answer1, 0},
		{30, "host", hostCall1, 0},
	}, []string{"", "", "", "", ""})
	if v := violationCodes(tr); len(v) != 1 || v[0] != ViolationHostDuplicateID {
		t.Errorf("violations %v, want %s", v, ViolationHostDuplicateID)
	}
}

// A modern host (go-sdk's client) closes its call's stream and also POSTs
// notifications/cancelled (in a POST of its own): DESIGN, the notification
// moves the cancel's time to the earlier of the two.
func TestObserveHTTPSessionsModernCancelNotificationPostedApart(t *testing.T) {
	const (
		call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		canc = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"timeout"}}`
	)
	tr := observeSessions(t, []step{{0, "host", call, 0}, {100, "host", canc, 0}},
		[]string{PostSession + "1", PostSession + "2"})
	tr.HostClosedStreamIn(wire.IntID(7), PostSession+"1", ms(200))
	r, _ := tr.Get(wire.IntID(7))
	if r.Cancel == nil || !r.Cancel.At.Equal(ms(100)) || r.Cancel.Signal != event.SignalStreamClosed {
		t.Errorf("cancel %+v; want the host's, at 100ms (its notification), signal stream closed", r.Cancel)
	}
}

// Two modern POSTs with one ID in flight: over HTTP another host's and
// this host's own reuse cannot be told apart (the era has no sessions), so
// it is not flagged; the log says the second is not followed and why. (On
// stdio, one host, it is flagged: TestObserveModernReuse.)
func TestObserveHTTPSessionsModernDuplicateInFlight(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	tr := observeSessions(t, []step{{0, "host", call, 0}, {10, "host", call, 0}}, []string{PostSession + "1", PostSession + "2"})
	if v := violationCodes(tr); len(v) != 0 {
		t.Errorf("violations %v: one host's reuse cannot be told from two hosts' here", v)
	}
	said := false
	for i := 0; i < tr.Log().Len(); i++ {
		if strings.Contains(tr.Log().At(i).Text, "another host, or this one using the ID again") {
			said = true
		}
	}
	if !said {
		t.Error("the log does not say the second is not followed, and why")
	}
}

// B's request 2, not followed (A's 2 in flight), carries its own progress
// token: the server's progress for it is no fault of the server's.
func TestObserveHTTPSessionsProgressOfUnfollowedRequest(t *testing.T) {
	const (
		callA = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"pa"}}}`
		callB = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":"pb"}}}`
		progB = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"pb","progress":1}}`
	)
	tr := observeSessions(t, []step{
		{0, "host", hostInit, 0}, {2, "server", serverInit, 0},
		{10, "host", hostInit, 0}, {12, "server", serverInit, 0},
		{20, "host", callA, 0}, {30, "host", callB, 0}, {40, "server", progB, 0},
	}, []string{"", "", "", "", "sA", "sB", "sB"})
	if v := violationCodes(tr); len(v) != 0 {
		t.Errorf("violations %v: the server flagged for progress of a request the host did send", v)
	}
}
