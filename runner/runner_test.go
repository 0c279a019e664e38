package runner

import (
	"context"
	"testing"
)

// The cancel's reason names the signal that stopped the run.
func TestInterruptReasonNamesTheSignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(Interrupt{Signal: "SIGTERM"})
	if got := InterruptReason(ctx); got != "interrupted (SIGTERM)" {
		t.Errorf("SIGTERM: %q", got)
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	if got := InterruptReason(ctx); got != "interrupted (Ctrl+C)" {
		t.Errorf("plain cancel: %q", got)
	}
}
