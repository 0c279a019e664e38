package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

func TestLifecycleMisuse(t *testing.T) {
	if _, err := client.New(client.Config{}); err == nil {
		t.Error("New without a target succeeded")
	}
	if _, err := client.New(client.Config{Command: "x", URL: "http://127.0.0.1:1"}); err == nil {
		t.Error("New with two targets succeeded")
	}
	if _, err := client.New(client.Config{URL: "ftp://example.com"}); err == nil {
		t.Error("New with an ftp URL succeeded")
	}
	if _, err := client.New(client.Config{URL: "http://127.0.0.1:1", ProtocolVersion: "2024-01-01"}); err == nil {
		t.Error("New with an unknown legacy version succeeded")
	}

	_, pipes := newStdioPeer(t, legacyHandshake)
	c, rec := newClient(t, client.Config{Pipes: pipes})
	if err := c.Send(context.Background(), client.Request{ID: wire.IntID(1), Method: "x"}); !errors.Is(err, client.ErrNotConnected) {
		t.Errorf("Send before Connect = %v, want ErrNotConnected", err)
	}
	c.Close()
	if _, err := c.Connect(context.Background()); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Connect after Close = %v, want ErrClosed", err)
	}
	<-rec.done
	if n := rec.count(kind(event.TransportClosed)); n != 1 {
		t.Errorf("%d EventTransportClosed, want 1", n)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestDuplicateIDInFlight(t *testing.T) {
	c, _, p := legacyPeer(t, client.Config{})
	send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	err := c.Send(context.Background(), client.Request{ID: wire.IntID(1), Method: wire.MethodToolsCall})
	if err == nil || !strings.Contains(err.Error(), "already in flight") {
		t.Errorf("second Send of ID 1 = %v", err)
	}
	p.wait(t, `"id":1`)
	quietly(50 * time.Millisecond)
	n := 0
	for _, l := range p.all() {
		if strings.Contains(l, `"id":1,`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("ID 1 written %d times", n)
	}
}

// TestConcurrentSendCancel sends and cancels from many goroutines at once
// (under -race this checks the client's locking), on both transports and
// both eras: every request ends answered or cancelled, and each cancelled
// one got exactly the era's signal.
func TestConcurrentSendCancel(t *testing.T) {
	const workers, perWorker = 8, 4
	run := func(t *testing.T, cfg client.Config, late time.Duration, want event.CancelSignal) {
		c, rec, _ := connectClient(t, cfg)
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < perWorker; i++ {
					n := int64(w*perWorker + i + 1)
					id := wire.IntID(n)
					quick := n%2 == 0
					args := map[string]any{"seconds": 60, "steps": 600}
					if quick {
						args = map[string]any{"seconds": 0.05, "steps": 1}
					}
					if err := c.Send(context.Background(), client.Request{ID: id, Method: wire.MethodToolsCall, Params: toolCall("slow", args), ProgressToken: id, LateWindow: late}); err != nil {
						errs <- err
						return
					}
					if quick {
						continue
					}
					sig, err := c.Cancel(id, "concurrent")
					if err != nil && !errors.Is(err, client.ErrNotInFlight) {
						errs <- fmt.Errorf("cancel %s: %w", id, err)
					} else if err == nil && sig != want {
						errs <- fmt.Errorf("cancel %s sent %s, want %s", id, sig, want)
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for n := int64(2); n <= workers*perWorker; n += 2 {
			rec.wait(t, fmt.Sprintf("the answer to %d", n), responseTo(wire.IntID(n)))
		}
		for n := int64(1); n <= workers*perWorker; n += 2 {
			id := wire.IntID(n)
			rec.wait(t, fmt.Sprintf("the cancel of %d", n), func(ev event.Event) bool {
				return ev.Kind == event.CancelSent && ev.RequestID == id
			})
		}
	}
	t.Run("stdio", func(t *testing.T) {
		pipes, _ := demoStdio(t)
		run(t, client.Config{Pipes: pipes}, 0, event.SignalNotification)
	})
	t.Run("modern http", func(t *testing.T) {
		srv, _ := demoHTTP(t)
		run(t, client.Config{URL: srv.URL}, 0, event.SignalStreamClosed)
	})
	t.Run("legacy http", func(t *testing.T) {
		srv, _ := demoHTTP(t)
		run(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125, ShutdownWait: 300 * time.Millisecond}, 100*time.Millisecond, event.SignalNotification)
	})
}
