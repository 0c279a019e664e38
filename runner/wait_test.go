package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/floodpeer"
	"inflight/runner"
	"inflight/session"
	"inflight/target"
	"inflight/wire"
)

// floodTarget is internal/testkit/floodpeer's raw peer in process over kernel
// pipes: a flood that never lets the client's event channel run dry.
func floodTarget() target.Target {
	return target.Target{Pipes: func(context.Context) (*client.Pipes, error) {
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			inR.Close()
			inW.Close()
			return nil, err
		}
		go func() {
			_ = floodpeer.Serve(inR, outW)
			inR.Close()
			outW.Close()
		}()
		return &client.Pipes{Stdin: inW, Stdout: outR}, nil
	}}
}

// TestWaitDeadlineUnderFlood: Wait takes ready events without looking at
// its timer, a burst at a time; a flood must still not starve its
// deadline. The loop is slowed below the reader's pace, so the event
// channel stays full (as far as the scheduler lets the reader keep it so).
//
// The tracker's deadlines are not tried here: a timeout under a flood that
// fills the channel sends its cancel from this goroutine, and the client's
// Cancel then blocks reporting it on the channel only this goroutine
// drains — issue 14's class of deadlock, for the client to fix.
func TestWaitDeadlineUnderFlood(t *testing.T) {
	const count = 100_000
	ctx := context.Background()
	cn, err := runner.Dial(ctx, floodTarget(), runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	defer cn.Observe(nil) // Close drains the rest of the flood at full speed
	cn.Observe(func(event.Event, []session.Change) {
		for start := time.Now(); time.Since(start) < 3*time.Microsecond; {
		}
	})
	params, _ := runner.ToolCallParams(floodpeer.Tool, json.RawMessage(`{"count":100000}`))
	r, err := cn.Begin(ctx, wire.MethodToolsCall, params, session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res := cn.Wait(ctx, func() bool { return r.Progress.Count > 1000 }, time.Now().Add(10*time.Second)); res != runner.WaitDone {
		t.Fatalf("the flood did not start: %v, %d progress", res, r.Progress.Count)
	}

	start := time.Now()
	res := cn.Wait(ctx, func() bool { return r.State.IsFinal() }, start.Add(10*time.Millisecond))
	if res != runner.WaitDeadline || r.Progress.Count >= count {
		t.Fatalf("Wait = %v after %d of %d progress, want its deadline to pass mid-flood", res, r.Progress.Count, count)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a 10ms deadline passed after %s of flood", took)
	}
}
