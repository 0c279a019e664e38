package client_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// TestPingFloodThenCancelDoesNotHang (issue 14, item 1): a legacy stdio
// server that stops reading its stdin and floods ping. inflight answers
// every ping, the answers fill the pipe, a write stalls, and the event
// channel fills because its only reader — here, as in a headless run, the
// loop that also calls Cancel, Send and Close — is busy. Before, the
// goroutine answering a ping took markDead's Once and blocked in emit on
// the full channel, while the reader sat in Cancel → lost → markDead
// waiting for the same Once: call and check hung for good. Every path the
// consumer calls must come back, and Close must end the client, within a
// bounded time.
func TestPingFloodThenCancelDoesNotHang(t *testing.T) {
	t.Run("in-process", func(t *testing.T) {
		sv := hostile.Serve(hostile.PingFlood)
		defer sv.Stop()
		pingFloodThenCancel(t, client.Config{Pipes: &client.Pipes{Stdin: sv.Stdin, Stdout: sv.Stdout}})
	})
	t.Run("process", func(t *testing.T) {
		path, env, err := hostile.Command(hostile.PingFlood, "")
		if err != nil {
			t.Fatal(err)
		}
		pingFloodThenCancel(t, client.Config{Command: path, Env: env})
	})
}

func pingFloodThenCancel(t *testing.T, cfg client.Config) {
	cfg.ProtocolVersion = wire.Version20251125
	cfg.EventBuffer = 16
	cfg.WriteTimeout = 500 * time.Millisecond
	cfg.ShutdownWait = 200 * time.Millisecond
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	// The consumer: one loop that reads events as fast as it can until the
	// answers to the pings have filled the pipe and a write is stuck (4000
	// answers are far over the pipe's 64 KiB and the peer's read-ahead, or
	// the flood stops coming because the client holds its reader), then
	// stops reading to cancel, send and close, as `inflight call` does when
	// its timeout fires: the channel fills at once, before the stuck
	// write's bound passes.
	type result struct {
		cancelErr, sendErr error
		closed             bool
		pings              int
	}
	done := make(chan result, 1)
	connected := make(chan error, 1)
	go func() {
		var r result
		acted := false
		idle := time.NewTimer(time.Hour)
		defer idle.Stop()
		for {
			idle.Reset(100 * time.Millisecond)
			select {
			case ev, ok := <-c.Events():
				if !ok {
					done <- r
					return
				}
				if ev.Kind == event.TransportClosed {
					r.closed = true
				}
				if ev.Kind == event.Received && ev.Msg.Method == wire.MethodPing {
					r.pings++
				}
				if acted || r.pings < 4000 {
					continue
				}
			case <-idle.C:
				// Nothing more comes: the reader is held, since the answers
				// no longer get out.
				if acted || r.pings == 0 {
					continue
				}
			}
			acted = true
			_, r.cancelErr = c.Cancel(wire.IntID(1), "timed out")
			r.sendErr = c.Send(context.Background(), client.Request{ID: wire.IntID(2), Method: wire.MethodToolsList})
			c.Close()
		}
	}()
	go func() {
		_, err := c.Connect(ctx)
		if err == nil {
			err = c.Send(ctx, client.Request{ID: wire.IntID(1), Method: wire.MethodToolsCall, Params: toolCall(hostile.ToolName, nil), LateWindow: 100 * time.Millisecond})
		}
		connected <- err
	}()
	if err := <-connected; err != nil {
		c.Close()
		t.Fatalf("connect and send: %v", err)
	}
	bound := time.NewTimer(5 * time.Second)
	defer bound.Stop()
	select {
	case r := <-done:
		if !r.closed {
			t.Errorf("no %s", event.TransportClosed)
		}
		if r.cancelErr != nil && !errors.Is(r.cancelErr, client.ErrWriteStalled) && !errors.Is(r.cancelErr, client.ErrClosed) &&
			!errors.Is(r.cancelErr, client.ErrNotInFlight) {
			t.Errorf("Cancel: %v", r.cancelErr)
		}
		if r.sendErr == nil {
			t.Errorf("Send on a connection whose writes stalled succeeded")
		}
		t.Logf("%d pings read; cancel: %v; send: %v", r.pings, r.cancelErr, r.sendErr)
	case <-bound.C:
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		os.Stderr.Write(buf[:n])
		t.Fatal("cancel, send and close did not come back within 5s: the client is deadlocked")
	}
}
