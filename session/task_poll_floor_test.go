package session

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// A server's poll interval is honoured above MinPollInterval; below it,
// the floor holds and the task says so.
func TestTaskPollFloor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		era     event.Era
		ms      string // the server's interval, as JSON
		wantGap time.Duration
		floored bool
	}{
		{"legacy 1µs", event.EraLegacy, "0.001", MinPollInterval, true},
		{"modern 1ns", event.EraModern, "0.000001", MinPollInterval, true},
		{"legacy 99ms", event.EraLegacy, "99", MinPollInterval, true},
		{"legacy 100ms", event.EraLegacy, "100", 100 * time.Millisecond, false},
		{"modern 250ms", event.EraModern, "250", 250 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTaskHarness(t, tc.era)
			key := "pollInterval"
			if h.modern {
				key = "pollIntervalMs"
			}
			extra := fmt.Sprintf(`"%s":%s`, key, tc.ms)
			r := h.call(0, true)
			n, _ := r.ID.Int()
			if h.modern {
				h.recv(10, result(int(n), `{"resultType":"task",`+h.task("t-1", "working", extra)+`}`))
			} else {
				h.recv(10, result(int(n), `{"task":{`+h.task("t-1", "working", extra)+`}}`))
			}
			at := 10
			for i := range 3 {
				if got := h.due(at + int(tc.wantGap/time.Millisecond) - 1); len(got) != 0 {
					t.Fatalf("poll %d: %v begun %s after the last, before the %s gap", i, methods(got), tc.wantGap-time.Millisecond, tc.wantGap)
				}
				at += int(tc.wantGap / time.Millisecond)
				got := h.due(at)
				if !slices.Equal(methods(got), []string{wire.MethodTasksGet}) {
					t.Fatalf("poll %d at +%dms: %v, want one tasks/get", i, at, methods(got))
				}
				h.answerTask(at, got[0], "t-1", wire.TaskWorking, extra)
			}
			expect(t, "PollFloored", r.Task.PollFloored, tc.floored)
			if tc.floored && r.Task.PollInterval >= MinPollInterval {
				t.Errorf("PollInterval %v: the server's own suggestion is kept, for the detail to say", r.Task.PollInterval)
			}
		})
	}
}

// A request that ended has nothing more sent for it: a finished legacy
// task whose tasks/result never answers is not polled again while its
// result is awaited (beyond the one poll that confirms the terminal
// status), and once the request timed out no new tasks/result begins.
func TestTaskNothingAfterEnd(t *testing.T) {
	for _, tc := range []struct {
		name       string
		until      int // ms to drive the tracker
		wantResult int // tasks/result begun in all
		wantPolls  int // tasks/get begun after the terminal status
		max, late  time.Duration
	}{
		{"result awaited then timed out", 30000, 1, 1, 8 * time.Second, time.Second},
		// Ended before the poll that would confirm the terminal status:
		// that poll is not sent either.
		{"timed out before the confirming poll", 5000, 1, 0, 150 * time.Millisecond, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{PollInterval: 500 * time.Millisecond, NoTaskListen: true, MaxTimeout: tc.max,
				PollTimeout: 20 * time.Second, LateWindow: tc.late}
			h := &taskHarness{harness: newHarness(t, cfg, event.EraLegacy, event.TransportStdio)}
			r := h.call(0, true)
			n, _ := r.ID.Int()
			h.recv(10, result(int(n), `{"task":{`+h.task("t-1", "working", `"pollInterval":50`)+`}}`))
			p := h.due(110)
			if len(p) != 1 {
				t.Fatalf("at 110ms: %v, want the first poll", methods(p))
			}
			h.answerTask(120, p[0], "t-1", wire.TaskCompleted, `"pollInterval":50`)
			results, polls := 0, 0
			for at := 120; at <= tc.until; at += 10 {
				d := h.tr.Due(ms(at))
				for _, c := range d.Requests {
					h.sendRaw(at, c, string(c.ChildParams))
					switch c.Method {
					case wire.MethodTasksResult:
						results++
					case wire.MethodTasksGet:
						polls++
						h.answerTask(at+5, c, "t-1", wire.TaskCompleted, `"pollInterval":50`)
					}
				}
			}
			expect(t, "state", r.State, StateTimedOut)
			expect(t, "tasks/result begun", results, tc.wantResult)
			expect(t, "tasks/get after completed", polls, tc.wantPolls)
		})
	}
}

// A task that says another status after its terminal one is flagged:
// the tracker polls once more after the terminal status, as check does.
func TestTaskConfirmPoll(t *testing.T) {
	for _, tc := range []struct {
		name    string
		era     event.Era
		after   string
		flagged bool
	}{
		{"modern flip", event.EraModern, wire.TaskWorking, true},
		{"modern stays", event.EraModern, wire.TaskCompleted, false},
		{"legacy flip", event.EraLegacy, wire.TaskWorking, true},
		{"legacy stays", event.EraLegacy, wire.TaskCompleted, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTaskHarness(t, tc.era)
			r := h.call(0, true)
			h.handle(10, r, "t-1")
			p := h.due(1010)
			h.answerTask(1020, p[0], "t-1", wire.TaskCompleted, "")
			if got := h.due(1500); slices.Contains(methods(got), wire.MethodTasksGet) {
				t.Fatalf("polled again at once: %v", methods(got))
			}
			confirm := h.due(2020)
			var c *Request
			for _, x := range confirm {
				if x.Method == wire.MethodTasksGet {
					c = x
				}
			}
			if c == nil {
				t.Fatalf("at a poll interval after completed: %v, want one more tasks/get", methods(confirm))
			}
			h.answerTask(2030, c, "t-1", tc.after, "")
			for at := 2030; at < 10000; at += 100 {
				if got := h.due(at); slices.Contains(methods(got), wire.MethodTasksGet) {
					t.Fatalf("a second poll after the terminal status at +%dms", at)
				}
			}
			expect(t, "flagged", slices.Contains(violationCodes(h.tr), ViolationTaskStatusAfterTerminal), tc.flagged)
			expect(t, "status", r.Task.Status, wire.TaskCompleted)
			want := ""
			if tc.flagged {
				want = tc.after
			}
			expect(t, "AfterTerminal", r.Task.AfterTerminal, want)
			expect(t, "Polls", r.Task.Polls, 2)
		})
	}
}
