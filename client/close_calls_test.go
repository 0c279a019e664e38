package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// Calls made on the caller's goroutine (Send, Cancel, Connect) may be in
// progress when Close runs; the UI gives its quit-time cancels a few
// seconds, then closes. Close must wait for them before it closes Events
// (an event sent after that panics), and must not wait forever for one
// stuck in a write.

// gateWriter forwards writes to w until armed; then each write blocks until
// release is closed, and either completes as if written (pretend) or is
// passed on.
type gateWriter struct {
	w       io.WriteCloser
	pretend bool

	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// open lets the gated write go on; it may be called more than once.
func (g *gateWriter) open() { g.once.Do(func() { close(g.release) }) }

// openAtCleanup opens the gate when the test ends, before the client is
// closed (cleanups run last first), so that a failing test does not leave
// a write hanging and Close waiting for it.
func (g *gateWriter) openAtCleanup(t *testing.T) { t.Cleanup(g.open) }

func newGate(w io.WriteCloser, pretend bool) *gateWriter {
	return &gateWriter{w: w, pretend: pretend, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gateWriter) arm() {
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	armed := g.armed
	g.armed = false // one gated write
	g.mu.Unlock()
	if armed {
		close(g.entered)
		<-g.release
		if g.pretend {
			// The bytes "made it" just as Close finished: the caller goes
			// on to report them.
			return len(p), nil
		}
	}
	return g.w.Write(p)
}

func (g *gateWriter) Close() error { return g.w.Close() }

// TestCloseDuringStdioCancel: a Cancel whose write is still in progress
// when Close runs reports its events after Close has given up waiting for
// it; the events must go out on an open channel (not panic), and Events
// closes once that Cancel is done.
func TestCloseDuringStdioCancel(t *testing.T) {
	_, pipes := newStdioPeer(t, legacyHandshake)
	gate := newGate(pipes.Stdin, true)
	pipes.Stdin = gate
	const wait = 100 * time.Millisecond
	c, rec, _ := connectClient(t, client.Config{Pipes: pipes, ShutdownWait: wait, WriteTimeout: time.Minute})
	gate.openAtCleanup(t)
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	gate.arm()
	cancelled := make(chan error, 1)
	go func() {
		_, err := c.Cancel(id, "quit")
		cancelled <- err
	}()
	<-gate.entered
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 10*wait {
		t.Errorf("Close waited %s for a stuck Cancel; its bound is about %s", d, 2*wait)
	}
	select {
	case <-rec.done:
		t.Fatal("Events closed while a Cancel could still report its events")
	default:
	}
	gate.open()
	if err := <-cancelled; err != nil {
		t.Errorf("Cancel: %v", err)
	}
	select {
	case <-rec.done:
	case <-time.After(waitLimit):
		t.Fatal("Events not closed once the last call returned")
	}
	rec.wait(t, "the cancel reported", kind(event.CancelSent))
	if _, err := c.Cancel(id, "again"); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Cancel after Close = %v, want ErrClosed", err)
	}
	if err := c.Send(context.Background(), client.Request{ID: wire.IntID(2), Method: "x"}); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

// gatedTransport holds the first POST of a notifications/cancelled until
// release is closed, whatever its context says, then answers 202.
type gatedTransport struct {
	base    http.RoundTripper
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		gated := false
		if strings.Contains(string(body), wire.NotifyCancelled) {
			g.once.Do(func() { gated = true })
		}
		if gated {
			close(g.entered)
			<-g.release
			return &http.Response{StatusCode: http.StatusAccepted, Status: "202 Accepted", Header: http.Header{},
				Body: http.NoBody, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
		}
	}
	return g.base.RoundTrip(r)
}

// TestCloseDuringLegacyHTTPCancel is the quit path on legacy HTTP: the
// cancel's POST is still out when Close runs (the reproduced panic was the
// EventCancelSent emitted once the POST returned).
func TestCloseDuringLegacyHTTPCancel(t *testing.T) {
	f := newLegacyFake(t)
	f.call = func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		<-r.Context().Done()
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	gt := &gatedTransport{base: http.DefaultTransport, entered: make(chan struct{}), release: make(chan struct{})}
	const wait = 100 * time.Millisecond
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125,
		HTTPClient: &http.Client{Transport: gt}, ShutdownWait: wait})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(gt.release) }) }
	t.Cleanup(release)
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	rec.wait(t, "the stream opened", func(ev event.Event) bool { return ev.Kind == event.StreamOpened && ev.RequestID == id })
	cancelled := make(chan error, 1)
	go func() {
		_, err := c.Cancel(id, "quit")
		cancelled <- err
	}()
	<-gt.entered
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 20*wait {
		t.Errorf("Close waited %s for a stuck Cancel", d)
	}
	release()
	<-cancelled
	select {
	case <-rec.done:
	case <-time.After(waitLimit):
		t.Fatal("Events not closed once the last call returned")
	}
}

// TestSecondCancelWaitsForFirst: Cancel is idempotent, and a second Cancel
// made while the first is still writing returns what the first sent, not
// SignalNone.
func TestSecondCancelWaitsForFirst(t *testing.T) {
	p, pipes := newStdioPeer(t, legacyHandshake)
	gate := newGate(pipes.Stdin, false)
	pipes.Stdin = gate
	c, _, _ := connectClient(t, client.Config{Pipes: pipes, WriteTimeout: time.Minute})
	gate.openAtCleanup(t)
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	p.wait(t, `"id":1`)
	gate.arm()
	type result struct {
		sig event.CancelSignal
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		sig, err := c.Cancel(id, "first")
		first <- result{sig, err}
	}()
	<-gate.entered
	go func() {
		sig, err := c.Cancel(id, "second")
		second <- result{sig, err}
	}()
	select {
	case r := <-second:
		t.Fatalf("the second Cancel returned %s, %v while the first was still sending", r.sig, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	gate.open()
	for _, ch := range []chan result{first, second} {
		if r := <-ch; r.sig != event.SignalNotification || r.err != nil {
			t.Errorf("Cancel = %s, %v; want %s", r.sig, r.err, event.SignalNotification)
		}
	}
	p.wait(t, wire.NotifyCancelled)
	quietly(50 * time.Millisecond)
	n := 0
	for _, l := range p.all() {
		if strings.Contains(l, wire.NotifyCancelled) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d cancels written, want 1", n)
	}
}
