package list

import (
	"slices"
	"strings"
	"testing"

	"inflight/session"
	"inflight/ui/look"
)

func TestLogsCountGivesWayToFlags(t *testing.T) {
	p := painter{st: look.NewStyles(true)}
	r := &session.Request{Conv: &session.Conversation{LogCount: 12}}
	if got := p.withLogs(r, "x", 20); got == "x" || !strings.Contains(got, "12 logs") {
		t.Fatalf("room left, no count: %q", got)
	}
	if got := p.withLogs(r, "x", 8); !strings.Contains(got, "12≡") {
		t.Fatalf("a narrow cell gets the short count: %q", got)
	}
	if got := p.withLogs(r, "a flag filling it", 18); got != "a flag filling it" {
		t.Fatalf("the count took room from what the cell says: %q", got)
	}
}

// A task that said another status after its terminal one is flagged on
// its row, with what it said.
func TestTaskFlipFlaggedOnRow(t *testing.T) {
	p := painter{st: look.NewStyles(true), line: func(s string) string { return s }}
	r := &session.Request{State: session.StateCompleted, Violations: 1,
		Task: &session.Task{ID: "t-1", Status: "completed", AfterTerminal: "working"}}
	var got []string
	for _, part := range p.lateParts(r) {
		got = append(got, part.Variants[0])
	}
	if !slices.Contains(got, "⚑ said working after completed") {
		t.Errorf("row parts %q: want the flip flagged", got)
	}
	r.Task.AfterTerminal = ""
	for _, part := range p.lateParts(r) {
		if strings.Contains(part.Variants[0], "after completed") {
			t.Errorf("a task that kept its status is flagged: %q", part.Variants[0])
		}
	}
}
