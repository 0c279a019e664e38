package call

import (
	"bytes"
	"context"
	"testing"
	"time"

	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
	"inflight/runner"
	"inflight/wire"
)

// A second Ctrl+C stops waiting at once, even while a legacy HTTP cancel's
// POST is held by the server (found in review: call waited out the POST's
// 30s bound after the second signal).
func TestHurryDoesNotWaitForAHeldCancelPOST(t *testing.T) {
	target := testserver.OverHTTP(hostile.HoldsCancelPOST, wire.Version20251125)(t)
	hurry := make(chan struct{})
	ctx := runner.WithHurry(context.Background(), hurry)
	done := make(chan int, 1)
	go func() {
		var out, errOut bytes.Buffer
		done <- Run(ctx, Options{Target: target, Method: wire.MethodToolsCall, Params: testserver.ToolParams(t, "x", `{}`),
			CancelAfter: 200 * time.Millisecond, LateWindow: time.Second, JSON: true}, &out, &errOut)
	}()
	time.Sleep(600 * time.Millisecond) // the cancel's POST is held by now
	start := time.Now()
	close(hurry)
	select {
	case <-done:
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("call took %s to stop after the hurry", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("call still waits for the held cancel POST 20s after the hurry")
	}
}
