package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/trace"
)

// --trace records the TUI's session from the start as a headless run's
// trace: the events with the tracker's verdicts, every state change, and
// the cancel the user asked for (issue 10: the TUI had no --trace).
func TestTraceRecordsTheSession(t *testing.T) {
	h := newHarness(t, 120, 35)
	var buf bytes.Buffer
	h.m.opts.Trace = trace.NewWriter(&buf, t0, nil)
	h.connect()
	id := startSlow(h)
	h.progress(id, 1, 10, "step 1")
	h.key("c")
	h.cancelSent(id, event.SignalNotification)
	h.now = h.now.Add(100 * time.Millisecond)
	h.progress(id, 2, 10, "step 2, after the cancel")
	_ = h.m.opts.Trace.Flush()
	recs, _, err := trace.ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var states, late []string
	for _, r := range recs {
		if r.Event == trace.EventState {
			states = append(states, r.From+">"+r.State)
		}
		if r.Verdict != "" {
			late = append(late, r.Verdict)
		}
	}
	joined := strings.Join(states, " ")
	for _, want := range []string{">pending", "pending>running", "running>cancel_requested"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the trace's state lines %q lack %q", joined, want)
		}
	}
	if len(late) != 1 || late[0] != "late" {
		t.Errorf("verdicts %v, want the progress after the cancel judged late", late)
	}
}
