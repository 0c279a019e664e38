package session

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// dueStep calls Due at ms(at) and says what it must return: the cancels
// (as "id:reason"), the task requests begun (their methods), the state
// moves made (as "id:from>to") and the next deadline (ms; -1: none).
type dueStep struct {
	at       int
	cancels  []string
	requests []string
	moves    []string
	next     int
}

func dueCancels(d Due) []string {
	var out []string
	for _, x := range d.Cancels {
		out = append(out, x.ID.String()+":"+x.Reason)
	}
	return out
}

func dueMoves(d Due) []string {
	var out []string
	for _, ch := range d.Changes {
		if ch.Kind == ChangeState {
			out = append(out, ch.ID.String()+":"+ch.From.String()+">"+ch.To.String())
		}
	}
	return out
}

// TestDue drives trackers through Due alone on a fixed clock, as the TUI,
// the runner and the proxy's recorder do: each step checks what Due says
// is due, and that a second Due at the same instant finds nothing new.
func TestDue(t *testing.T) {
	cases := []struct {
		name string
		// setup builds the tracker and what happened before the first step.
		setup func(t *testing.T) *Tracker
		steps []dueStep
	}{
		{
			name: "an expired request yields its cancel, then settles after the late window",
			setup: func(t *testing.T) *Tracker {
				h := newStdio(t, event.EraLegacy)
				r := h.tr.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow"}`), RequestOptions{Timeout: time.Second}, ms(0))
				h.sent(0, r)
				return h.tr
			},
			steps: []dueStep{
				{at: 999, next: 1000},
				{at: 1000, cancels: []string{"1:timeout"}, moves: []string{"1:pending>cancel_requested"}, next: 1000 + int(DefaultLateWindow/time.Millisecond)},
				{at: 5999, next: 6000},
				{at: 6000, moves: []string{"1:cancel_requested>timed_out"}, next: -1},
			},
		},
		{
			name: "several expired requests come oldest first",
			setup: func(t *testing.T) *Tracker {
				h := newStdio(t, event.EraLegacy)
				a := h.tr.Begin(wire.MethodToolsList, nil, RequestOptions{Timeout: 2 * time.Second}, ms(0))
				h.sent(0, a)
				b := h.tr.Begin(wire.MethodToolsList, nil, RequestOptions{Timeout: time.Second}, ms(500))
				h.sent(500, b)
				return h.tr
			},
			steps: []dueStep{
				{at: 2000, cancels: []string{"1:timeout", "2:timeout"}, moves: []string{"2:pending>cancel_requested", "1:pending>cancel_requested"}, next: 7000},
			},
		},
		{
			name: "an initialize that timed out is given up, never cancelled",
			setup: func(t *testing.T) *Tracker {
				h := newStdio(t, event.EraUnknown)
				r := h.tr.Begin(wire.MethodInitialize, nil, RequestOptions{Timeout: time.Second}, ms(0))
				h.sent(0, r)
				return h.tr
			},
			steps: []dueStep{
				{at: 1000, moves: []string{"1:pending>timed_out"}, next: -1},
			},
		},
		{
			name: "a task yields its poll at its due time and not before",
			setup: func(t *testing.T) *Tracker {
				h := newTaskHarness(t, event.EraLegacy)
				r := h.call(0, true)
				h.handle(10, r, "t-1") // the server's interval is 1s
				return h.tr
			},
			steps: []dueStep{
				{at: 1009, next: 1010},
				{at: 1010, requests: []string{wire.MethodTasksGet}, next: 31010}, // the poll's own timeout next
			},
		},
		{
			name: "a task's timeout is its tasks/cancel, never a transport cancel",
			setup: func(t *testing.T) *Tracker {
				h := newTaskHarness(t, event.EraLegacy)
				params := `{"name":"work","arguments":{},"task":{"ttl":60000}}`
				r := h.tr.Begin(wire.MethodToolsCall, json.RawMessage(params), RequestOptions{MaxTimeout: 500 * time.Millisecond}, ms(0))
				h.sendRaw(0, r, params)
				h.handle(10, r, "t-1")
				return h.tr
			},
			steps: []dueStep{
				{at: 499, next: 500},
				{at: 500, requests: []string{wire.MethodTasksCancel}, moves: []string{"1:task>cancel_requested"}, next: 1010},
			},
		},
		{
			name: "a proxy's tracker sends nothing for a host's task it cancelled",
			setup: func(t *testing.T) *Tracker {
				const (
					taskCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`
					handle   = `{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T00:00:00Z","ttl":60000,"pollInterval":1000}}}`
				)
				tr := observeAll(t, []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 0}, {10, "host", taskCall, 0}, {20, "server", handle, 0}})
				// A rule's cancel: a tracker of its own would send tasks/cancel.
				if _, err := tr.RequestCancel(id(1), "rule", CauseUser, ms(30)); err != nil {
					t.Fatal(err)
				}
				return tr
			},
			steps: []dueStep{
				// Nor is the host task's poll interval a deadline: nothing
				// would clear it, and the recorder would wake every
				// millisecond from then on.
				{at: 30, next: 5030},
				{at: 1020, next: 5030},
				{at: 5030, moves: []string{"1:cancel_requested>cancelled"}, next: -1},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.setup(t)
			for _, s := range tc.steps {
				d := tr.Due(ms(s.at))
				if got := dueCancels(d); !slices.Equal(got, s.cancels) {
					t.Errorf("at %dms: cancels %v, want %v", s.at, got, s.cancels)
				}
				if got := methods(d.Requests); !slices.Equal(got, s.requests) {
					t.Errorf("at %dms: requests %v, want %v", s.at, got, s.requests)
				}
				if got := dueMoves(d); !slices.Equal(got, s.moves) {
					t.Errorf("at %dms: moves %v, want %v", s.at, got, s.moves)
				}
				wantNext := time.Time{}
				if s.next >= 0 {
					wantNext = ms(s.next)
				}
				if !d.Next.Equal(wantNext) {
					t.Errorf("at %dms: next %v, want %v", s.at, d.Next.Sub(t0), wantNext.Sub(t0))
				}
				if next, ok := tr.NextDeadline(); ok != !d.Next.IsZero() || !next.Equal(d.Next) {
					t.Errorf("at %dms: NextDeadline %v (%v), Due.Next %v", s.at, next.Sub(t0), ok, d.Next.Sub(t0))
				}
				again := tr.Due(ms(s.at))
				if len(again.Cancels)+len(again.Requests)+len(again.Changes) != 0 || !again.Next.Equal(d.Next) {
					t.Errorf("at %dms: Due again found %v cancels, %v requests, %d changes, next %v",
						s.at, dueCancels(again), methods(again.Requests), len(again.Changes), again.Next.Sub(t0))
				}
			}
		})
	}
}

