package session

import (
	"slices"
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// A step of a proxied conversation: the host wrote (host) or the server
// wrote (server) raw at ms(at); or the host went away (gone).
type step struct {
	at     int
	from   string // "host", "server", "gone", "closed", "expire"
	raw    string
	offset int64 // StreamEnd: where a server line ends, or the server output a host cancel passed
}

const (
	hostInit    = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	serverInit  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"2"}}}`
	hostCall1   = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p1"}}}`
	hostCancel1 = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timeout"}}`
	answer1     = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
)

func prog(n int) string {
	return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":` + string(rune('0'+n)) + `}}`
}

// TestObserveHostRequests follows a host's requests through a proxy on a
// fixed clock: states, progress by the host's own token, the host's cancel
// judged, and what the server sends after it judged crossed or late by
// session's one definition (crossing.go).
func TestObserveHostRequests(t *testing.T) {
	type want struct {
		id         wire.ID
		state      State
		progress   int
		cause      CancelCause
		late       bool // a late (not crossed) response
		crossed    bool // a crossed response
		progAfter  int  // late progress
		progCrossd int
	}
	cases := []struct {
		name       string
		steps      []step
		want       []want
		violations []string
		era        event.Era
	}{
		{
			name:  "answered with progress",
			steps: []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 100}, {10, "host", hostCall1, 0}, {11, "server", prog(1), 200}, {12, "server", prog(2), 300}, {20, "server", answer1, 400}},
			want:  []want{{id: wire.IntID(0), state: StateCompleted}, {id: wire.IntID(1), state: StateCompleted, progress: 2}},
			era:   event.EraLegacy,
		},
		{
			// The answer took 10 ms, so the round trip is 10 ms and the
			// crossing window 5 ms; a server that answers 40 ms after the
			// host's cancel ignored it.
			name: "host cancels, server answers late",
			steps: []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 100},
				{10, "host", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, 0}, {20, "server", `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`, 200},
				{30, "host", hostCall1, 0}, {40, "host", hostCancel1, 200}, {41, "server", prog(1), 300}, {80, "server", prog(2), 400}, {80, "server", answer1, 500}},
			want: []want{{id: wire.IntID(1), state: StateCancelled, cause: CauseHost, late: true, progAfter: 1, progCrossd: 1}},
		},
		{
			// What the server had written before the cancel passed (it ends
			// within the 500 bytes) crossed it, however late it is read.
			name: "position: the answer was in the pipe",
			steps: []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 100},
				{10, "host", hostCall1, 0}, {40, "host", hostCancel1, 500}, {90, "server", answer1, 450}},
			want: []want{{id: wire.IntID(1), state: StateCancelled, cause: CauseHost, crossed: true}},
		},
		{
			name: "host cancels initialize and an unknown ID",
			steps: []step{{0, "host", hostInit, 0}, {1, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`, 0},
				{2, "server", serverInit, 100}, {3, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`, 100}},
			want:       []want{{id: wire.IntID(0), state: StateCompleted}},
			violations: []string{ViolationHostCancelledInitialize, ViolationHostCancelledUnknown},
		},
		{
			name: "host gives up without cancelling",
			steps: []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 100}, {10, "host", hostCall1, 0},
				{11, "host", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`, 0}, {12, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, 100},
				{50, "gone", "", 0}, {60, "closed", "", 0}},
			want: []want{{id: wire.IntID(1), state: StateConnectionLost}, {id: wire.IntID(2), state: StateCancelled, cause: CauseHost}},
			// Only request 1: request 2 was cancelled.
			violations: []string{ViolationHostAbandoned},
		},
		{
			name:       "duplicate ID, and a cancel's late window ends",
			steps:      []step{{0, "host", hostCall1, 0}, {1, "host", hostCall1, 0}, {2, "host", hostCancel1, 0}, {2 + 5000, "expire", "", 0}},
			want:       []want{{id: wire.IntID(1), state: StateCancelled, cause: CauseHost}},
			violations: []string{ViolationHostDuplicateID},
		},
		{
			name: "modern era from the host's _meta, the server from server/discover",
			steps: []step{{0, "host", `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 0},
				{1, "server", `{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"2"}}}}`, 100},
				{2, "host", `{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 0},
				{3, "server", `{"jsonrpc":"2.0","id":"zz","result":{}}`, 200}},
			want:       []want{{id: wire.StringID("d"), state: StateCompleted}, {id: wire.StringID("a"), state: StatePending}},
			violations: []string{ViolationUnknownResponseID},
			era:        event.EraModern,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(Config{})
			for _, s := range tc.steps {
				switch s.from {
				case "gone":
					tr.HostGone(ms(s.at))
					continue
				case "closed":
					tr.Observe(event.Event{Kind: event.TransportClosed, Time: ms(s.at)})
					continue
				case "expire":
					if cancels, _ := tr.expire(ms(s.at)); len(cancels) != 0 {
						t.Fatalf("expire asked to cancel a host's request: %+v", cancels)
					}
					continue
				}
				kind := event.Sent
				if s.from == "server" {
					kind = event.Received
				}
				ev := msgEvent(t, kind, s.at, s.raw)
				ev.StreamEnd = s.offset
				tr.Observe(ev)
			}
			for _, w := range tc.want {
				r, ok := tr.Get(w.id)
				if !ok {
					t.Fatalf("request %s not tracked", w.id)
				}
				if !r.ByHost || r.State != w.state || r.Progress.Count != w.progress {
					t.Errorf("%s: ByHost %v state %s progress %d, want state %s progress %d", w.id, r.ByHost, r.State, r.Progress.Count, w.state, w.progress)
				}
				if w.cause != 0 && (r.Cancel == nil || r.Cancel.Cause != w.cause || r.Cancel.Signal != event.SignalNotification) {
					t.Errorf("%s: cancel %+v, want cause %s by notification", w.id, r.Cancel, w.cause)
				}
				if got := r.Late.Response && !r.Late.Crossed; got != w.late {
					t.Errorf("%s: late response %v, want %v (%+v)", w.id, got, w.late, r.Late)
				}
				if got := r.Late.Response && r.Late.Crossed; got != w.crossed {
					t.Errorf("%s: crossed response %v, want %v (%+v)", w.id, got, w.crossed, r.Late)
				}
				if r.Late.ProgressAfterCancel != w.progAfter || r.Late.ProgressCrossed != w.progCrossd {
					t.Errorf("%s: progress after cancel %d late %d crossed, want %d and %d", w.id,
						r.Late.ProgressAfterCancel, r.Late.ProgressCrossed, w.progAfter, w.progCrossd)
				}
				if _, ok := r.Remaining(ms(0)); ok != LimitNone {
					t.Errorf("%s: a host request has a deadline of inflight's", w.id)
				}
			}
			var got []string
			vs := tr.Violations()
			for i := 0; i < vs.Len(); i++ {
				got = append(got, vs.At(i).Code)
			}
			if !slices.Equal(got, tc.violations) {
				t.Errorf("violations %v, want %v", got, tc.violations)
			}
			if tc.era != event.EraUnknown && tr.Era() != tc.era {
				t.Errorf("era %s, want %s", tr.Era(), tc.era)
			}
			if c, _ := tr.Conn(); tc.era == event.EraModern && c.ServerName != "demo" {
				t.Errorf("server %q, want the name server/discover gave", c.ServerName)
			}
			for i := 0; i < vs.Len(); i++ {
				if v := vs.At(i); strings.Contains(v.Detail, "inflight never") {
					t.Errorf("a host's violation in inflight's words: %s", v.Detail)
				}
			}
			if _, ok := tr.NextDeadline(); ok && tr.Counts().Cancelling == 0 {
				t.Errorf("a deadline with no cancel pending: the host's timeouts are not inflight's")
			}
		})
	}
}

// TestObserveInitializeIsNoRoundTrip: the host's initialize includes the
// server's start-up, so it does not set the round trip crossings are
// judged by.
func TestObserveInitializeIsNoRoundTrip(t *testing.T) {
	tr := NewTracker(Config{})
	tr.Observe(msgEvent(t, event.Sent, 0, hostInit))
	tr.Observe(msgEvent(t, event.Received, 300, serverInit))
	if rt := tr.RoundTrip(); rt.Measured() {
		t.Fatalf("round trip %+v from the host's initialize", rt)
	}
	if c, _ := tr.Conn(); c.ServerName != "demo" || c.ProtocolVersion != "2025-11-25" {
		t.Fatalf("conn %+v", c)
	}
}
