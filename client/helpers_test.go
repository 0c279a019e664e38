package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"inflight/client"
	"inflight/event"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/wire"
)

// waitLimit bounds every wait for an event: long enough for a loaded CI
// machine under -race, short enough that a hang fails the test quickly.
const waitLimit = 10 * time.Second

// recorder collects a client's events as they arrive, so a test can await
// the one it needs instead of sleeping.
type recorder struct {
	mu      sync.Mutex
	evs     []event.Event
	changed chan struct{} // closed and replaced on every new event
	done    chan struct{} // closed when the Events channel closed
}

// record starts reading c.Events(); it stops when Close closes the channel.
func record(c *client.Client) *recorder {
	r := &recorder{changed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range c.Events() {
			r.mu.Lock()
			r.evs = append(r.evs, ev)
			close(r.changed)
			r.changed = make(chan struct{})
			r.mu.Unlock()
		}
	}()
	return r
}

// all returns the events so far.
func (r *recorder) all() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.evs...)
}

// count returns how many events so far match.
func (r *recorder) count(match func(event.Event) bool) int {
	n := 0
	for _, ev := range r.all() {
		if match(ev) {
			n++
		}
	}
	return n
}

// wait returns the first event that matches, waiting for it to arrive.
func (r *recorder) wait(t testing.TB, what string, match func(event.Event) bool) event.Event {
	t.Helper()
	return r.waitFrom(t, 0, what, match)
}

// waitFrom is wait that ignores the first `from` events.
func (r *recorder) waitFrom(t testing.TB, from int, what string, match func(event.Event) bool) event.Event {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		for i := from; i < len(r.evs); i++ {
			if match(r.evs[i]) {
				ev := r.evs[i]
				r.mu.Unlock()
				return ev
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-r.done:
			r.mu.Lock()
			for i := from; i < len(r.evs); i++ {
				if match(r.evs[i]) {
					ev := r.evs[i]
					r.mu.Unlock()
					return ev
				}
			}
			r.mu.Unlock()
			t.Fatalf("event stream ended without %s; events:\n%s", what, r.dump())
		case <-deadline.C:
			t.Fatalf("no %s within %s; events:\n%s", what, waitLimit, r.dump())
		}
	}
}

// len is the number of events so far.
func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.evs)
}

// dump formats the events for a failure message.
func (r *recorder) dump() string {
	var b strings.Builder
	for i, ev := range r.all() {
		fmt.Fprintf(&b, "  %3d %s", i, describeEvent(ev))
		b.WriteByte('\n')
	}
	return b.String()
}

func describeEvent(ev event.Event) string {
	s := ev.Kind.String()
	if !ev.RequestID.IsZero() {
		s += " id=" + ev.RequestID.String()
	}
	if ev.Internal {
		s += " internal"
	}
	if ev.Kind == event.Sent || ev.Kind == event.Received || ev.Kind == event.Malformed {
		raw := string(ev.Raw)
		if len(raw) > 160 {
			raw = raw[:160] + "…"
		}
		s += " " + raw
	}
	if ev.Status != 0 {
		s += fmt.Sprintf(" status=%d", ev.Status)
	}
	if ev.ByClient {
		s += " by_client"
	}
	if ev.LostConnection {
		s += " lost"
	}
	if ev.Signal != event.SignalNone {
		s += " signal=" + ev.Signal.String()
	}
	if ev.Text != "" {
		s += " text=" + ev.Text
	}
	if ev.Err != nil {
		s += " err=" + ev.Err.Error()
	}
	return s
}

// event.Event matchers.

func kind(k event.Kind) func(event.Event) bool {
	return func(ev event.Event) bool { return ev.Kind == k }
}

// responseTo matches the response to id.
func responseTo(id wire.ID) func(event.Event) bool {
	return func(ev event.Event) bool {
		return ev.Kind == event.Received && ev.Msg.IsResponse() && ev.RequestID == id
	}
}

