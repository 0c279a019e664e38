package list

import (
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
