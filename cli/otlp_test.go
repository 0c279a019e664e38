package cli

import (
	"strings"
	"testing"
)

// The OTLP warning reaches the TUI while it runs, and is said again on
// stderr once the TUI ended (its screen gone); a warning that comes after
// the end goes to stderr at once. It is said once each way.
func TestTUIWarnReachesTheTUIAndStaysAfterIt(t *testing.T) {
	var stderr strings.Builder
	w := newTUIWarn(&stderr)
	w.say("otlp: spans to http://127.0.0.1:1 are lost (connection refused); the run goes on without them")
	select {
	case msg := <-w.ch:
		if !strings.Contains(msg, "are lost") {
			t.Fatalf("the TUI was handed %q", msg)
		}
	default:
		t.Fatal("the TUI was not handed the warning")
	}
	if stderr.Len() != 0 {
		t.Fatalf("stderr written while the TUI runs: %q", stderr.String())
	}
	w.ended()
	want := "inflight: otlp: spans to http://127.0.0.1:1 are lost (connection refused); the run goes on without them\n"
	if stderr.String() != want {
		t.Fatalf("stderr after the TUI = %q, want %q", stderr.String(), want)
	}

	stderr.Reset()
	late := newTUIWarn(&stderr)
	late.ended()
	if stderr.Len() != 0 {
		t.Fatalf("stderr with nothing to say: %q", stderr.String())
	}
	late.say("otlp: spans to http://127.0.0.1:1 are lost (the last spans were not delivered within 2s); the run goes on without them")
	if !strings.Contains(stderr.String(), "not delivered within 2s") {
		t.Fatalf("a warning from the flush at the end is lost: %q", stderr.String())
	}
}
