package detail

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"

	"github.com/charmbracelet/x/ansi"
)

// taskFixture is a legacy task the detail is open on, its handle giving
// pollInterval (JSON), with a tracker driven through Due.
func taskFixture(t *testing.T, interval string) *fixture {
	f := newFixture(t, 160, 30)
	f.tracker.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &event.ConnInfo{Era: event.EraLegacy, Transport: event.TransportStdio}})
	params := json.RawMessage(`{"name":"report","arguments":{},"task":{"ttl":60000}}`)
	r := f.tracker.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, f.now)
	raw := wire.Request(r.ID, wire.MethodToolsCall, params)
	msg, _ := wire.Decode(raw)
	f.apply(event.Event{Kind: event.Sent, RequestID: r.ID, Raw: raw, Msg: msg})
	f.id = r.ID
	f.m = New(r.ID, f.w, f.h)
	f.now = t0.Add(10 * time.Millisecond)
	f.answer(`{"task":{"taskId":"t-1","status":"working","createdAt":"2026-11-30T09:00:00Z","lastUpdatedAt":"2026-11-30T09:00:00Z","ttl":60000,"pollInterval":` + interval + `}}`)
	return f
}

// tick runs Due at now and answers what it began: a poll with status, a
// tasks/result with an ordinary result.
func (f *fixture) tick(now time.Time, status, interval string) {
	f.t.Helper()
	f.tickSaying(now, status, interval, "")
}

// tickSaying is tick with the poll's statusMessage said ("" for none).
func (f *fixture) tickSaying(now time.Time, status, interval, message string) {
	f.t.Helper()
	said := ""
	if message != "" {
		m, _ := json.Marshal(message)
		said = `,"statusMessage":` + string(m)
	}
	f.now = now
	for _, c := range f.tracker.Due(now).Requests {
		raw := wire.Request(c.ID, c.Method, c.ChildParams)
		msg, _ := wire.Decode(raw)
		f.apply(event.Event{Kind: event.Sent, RequestID: c.ID, Raw: raw, Msg: msg})
		res := `{"content":[{"type":"text","text":"done"}]}`
		if c.Method == wire.MethodTasksGet {
			res = `{"taskId":"t-1","status":"` + status + `"` + said + `,"createdAt":"2026-11-30T09:00:00Z","lastUpdatedAt":"2026-11-30T09:00:00Z","ttl":60000,"pollInterval":` + interval + `}`
		}
		out := wire.ResultResponse(c.ID, json.RawMessage(res))
		m, _ := wire.Decode(out)
		f.apply(event.Event{Kind: event.Received, RequestID: c.ID, Raw: out, Msg: m})
	}
}

func (f *fixture) taskFactsLine() string {
	r, _ := f.tracker.Get(f.id)
	return strings.TrimSpace(ansi.Strip(taskFacts(f.env(), r, f.w)))
}

// The detail says when the floor overrode the server's poll interval, and
// a finished task's polls are told as done, not as a watch going on.
func TestTaskFactsPolling(t *testing.T) {
	for _, tc := range []struct {
		name, interval string
		want, not      []string
	}{
		{"floored", "0.001", []string{"server asked 1µs; polled every 100ms"}, []string{"the server's interval"}},
		{"honoured", "300", []string{"the server's interval 0.3s"}, []string{"server asked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := taskFixture(t, tc.interval)
			f.tick(t0.Add(time.Second), "working", tc.interval)
			s := f.taskFactsLine()
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("facts %q lack %q", s, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(s, w) {
					t.Errorf("facts %q say %q", s, w)
				}
			}
			if !strings.Contains(s, "last 0ms ago") {
				t.Errorf("a task being polled: %q, want when the last poll was", s)
			}
		})
	}
	t.Run("finished", func(t *testing.T) {
		f := taskFixture(t, "1000")
		f.tick(t0.Add(1010*time.Millisecond), "completed", "1000") // the terminal poll
		f.tick(t0.Add(1020*time.Millisecond), "completed", "1000") // tasks/result
		f.tick(t0.Add(2010*time.Millisecond), "completed", "1000") // the confirming poll
		f.now = t0.Add(8 * time.Second)
		r, _ := f.tracker.Get(f.id)
		if r.State != session.StateCompleted {
			t.Fatalf("state %s", r.State)
		}
		s := f.taskFactsLine()
		if !strings.Contains(s, "polled 2 times, the last at +2.0s") {
			t.Errorf("facts %q, want how often and when it was polled", s)
		}
		if strings.Contains(s, " ago") || strings.Contains(s, "next in") {
			t.Errorf("facts %q speak of a finished task as polled still", s)
		}
	})
}

// What the task says of itself is told whole before the polls' timing
// takes its longer wordings: at 100 columns a finished task's message
// was cut to "cancelle…" beside "polled 2 times, the last at …".
func TestTaskFactsKeepTheMessage(t *testing.T) {
	f := taskFixture(t, "1000")
	f.w = 100
	msg := "cancelled: the server was asked to stop and it did"
	f.tickSaying(t0.Add(1010*time.Millisecond), "working", "1000", msg)
	f.now = t0.Add(1500 * time.Millisecond)
	s := f.taskFactsLine()
	if !strings.Contains(s, `"`+msg+`"`) {
		t.Errorf("facts %q cut the task's message", s)
	}
	if !strings.Contains(s, "1 poll") {
		t.Errorf("facts %q lost the polls", s)
	}
}

// A task that says "working" after "completed" (the terminal status
// stands): the detail flags it at the top as the row does, its TASK
// history lists the later status, flagged, and the timeline says the end
// once, though the legacy request ended a moment after the poll that saw
// the terminal status.
func TestTaskFlipInTheDetail(t *testing.T) {
	f := taskFixture(t, "1000")
	f.h = 40
	f.tick(t0.Add(1010*time.Millisecond), "completed", "1000") // the terminal poll
	f.tick(t0.Add(1020*time.Millisecond), "completed", "1000") // tasks/result
	f.tick(t0.Add(2010*time.Millisecond), "working", "1000")   // the confirming poll
	f.now = t0.Add(3 * time.Second)
	f.layout()
	r, _ := f.tracker.Get(f.id)
	if r.State != session.StateCompleted || r.Task.AfterTerminal != "working" {
		t.Fatalf("state %s, after terminal %q", r.State, r.Task.AfterTerminal)
	}
	s := f.screen()
	lines := strings.Split(s, "\n")
	top := strings.Join(lines[:4], "\n")
	if !strings.Contains(top, "⚑ said working (poll) after completed") {
		t.Errorf("the header does not flag the status after the terminal one:\n%s", top)
	}
	body := ansi.Strip(f.m.content)
	task := body[strings.Index(body, "TASK"):]
	task = task[:strings.Index(task, "\n\n")]
	if !strings.Contains(task, "⚑ working      (poll) after completed: ignored") {
		t.Errorf("the TASK history leaves out the later status:\n%s", task)
	}
	if i, j := strings.Index(task, "completed      (poll)"), strings.Index(task, "⚑ working"); i < 0 || j < i {
		t.Errorf("the later status is not listed after the terminal one:\n%s", task)
	}
	tl := strings.Join(f.timelineOf(), "\n")
	if n := strings.Count(tl, "completed +"); n != 1 {
		t.Errorf("the timeline says the end %d times:\n%s", n, tl)
	}
}
