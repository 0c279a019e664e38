package session

import (
	"testing"

	"inflight/event"
	"inflight/wire"
)

// TestObserveHostReusesAToken: a host may use a progress token again once
// the request that had it is over. Here request 2 had token 2 (its own
// ID) and finished; request 5 then takes token 2. The server's progress
// for token 2 is request 5's — not a late one of request 2's, which would
// be flagged progress_after_completion against the server and leave
// request 5 with none.
func TestObserveHostReusesAToken(t *testing.T) {
	tr := NewTracker(Config{})
	for _, s := range []struct {
		kind event.Kind
		at   int
		raw  string
	}{
		{event.Sent, 0, hostInit},
		{event.Received, 10, serverInit},
		{event.Sent, 20, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":2}}}`},
		{event.Received, 30, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}`},
		{event.Received, 40, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		{event.Sent, 50, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":2}}}`},
		{event.Received, 60, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}`},
		{event.Received, 70, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":2}}`},
	} {
		tr.Observe(msgEvent(t, s.kind, s.at, s.raw))
	}
	first, second := tr.byID[wire.IntID(2)], tr.byID[wire.IntID(5)]
	if first == nil || second == nil {
		t.Fatal("the host's requests were not tracked")
	}
	if first.State != StateCompleted || first.Progress.Count != 1 {
		t.Errorf("request 2: %s with %d progress, want completed with its 1", first.State, first.Progress.Count)
	}
	if second.Progress.Count != 2 {
		t.Errorf("request 5 has %d progress, want the 2 sent for the token it took", second.Progress.Count)
	}
	for i := 0; i < tr.Violations().Len(); i++ {
		v := tr.Violations().At(i)
		t.Errorf("violation %s: %s", v.Code, v.Detail)
	}
	// A late progress for a token no active request holds still goes to
	// the latest request that had it.
	tr.Observe(msgEvent(t, event.Received, 80, `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`))
	tr.Observe(msgEvent(t, event.Received, 90, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":3}}`))
	if got, ok := tr.ByProgressToken(wire.IntID(2)); !ok || got != second {
		t.Errorf("token 2 after both ended names %+v, want request 5", got)
	}
}
