package session

import (
	"slices"
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// progAt is progress for the host's token "p1" with value n.
func progAt(n int) string {
	return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":` + string(rune('0'+n)) + `}}`
}

// findings runs steps through a tracker (extra runs after them) and
// returns its violations' codes and details.
func findings(t *testing.T, steps []step, extra func(tr *Tracker)) (codes []string, details string, tr *Tracker) {
	t.Helper()
	tr = observeAll(t, steps)
	if extra != nil {
		extra(tr)
	}
	var ds []string
	for i := range tr.Violations().Len() {
		ds = append(ds, tr.Violations().At(i).Detail)
	}
	return violationCodes(tr), strings.Join(ds, "\n"), tr
}

var opened = []step{{0, "host", hostInit, 0}, {2, "server", serverInit, 0}, {10, "host", hostCall1, 0}}

// The host's cancel of a call whose progress flows, 1 s apart, the last
// 0.4s before it: said with those figures, and, since the cancel's
// reason says timeout, that progress did not reset it. A cancel with
// another reason is said without the timeout; one of a call that had no
// progress is no finding.
func TestFindingCancelledWhileProgressing(t *testing.T) {
	steps := append(slices.Clone(opened), step{1000, "server", progAt(1), 0}, step{2000, "server", progAt(2), 0}, step{3000, "server", progAt(3), 0},
		step{3400, "host", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"McpError: MCP error -32001: Request timed out"}}`, 0})
	codes, details, _ := findings(t, steps, nil)
	if !slices.Equal(codes, []string{ViolationHostCancelledWhileProgressing}) {
		t.Fatalf("codes %v", codes)
	}
	for _, want := range []string{"the host gave up on tools/call slow (id 1) (reason “McpError: MCP error -32001: Request timed out”) after 3 progress notifications",
		"1.0s apart", "the last 0.4s before it", "its timeout was not reset by progress"} {
		if !strings.Contains(details, want) {
			t.Errorf("detail %q lacks %q", details, want)
		}
	}
	// A deliberate cancel is said as one, with its reason: not "gave up",
	// not a timeout.
	steps[len(steps)-1].raw = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user pressed stop"}}`
	_, details, _ = findings(t, steps, nil)
	if strings.Contains(details, "timeout") || strings.Contains(details, "gave up") {
		t.Errorf("a cancel that says no timeout is said to be one: %q", details)
	}
	if want := "the host cancelled tools/call slow (id 1) (reason “the user pressed stop”) after 3 progress notifications, 1.0s apart"; !strings.Contains(details, want) {
		t.Errorf("detail %q lacks %q", details, want)
	}
	quiet := append(slices.Clone(opened), step{3400, "host", hostCancel1, 0})
	if codes, _, _ := findings(t, quiet, nil); len(codes) != 0 {
		t.Errorf("a cancel with no progress before it: %v", codes)
	}
}

// Modern HTTP: closing the stream of a progressing request is the host's
// cancel, judged the same.
func TestFindingClosedStreamWhileProgressing(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	steps := []step{{0, "host", call, 0}, {500, "server", progAt(1), 0}, {1000, "server", progAt(2), 0}}
	codes, details, _ := findings(t, steps, func(tr *Tracker) { tr.HostClosedStream(wire.IntID(1), ms(1100)) })
	if !slices.Equal(codes, []string{ViolationHostCancelledWhileProgressing}) || !strings.Contains(details, "the host closed the stream of tools/call slow (id 1) after 2 progress notifications, 0.5s apart") || !strings.Contains(details, "the last 0.1s before it") {
		t.Fatalf("codes %v: %s", codes, details)
	}
}

// The host abandons a request: by going away (and the server answers it
// 2 s later: logged), by a new initialize on stdio, by ending its HTTP
// session.
func TestFindingAbandoned(t *testing.T) {
	codes, details, tr := findings(t, opened, func(tr *Tracker) {
		tr.HostGone(ms(500))
		tr.Observe(msgEvent(t, event.Received, 2500, answer1))
	})
	if !slices.Equal(codes, []string{ViolationHostAbandoned}) || !strings.Contains(details, "went away with tools/call 1") {
		t.Fatalf("gone: %v %s", codes, details)
	}
	worked := false
	for i := range tr.Log().Len() {
		worked = worked || strings.Contains(tr.Log().At(i).Text, "2.0s after the host abandoned it")
	}
	if !worked {
		t.Error("the server's answer after the host went is not said with how long after")
	}

	tr = NewTracker(Config{})
	tr.Observe(msgEvent(t, event.Sent, 0, hostInit))
	tr.Observe(msgEvent(t, event.Received, 2, serverInit))
	tr.Apply(event.Event{Kind: event.Connected, Time: ms(3), Info: &event.ConnInfo{Transport: event.TransportStdio, Era: event.EraLegacy}})
	tr.Observe(msgEvent(t, event.Sent, 10, hostCall1))
	tr.Observe(msgEvent(t, event.Sent, 900, hostInit))
	if v := violationCodes(tr); !slices.Equal(v, []string{ViolationHostAbandoned}) || !strings.Contains(tr.Violations().At(0).Detail, "new session (initialize)") {
		t.Fatalf("new initialize: %v", v)
	}

	codes, _, _ = findings(t, nil, func(tr *Tracker) {
		ev := msgEvent(t, event.Sent, 10, hostCall1)
		ev.SessionID = "s1"
		tr.Observe(ev)
		tr.HostEndedSession("s2", ms(20)) // another session's end
		tr.HostEndedSession("s1", ms(30))
	})
	if !slices.Equal(codes, []string{ViolationHostAbandoned}) {
		t.Fatalf("DELETE: %v", codes)
	}
}

// Legacy HTTP: the server's stream of a request ends before its answer.
// A host that opens a stream without Last-Event-ID resumes nothing; one
// that opens none is said once the wait is over; one that resumes is
// fine.
func TestFindingResumes(t *testing.T) {
	base := []step{{0, "host", hostCall1, 0}}
	codes, details, _ := findings(t, base, func(tr *Tracker) {
		tr.UpstreamStreamEndedIn(wire.IntID(1), "", ms(100))
		tr.HostReopenedIn("", ms(1600))
	})
	if !slices.Equal(codes, []string{ViolationHostResumedWithoutLastEventID}) || !strings.Contains(details, "1.5s later") {
		t.Fatalf("reopened: %v %s", codes, details)
	}
	codes, details, _ = findings(t, base, func(tr *Tracker) {
		tr.UpstreamStreamEndedIn(wire.IntID(1), "", ms(100))
		if next, ok := tr.NextDeadline(); !ok || !next.Equal(ms(100).Add(DefaultLateWindow)) {
			t.Errorf("next deadline %v %v, want the end of the wait", next, ok)
		}
		tr.Due(ms(100).Add(DefaultLateWindow))
	})
	if !slices.Equal(codes, []string{ViolationHostNoResume}) || !strings.Contains(details, "5.0s watched") {
		t.Fatalf("no resume: %v %s", codes, details)
	}
	codes, _, _ = findings(t, base, func(tr *Tracker) {
		tr.UpstreamStreamEndedIn(wire.IntID(1), "", ms(100))
		tr.HostResumedIn("", ms(200))
		tr.Due(ms(100).Add(DefaultLateWindow))
	})
	if len(codes) != 0 {
		t.Fatalf("resumed: %v", codes)
	}
	// A host that ended its session (DELETE) abandoned the request; the
	// server's stream of it ending after is no stream to resume.
	codes, _, _ = findings(t, nil, func(tr *Tracker) {
		ev := msgEvent(t, event.Sent, 10, hostCall1)
		ev.SessionID = "s1"
		tr.Observe(ev)
		tr.HostEndedSession("s1", ms(30))
		tr.UpstreamStreamEndedIn(wire.IntID(1), "s1", ms(40))
		tr.Due(ms(40).Add(DefaultLateWindow))
	})
	if !slices.Equal(codes, []string{ViolationHostAbandoned}) {
		t.Fatalf("ended its session, then the stream ended: %v", codes)
	}
}

// The host cancels a call while the server's elicitation tied to it
// waits for its answer; the host answers an ID never asked, and one twice.
func TestFindingQuestionAndAnswers(t *testing.T) {
	elicit := `{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}`
	steps := append(slices.Clone(opened), step{100, "server", elicit, 0}, step{3100, "host", hostCancel1, 0})
	codes, details, _ := findings(t, steps, nil)
	if !slices.Equal(codes, []string{ViolationHostTimeoutDuringQuestion}) || !strings.Contains(details, "elicitation/create (id \"e1\") tied to it had waited 3.0s") {
		t.Fatalf("question: %v %s", codes, details)
	}
	answer := `{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","content":{}}}`
	steps = append(slices.Clone(opened), step{100, "server", elicit, 0}, step{200, "host", answer, 0}, step{300, "host", answer, 0},
		step{400, "host", `{"jsonrpc":"2.0","id":"zz","result":{}}`, 0})
	codes, details, _ = findings(t, steps, nil)
	if !slices.Equal(codes, []string{ViolationHostAnsweredUnknownID, ViolationHostAnsweredUnknownID}) ||
		!strings.Contains(details, "answered already") || !strings.Contains(details, "sent no request with") {
		t.Fatalf("answers: %v %s", codes, details)
	}
}

// The host cancels a call the server answered: within the crossing window
// (half the round trip) the cancel crossed the answer; long after, the
// host had its answer.
func TestFindingCancelledAnswered(t *testing.T) {
	// The call's 10 ms round trip is the window's measure: 5 ms.
	crossed := append(slices.Clone(opened), step{20, "server", answer1, 0}, step{23, "host", hostCancel1, 0})
	if codes, _, _ := findings(t, crossed, nil); len(codes) != 0 {
		t.Fatalf("crossed: %v", codes)
	}
	late := append(slices.Clone(opened), step{20, "server", answer1, 0}, step{820, "host", hostCancel1, 0})
	codes, details, _ := findings(t, late, nil)
	if !slices.Equal(codes, []string{ViolationHostCancelledAnswered}) || !strings.Contains(details, "0.8s after") {
		t.Fatalf("late: %v %s", codes, details)
	}
}
