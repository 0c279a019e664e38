package session

import (
	"fmt"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// TestObserveFollowsABoundedSetOfHostRequests: a host that leaves 20 000
// requests unanswered (stdio's flood of the kind that once took a proxy
// to gigabytes) is followed up to MaxFollowed open requests; the oldest
// go, counted, and what comes later for them is old news — neither an
// unknown response nor an unknown progress token — while the newest are
// followed as ever.
func TestObserveFollowsABoundedSetOfHostRequests(t *testing.T) {
	const n, limit = 20000, 1000
	tr := NewTracker(Config{MaxFollowed: limit, HistoryLimit: 500})
	for i := 1; i <= n; i++ {
		raw := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t%d"}}}`, i, i)
		tr.Observe(msgEvent(t, event.Sent, i, raw))
		if got := tr.Counts().InFlight; got > limit {
			t.Fatalf("after %d requests %d are followed open, over the bound of %d", i, got, limit)
		}
	}
	c := tr.Counts()
	if c.InFlight+c.Unfollowed != n || c.Unfollowed < n-limit {
		t.Fatalf("counts %+v: want every request either followed or counted as no longer followed", c)
	}
	if tr.Len() > limit {
		t.Fatalf("history holds %d requests, over the bound", tr.Len())
	}
	if _, ok := tr.Get(mustID(t, `"r1"`)); ok {
		t.Fatal("the oldest request is still followed")
	}
	newest, ok := tr.Get(mustID(t, fmt.Sprintf(`"r%d"`, n)))
	if !ok || newest.State != StatePending {
		t.Fatalf("the newest request is not followed: %v %+v", ok, newest)
	}
	// The server answers the last ones dropped at last and reports
	// progress on them; the host cancels one: nothing to flag, nothing
	// followed again. (The memory of the dropped is bounded too: a string
	// ID dropped thousands of requests ago is forgotten.)
	at, d := n+10, c.Unfollowed
	tr.Observe(msgEvent(t, event.Received, at, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t%d","progress":1}}`, d)))
	tr.Observe(msgEvent(t, event.Received, at+1, fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","result":{"content":[]}}`, d)))
	tr.Observe(msgEvent(t, event.Sent, at+2, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r%d"}}`, d-1)))
	if total := tr.Violations().Total(); total != 0 {
		t.Fatalf("%d violations for traffic of requests no longer followed: %+v", total, tr.Violations().At(0))
	}
	// The newest is answered and judged as ever.
	tr.Observe(msgEvent(t, event.Received, at+3, fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","result":{"content":[]}}`, n)))
	if newest.State != StateCompleted {
		t.Fatalf("the newest request is %s after its answer", newest.State)
	}
	// A clone keeps what the original knows of the dropped.
	cl := tr.Clone()
	cl.Observe(msgEvent(t, event.Received, at+4, fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","result":{}}`, d-2)))
	if cl.Violations().Total() != 0 || cl.Counts().Unfollowed != c.Unfollowed {
		t.Fatalf("the clone forgot the requests no longer followed: %+v", cl.Counts())
	}
}

func mustID(t *testing.T, raw string) wire.ID {
	t.Helper()
	id, err := wire.ParseID([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return id
}