// A task's request begun by Due is tracked like any: its answer is applied
// to the task, and the next poll is due a poll interval later.
func TestDueTaskRequestIsTracked(t *testing.T) {
	h := newTaskHarness(t, event.EraLegacy)
	r := h.call(0, true)
	h.handle(10, r, "t-1")
	d := h.tr.Due(ms(1010))
	if len(d.Requests) != 1 {
		t.Fatalf("requests %v", methods(d.Requests))
	}
	poll := d.Requests[0]
	if poll.Parent != r.ID || poll.Role != RolePoll || string(poll.ChildParams) != string(wire.TaskParams("t-1")) || !poll.ProgressToken.IsZero() {
		t.Fatalf("poll %+v", poll)
	}
	h.sendRaw(1010, poll, string(poll.ChildParams))
	h.answerTask(1020, poll, "t-1", wire.TaskWorking, "")
	if poll.State != StateCompleted || r.Task.Polls != 1 {
		t.Fatalf("poll %v, %d polls", poll.State, r.Task.Polls)
	}
	if d := h.tr.Due(ms(1020)); len(d.Requests) != 0 || !d.Next.Equal(ms(2020)) {
		t.Errorf("after the answer: requests %v, next %v; want none until 2.02s", methods(d.Requests), d.Next.Sub(t0))
	}
}
