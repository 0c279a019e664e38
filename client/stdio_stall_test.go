package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// A stdio server that stops reading its stdin must not hang the debugger:
// writes are bounded (Config.WriteTimeout, and Send's ctx), the request
// whose write could not finish fails, and since a half-written line can be
// followed by nothing else the connection is closed.

// stallBound is the write bound in these tests: short, so they stay fast.
const stallBound = 300 * time.Millisecond

// TestStdioServerStopsReading uses real OS pipes, so that what fills up is
// the kernel's pipe buffer (64 KiB on Linux), as with a real server.
func TestStdioServerStopsReading(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The peer reads the probe, answers it, and then stops reading until
	// the test lets it drain what is left on the pipe, to the end.
	resume := make(chan struct{})
	var resumeOnce sync.Once
	drain := func() { resumeOnce.Do(func() { close(resume) }) }
	rest := make(chan []byte, 1)
	go func() {
		br := bufio.NewReader(inR)
		line, err := br.ReadBytes('\n')
		if m, derr := wire.Decode(bytes.TrimSpace(line)); err == nil && derr == nil && m.Method == wire.MethodDiscover {
			_, _ = outW.Write(append(wire.ResultResponse(m.ID, json.RawMessage(discoverResult)), '\n'))
		}
		<-resume
		b, _ := io.ReadAll(br)
		rest <- b
		outW.Close() // like a server process, exit at stdin EOF
	}()
	t.Cleanup(func() {
		drain()
		outW.Close()
		inR.Close()
	})
	c, rec, _ := connectClient(t, client.Config{Pipes: &client.Pipes{Stdin: inW, Stdout: outR}, WriteTimeout: stallBound})
	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}

	small := toolCall("x", map[string]any{})
	r1 := tr.Begin(wire.MethodToolsCall, small, session.RequestOptions{}, time.Now())
	send(t, c, 1, wire.MethodToolsCall, small)

	// Four times the pipe's buffer: the write must block.
	big := toolCall("x", map[string]any{"blob": strings.Repeat("b", 256<<10)})
	r2 := tr.Begin(wire.MethodToolsCall, big, session.RequestOptions{}, time.Now())
	start := time.Now()
	err = c.Send(context.Background(), client.Request{ID: r2.ID, Method: wire.MethodToolsCall, Params: big, ProgressToken: r2.ProgressToken})
	took := time.Since(start)
	if !errors.Is(err, client.ErrWriteStalled) {
		t.Fatalf("Send to a server that stopped reading = %v, want ErrWriteStalled", err)
	}
	if !strings.Contains(err.Error(), "did not complete within 300ms") || !strings.Contains(err.Error(), "connection is unusable") {
		t.Errorf("error %q does not say what happened", err)
	}
	if took < stallBound || took > waitLimit {
		t.Errorf("Send gave up after %s, want about %s", took, stallBound)
	}

	// The request that could not go out is lost, as is the one in flight,
	// with the connection, which is reported closed (issue 14, item 12:
	// it ended failed, as if the server had refused it).
	closed := rec.wait(t, "the transport closed", kind(event.TransportClosed))
	if !errors.Is(closed.Err, client.ErrWriteStalled) {
		t.Errorf("closure cause %v, want ErrWriteStalled", closed.Err)
	}
	fd.feed()
	if r2.State != session.StateConnectionLost || !strings.Contains(r2.LocalError, "not reading its stdin") {
		t.Errorf("the stalled request is %s (%q), want connection_lost with the reason", r2.State, r2.LocalError)
	}
	if r1.State != session.StateConnectionLost {
		t.Errorf("the request in flight is %s, want connection_lost", r1.State)
	}
	if err := c.Send(context.Background(), client.Request{ID: wire.IntID(3), Method: wire.MethodToolsList}); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Send after the stall = %v, want ErrClosed", err)
	}
	if _, err := c.Cancel(wire.IntID(1), "x"); err == nil {
		t.Errorf("Cancel after the stall succeeded")
	}

	// What reached the server: whole lines, then the half-written one,
	// and nothing after it (stdin was closed, so the drain ends).
	drain()
	var got []byte
	select {
	case got = <-rest:
	case <-time.After(waitLimit):
		t.Fatal("the server's stdin was never closed")
	}
	lines := strings.Split(string(got), "\n")
	tail := lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if m, err := wire.Decode([]byte(l)); err != nil || m.Method == wire.NotifyCancelled {
			t.Errorf("unexpected line on the wire: %.120s", l)
		}
	}
	if tail == "" || !strings.HasPrefix(tail, `{"jsonrpc":"2.0","id":2,`) || len(tail) >= 256<<10 {
		t.Errorf("the stream does not end with the half-written request 2 (tail %d bytes: %.80s)", len(tail), tail)
	}
}