// progressFor matches a progress notification carrying token.
func progressFor(token wire.ID) func(event.Event) bool {
	return func(ev event.Event) bool {
		if ev.Kind != event.Received || ev.Msg.Method != wire.NotifyProgress {
			return false
		}
		p, err := wire.DecodeProgress(ev.Msg.Params)
		return err == nil && p.Token == token
	}
}

func streamClosed(id wire.ID) func(event.Event) bool {
	return func(ev event.Event) bool { return ev.Kind == event.StreamClosed && ev.RequestID == id }
}

func failed(id wire.ID) func(event.Event) bool {
	return func(ev event.Event) bool { return ev.Kind == event.RequestFailed && ev.RequestID == id }
}

// connectClient creates and connects a client, records its events, and
// closes it when the test ends.
func connectClient(t testing.TB, cfg client.Config) (*client.Client, *recorder, event.ConnInfo) {
	t.Helper()
	c, rec := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v\nevents:\n%s", err, rec.dump())
	}
	return c, rec, info
}

// newClient creates a client and records its events; Close runs at cleanup.
func newClient(t testing.TB, cfg client.Config) (*client.Client, *recorder) {
	t.Helper()
	c, err := client.New(cfg)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	rec := record(c)
	t.Cleanup(func() {
		c.Close()
		<-rec.done
	})
	return c, rec
}

// toolCall builds tools/call params.
func toolCall(name string, args any) json.RawMessage {
	b, err := json.Marshal(map[string]any{"name": name, "arguments": args})
	if err != nil {
		panic(err)
	}
	return b
}

// send sends a tracked request with the progress token equal to its ID, as
// the session tracker does.
func send(t testing.TB, c *client.Client, id int64, method string, params json.RawMessage) wire.ID {
	t.Helper()
	rid := wire.IntID(id)
	if err := c.Send(context.Background(), client.Request{ID: rid, Method: method, Params: params, ProgressToken: rid}); err != nil {
		t.Fatalf("Send %s: %v", method, err)
	}
	return rid
}

// lineTap records the newline-delimited messages flowing through a reader:
// it sits between the client's stdin and an in-process server, to assert
// exactly what the client put on the wire.
type lineTap struct {
	r  io.ReadCloser
	pw *io.PipeWriter
	pr *io.PipeReader

	mu      sync.Mutex
	lines   []string
	changed chan struct{}
	done    chan struct{}
}

// tap returns a reader that yields what r yields and records every line.
func tap(r io.ReadCloser) *lineTap {
	pr, pw := io.Pipe()
	lt := &lineTap{r: r, pr: pr, pw: pw, changed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(lt.done)
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				lt.mu.Lock()
				lt.lines = append(lt.lines, strings.TrimRight(string(line), "\r\n"))
				close(lt.changed)
				lt.changed = make(chan struct{})
				lt.mu.Unlock()
				if _, werr := pw.Write(line); werr != nil {
					r.Close()
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return lt
}

func (lt *lineTap) Read(p []byte) (int, error) { return lt.pr.Read(p) }

// Close ends the tap the way closing a pipe's read end would.
func (lt *lineTap) Close() error {
	lt.pr.Close()
	return lt.r.Close()
}

func (lt *lineTap) all() []string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return append([]string(nil), lt.lines...)
}

// wait returns the first recorded line containing substr.
func (lt *lineTap) wait(t testing.TB, substr string) string {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		lt.mu.Lock()
		for _, l := range lt.lines {
			if strings.Contains(l, substr) {
				lt.mu.Unlock()
				return l
			}
		}
		changed := lt.changed
		lt.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the server never read a line containing %q; it read:\n%s", substr, strings.Join(lt.all(), "\n"))
		}
	}
}

// quietly waits d for nothing in particular: the bounded window in which a
// test checks that something does NOT happen.
func quietly(d time.Duration) { time.Sleep(d) }