// stallingWriter passes writes through until stall, then blocks every
// write until Close, like a pipe to a server that stopped reading.
type stallingWriter struct {
	w         io.WriteCloser
	mu        sync.Mutex
	stalled   bool
	blocked   chan struct{} // closed when a write first blocks
	closed    chan struct{}
	blockOnce sync.Once
	closeOnce sync.Once
}

func newStallingWriter(w io.WriteCloser) *stallingWriter {
	return &stallingWriter{w: w, blocked: make(chan struct{}), closed: make(chan struct{})}
}

func (s *stallingWriter) stall() {
	s.mu.Lock()
	s.stalled = true
	s.mu.Unlock()
}

func (s *stallingWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	stalled := s.stalled
	s.mu.Unlock()
	if !stalled {
		return s.w.Write(p)
	}
	s.blockOnce.Do(func() { close(s.blocked) })
	<-s.closed
	return 0, io.ErrClosedPipe
}

func (s *stallingWriter) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return s.w.Close()
}

// stalledPeer connects a client to a modern peer whose stdin can be made
// to stop taking bytes.
func stalledPeer(t *testing.T, cfg client.Config) (*client.Client, *recorder, *stdioPeer, *stallingWriter) {
	t.Helper()
	p, pipes := newStdioPeer(t, modernHandshake)
	sw := newStallingWriter(pipes.Stdin)
	pipes.Stdin = sw
	cfg.Pipes = pipes
	c, rec, _ := connectClient(t, cfg)
	return c, rec, p, sw
}

func TestStdioCancelWhileStalled(t *testing.T) {
	t.Run("its own write blocks", func(t *testing.T) {
		c, rec, p, sw := stalledPeer(t, client.Config{WriteTimeout: stallBound})
		tr := session.NewTracker(session.Config{})
		fd := &feeder{tr: tr, rec: rec}
		params := toolCall("x", map[string]any{})
		r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
		id := send(t, c, 1, wire.MethodToolsCall, params)
		p.wait(t, `"id":1,`)
		sw.stall()
		if _, err := tr.RequestCancel(id, "user", session.CauseUser, time.Now()); err != nil {
			t.Fatal(err)
		}
		sig, err := c.Cancel(id, "user")
		if !errors.Is(err, client.ErrWriteStalled) || sig != event.SignalNone {
			t.Fatalf("Cancel = %s, %v; want no signal and ErrWriteStalled", sig, err)
		}
		rec.wait(t, "the transport closed", kind(event.TransportClosed))
		if n := rec.count(func(ev event.Event) bool { return ev.Kind == event.CancelSent && ev.Err == nil }); n != 0 {
			t.Errorf("a cancel that never left was reported sent")
		}

		fd.feed()
		if r.State.IsActive() || r.Cancel == nil || r.Cancel.Signal != event.SignalNone {
			t.Errorf("the request is %s with cancel %+v; want settled with no signal sent", r.State, r.Cancel)
		}
		for _, l := range p.all() {
			if strings.Contains(l, wire.NotifyCancelled) {
				t.Errorf("the stalled cancel reached the server: %s", l)
			}
		}
	})
	t.Run("queued behind a stuck write", func(t *testing.T) {
		c, rec, _, sw := stalledPeer(t, client.Config{WriteTimeout: stallBound})
		send(t, c, 1, wire.MethodToolsCall, toolCall("x", map[string]any{}))
		sw.stall()
		sent := make(chan error, 1)
		go func() {
			sent <- c.Send(context.Background(), client.Request{ID: wire.IntID(2), Method: wire.MethodToolsList})
		}()
		<-sw.blocked
		if _, err := c.Cancel(wire.IntID(1), "user"); !errors.Is(err, client.ErrWriteStalled) {
			t.Errorf("Cancel queued behind a stuck write = %v, want ErrWriteStalled", err)
		}
		if err := <-sent; !errors.Is(err, client.ErrWriteStalled) {
			t.Errorf("the stuck Send = %v, want ErrWriteStalled", err)
		}
		rec.wait(t, "request 2 failed", failed(wire.IntID(2)))
		rec.wait(t, "the transport closed", kind(event.TransportClosed))
	})
	t.Run("Send's context ends first", func(t *testing.T) {
		c, rec, _, sw := stalledPeer(t, client.Config{WriteTimeout: time.Minute})
		sw.stall()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := c.Send(ctx, client.Request{ID: wire.IntID(1), Method: wire.MethodToolsList})
		if !errors.Is(err, client.ErrWriteStalled) || !strings.Contains(err.Error(), "context deadline exceeded") {
			t.Errorf("Send = %v, want ErrWriteStalled naming the context", err)
		}
		rec.wait(t, "the transport closed", kind(event.TransportClosed))
	})
}
