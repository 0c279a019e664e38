package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/trace"
	"inflight/wire"
)

// viewerConn is a viewer on a proxy's attach socket that writes commands
// and keeps every line the proxy streams to it.
type viewerConn struct {
	t    *testing.T
	conn net.Conn
	mu   sync.Mutex
	recs []trace.Record
	done chan struct{}
}

func attachViewer(t *testing.T, dir, name string) *viewerConn {
	t.Helper()
	var conn net.Conn
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c, err := Attach(dir, name)
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attach: %v", err)
		}
	}
	v := &viewerConn{t: t, conn: conn, done: make(chan struct{})}
	br := bufio.NewReader(conn)
	if _, err := ReadHello(br); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(v.done)
		tr := trace.NewReader(br)
		for {
			rec, err := tr.Next()
			var le *trace.LineError
			if errors.As(err, &le) {
				t.Errorf("the stream holds a line that is not a trace record: %v", err)
				continue
			}
			if err != nil {
				return
			}
			v.mu.Lock()
			v.recs = append(v.recs, rec)
			v.mu.Unlock()
		}
	}()
	t.Cleanup(func() { conn.Close(); <-v.done })
	return v
}

// await waits up to 5s for a record f accepts.
func (v *viewerConn) await(what string, f func(*trace.Record) bool) trace.Record {
	v.t.Helper()
	return v.awaitFrom(0, what, f)
}

// awaitFrom is await from the from'th record on.
func (v *viewerConn) awaitFrom(from int, what string, f func(*trace.Record) bool) trace.Record {
	v.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		v.mu.Lock()
		for i := from; i < len(v.recs); i++ {
			if f(&v.recs[i]) {
				rec := v.recs[i]
				v.mu.Unlock()
				return rec
			}
		}
		v.mu.Unlock()
		if time.Now().After(deadline) {
			v.t.Fatalf("the viewer never got %s", what)
		}
	}
}

// command writes one command line and waits for its reply.
func (v *viewerConn) command(c Command) trace.Record {
	v.t.Helper()
	v.mu.Lock()
	n := len(v.recs)
	v.mu.Unlock()
	if _, err := v.conn.Write(EncodeCommand(c)); err != nil {
		v.t.Fatal(err)
	}
	return v.awaitFrom(n, "the reply to "+c.Act, func(r *trace.Record) bool { return r.Event == trace.EventReply })
}

// hostCall calls a demo tool from the host in the background.
func (r *ruleRun) hostCall(tool string, seconds float64, steps int) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, _, err := r.call(tool, seconds, steps, 20*time.Second)
		done <- err
	}()
	return done
}

// sentID waits for the host to write its tools/call of tool and returns
// its ID.
func (r *ruleRun) sentID(tool string) wire.ID {
	r.t.Helper()
	l := r.wire.await(r.t, true, func(m wire.Message) bool {
		return m.Kind == wire.KindRequest && m.Method == wire.MethodToolsCall && wire.Target(m.Method, m.Params) == tool
	})
	return l.msg.ID
}

func startActable(t *testing.T, set func(*Options)) (*ruleRun, *viewerConn) {
	dir := privateTemp(t)
	r := startProxy(t, func(o *Options) {
		o.SocketDir = dir
		if set != nil {
			set(o)
		}
	})
	return r, attachViewer(t, dir, "demo")
}

// TestActHoldThenRelease: a hold on a request in flight keeps the server's
// response from the host until the release; then the host gets exactly the
// server's bytes. The viewer sees its replies and the injected lines.
func TestActHoldThenRelease(t *testing.T) {
	r, v := startActable(t, nil)
	done := r.hostCall("slow", 0.2, 2)
	id := r.sentID("slow")
	if rep := v.command(Command{Act: "hold", ID: &id}); rep.Code != ReplyDone {
		t.Fatalf("hold refused: %+v", rep)
	}
	v.await("the acting line", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseActing && rec.Injected == "hold"
	})
	held := v.await("the server's response, marked held", func(rec *trace.Record) bool {
		return rec.Dir == trace.DirIn && rec.ID != nil && *rec.ID == id && rec.Injected == "hold"
	})
	v.await("the holding line", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseHolding
	})
	select {
	case err := <-done:
		t.Fatalf("the host's call ended while held: %v", err)
	case <-time.After(150 * time.Millisecond):
	}
	if _, ok := r.wire.find(false, isResponseTo(id)); ok {
		t.Fatal("the host got the held response")
	}
	if rep := v.command(Command{Act: "release", ID: &id}); rep.Code != ReplyDone {
		t.Fatalf("release refused: %+v", rep)
	}
	if err := <-done; err != nil {
		t.Fatalf("the released call failed: %v", err)
	}
	got := r.wire.await(t, false, isResponseTo(id))
	if got.raw != string(held.Msg) {
		t.Errorf("the host got\n%s\nthe server sent\n%s", got.raw, held.Msg)
	}
	v.await("the released line", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseReleased && strings.Contains(rec.Text, "on request, held")
	})
	// Nothing more is held, nor in flight.
	if rep := v.command(Command{Act: "release", ID: &id}); rep.Code != ReplyRefused || !strings.Contains(rep.Text, "nothing of request") {
		t.Errorf("a second release: %+v", rep)
	}
}

// TestActHoldTakenBack: a release before the response came takes the
// armed hold back: the response then passes on untouched, at once, and
// nothing is held.
func TestActHoldTakenBack(t *testing.T) {
	r, v := startActable(t, nil)
	done := r.hostCall("slow", 0.4, 2)
	id := r.sentID("slow")
	if rep := v.command(Command{Act: "hold", ID: &id}); rep.Code != ReplyDone {
		t.Fatalf("hold refused: %+v", rep)
	}
	rep := v.command(Command{Act: "release", ID: &id})
	if rep.Code != ReplyDone || !strings.Contains(rep.Text, "took back") {
		t.Fatalf("release of an armed hold: %+v", rep)
	}
	v.await("the taken-back line", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseTakenBack && rec.Injected == "hold" && strings.Contains(rec.Text, "took back")
	})
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the call failed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the response was held though its hold was taken back")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, rec := range v.recs {
		if rec.Event == trace.EventInjected && rec.Code == PhaseHolding {
			t.Errorf("held after the hold was taken back: %+v", rec)
		}
	}
}

// TestActDelay: a delay passes the response on D after it came.
func TestActDelay(t *testing.T) {
	r, v := startActable(t, nil)
	done := r.hostCall("slow", 0.1, 1)
	id := r.sentID("slow")
	if rep := v.command(Command{Act: "delay", ID: &id, After: "300ms"}); rep.Code != ReplyDone {
		t.Fatalf("delay refused: %+v", rep)
	}
	if err := <-done; err != nil {
		t.Fatalf("the delayed call failed: %v", err)
	}
	held := v.await("the holding line", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseHolding
	})
	rel := v.await("the released line", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseReleased
	})
	if d := time.Duration((rel.MS - held.MS) * float64(time.Millisecond)); d < 290*time.Millisecond {
		t.Errorf("released %s after it came, want 300ms", d)
	}
}

// TestActCancelUpstream: cancel sends the server notifications/cancelled
// for the request and answers the host with -32800; cancel-silent leaves
// the host waiting (its own timeout ends the call).
func TestActCancelUpstream(t *testing.T) {
	r, v := startActable(t, nil)
	done := r.hostCall("slow", 5, 5)
	id := r.sentID("slow")
	// Once the server runs it (go-sdk's server drops a cancel that comes
	// before the handler starts).
	r.waitStderr("slow #1: started")
	if rep := v.command(Command{Act: "cancel", ID: &id}); rep.Code != ReplyDone {
		t.Fatalf("cancel refused: %+v", rep)
	}
	var rpcErr *jsonrpc.Error
	if err := <-done; !errors.As(err, &rpcErr) || rpcErr.Code != CodeCancelledByProxy {
		t.Fatalf("the host's call ended with %v, want error %d", err, CodeCancelledByProxy)
	}
	v.await("inflight's cancel to the server", func(rec *trace.Record) bool {
		return rec.Dir == trace.DirOut && rec.By == "inflight" && strings.Contains(string(rec.Msg), `"notifications/cancelled"`) &&
			strings.Contains(string(rec.Msg), fmt.Sprintf(`"requestId":%s`, id.Raw()))
	})
	r.waitStderr("slow #1: cancelled after")
	// It is no longer in flight: a second act is refused, saying why.
	if rep := v.command(Command{Act: "hold", ID: &id}); rep.Code != ReplyRefused || !strings.Contains(rep.Text, "is not in flight: inflight cancelled it upstream already") {
		t.Errorf("hold after the cancel: %+v", rep)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	silent := make(chan error, 1)
	go func() {
		_, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 5, "steps": 5}})
		silent <- err
	}()
	id2 := r.sentID("slow")
	for id2 == id {
		time.Sleep(5 * time.Millisecond)
		l, _ := r.wire.find(true, func(m wire.Message) bool {
			return m.Kind == wire.KindRequest && m.ID != id && m.Method == wire.MethodToolsCall
		})
		id2 = l.msg.ID
	}
	if rep := v.command(Command{Act: "cancel-silent", ID: &id2}); rep.Code != ReplyDone {
		t.Fatalf("cancel-silent refused: %+v", rep)
	}
	if err := <-silent; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the host left waiting ended with %v, want its own timeout", err)
	}
}

// TestActRefusals: a command on an unknown ID, a malformed or too long
// line, and every command of a read-only proxy are refused with why; the
// stream goes on.
func TestActRefusals(t *testing.T) {
	_, v := startActable(t, nil)
	unknown := wire.IntID(99)
	for _, c := range []struct {
		line string
		want string
	}{
		{string(EncodeCommand(Command{Act: "hold", ID: &unknown})), "no request of the host's with ID 99 is in flight"},
		{string(EncodeCommand(Command{Act: "release", ID: &unknown})), "nothing of request 99 is held"},
		{`{"act":"delay","id":1}` + "\n", "delay needs an after"},
		{`{"act":"explode","id":1}` + "\n", `unknown act "explode"`},
		{`{"act":"hold"}` + "\n", "needs the id of a host request"},
		{"not json\n", "not a command"},
		{strings.Repeat("x", 2*maxCommandBytes) + "\n", "longer than 4096 bytes"},
	} {
		if _, err := io.WriteString(v.conn, c.line); err != nil {
			t.Fatal(err)
		}
		rep := v.await("the refusal of "+c.want, func(r *trace.Record) bool {
			return r.Event == trace.EventReply && strings.Contains(r.Text, c.want)
		})
		if rep.Code != ReplyRefused {
			t.Errorf("%q: %+v", c.want, rep)
		}
	}

	r2, v2 := startActable(t, func(o *Options) { o.ReadOnly = true; o.Name = "demo" })
	done := r2.hostCall("slow", 0.05, 1)
	id := r2.sentID("slow")
	rep := v2.command(Command{Act: "hold", ID: &id})
	if rep.Code != ReplyRefused || !strings.Contains(rep.Text, "read-only") {
		t.Errorf("a read-only proxy: %+v", rep)
	}
	if err := <-done; err != nil {
		t.Errorf("the call through a read-only proxy: %v", err)
	}
}

// TestReplyWaitsForTheLineEnd: a reply never lands inside a line of the
// stream that a write left unfinished.
func TestReplyWaitsForTheLineEnd(t *testing.T) {
	b := &broadcast{subs: map[*viewer]struct{}{}, limit: historyBytes, refuse: refuseNoActor}
	v := &viewer{ch: make(chan []byte, 8)}
	b.subs[v] = struct{}{}
	_, _ = b.Write([]byte(`{"ms":1,"dir":"local","event":"note","te`))
	b.reply(v, reply(Command{Act: "hold"}, errors.New("no"), 1))
	_, _ = b.Write([]byte(`xt":"x"}` + "\n"))
	var got []byte
	for len(v.ch) > 0 {
		got = append(got, <-v.ch...)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 2 || !json.Valid([]byte(lines[0])) || !strings.Contains(lines[1], `"event":"reply"`) {
		t.Errorf("the stream: %q", got)
	}
}

// TestActDropAndRace: drop keeps the response from the host for good (its
// own timeout ends the call); race holds it and passes it on the instant
// the host's cancel arrives; a held response can be acted on again.
func TestActDropAndRace(t *testing.T) {
	r, v := startActable(t, nil)
	done := make(chan error, 1)
	go func() { _, _, err := r.call("slow", 0.05, 1, 500*time.Millisecond); done <- err }()
	id := r.sentID("slow")
	if rep := v.command(Command{Act: "drop", ID: &id}); rep.Code != ReplyDone {
		t.Fatalf("drop refused: %+v", rep)
	}
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the dropped call ended with %v, want the host's own timeout", err)
	}
	if _, ok := r.wire.find(false, isResponseTo(id)); ok {
		t.Error("the host got the dropped response")
	}
	v.await("the dropped line", func(rec *trace.Record) bool { return rec.Event == trace.EventInjected && rec.Code == PhaseDropped })

	// Race: the server answers at 50ms, the host gives up at 400ms; the
	// answer goes on right after the host's cancel.
	go func() { _, _, err := r.call("slow", 0.05, 1, 400*time.Millisecond); done <- err }()
	id2 := r.wire.await(t, true, func(m wire.Message) bool {
		return m.Kind == wire.KindRequest && m.Method == wire.MethodToolsCall && m.ID != id
	}).msg.ID
	if rep := v.command(Command{Act: "race", ID: &id2}); rep.Code != ReplyDone {
		t.Fatalf("race refused: %+v", rep)
	}
	v.await("the held response", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseHolding && rec.ID != nil && *rec.ID == id2
	})
	// Held already: a second act changes what is done with it; a cancel
	// upstream is refused (the server has answered).
	if rep := v.command(Command{Act: "cancel", ID: &id2}); rep.Code != ReplyRefused || !strings.Contains(rep.Text, "answered") {
		t.Errorf("cancel on a held response: %+v", rep)
	}
	if rep := v.command(Command{Act: "race", ID: &id2}); rep.Code != ReplyDone {
		t.Errorf("race again on the held response: %+v", rep)
	}
	<-done
	cancel := r.wire.await(t, true, func(m wire.Message) bool {
		c, err := wire.DecodeCancelled(m.Params)
		return m.Method == wire.NotifyCancelled && err == nil && c.RequestID == id2
	})
	got := r.wire.await(t, false, isResponseTo(id2))
	if got.at.Before(cancel.at) {
		t.Errorf("the raced response reached the host before its cancel left")
	}
	v.await("the released line", func(rec *trace.Record) bool {
		return rec.Event == trace.EventInjected && rec.Code == PhaseReleased && rec.ID != nil && *rec.ID == id2
	})
}

// stallWriter takes writes until stalled, then blocks them until unblock:
// a host that stopped reading its stdout.
type stallWriter struct {
	mu      sync.Mutex
	stalled bool
	unblock chan struct{}
}

func (w *stallWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	s := w.stalled
	w.mu.Unlock()
	if s {
		<-w.unblock
		return 0, os.ErrClosed
	}
	return len(p), nil
}

// A viewer's release (of one response, or of all) writes the held
// response to the host; when the host has stopped reading, that write
// blocks. It must block only a goroutine the proxy's end waits for a
// bounded time (ShutdownWait), never the socket's command goroutine, which
// broadcast.close waits for without bound: told to stop, the proxy returns.
func TestActReleaseToAStuckHostDoesNotBlockStop(t *testing.T) {
	id := wire.IntID(1)
	for _, c := range []Command{{Act: ActRelease, ID: &id}, {Act: ActReleaseAll}} {
		t.Run(c.Act, func(t *testing.T) {
			dir := privateTemp(t)
			cmd, env := helper(t, "pong")
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inR.Close()
			out := &stallWriter{unblock: make(chan struct{})}
			rules, _ := ParseRules([]string{"tools/call: hold"})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = Run(ctx, Host{In: inR, Out: out}, cmd, nil, Options{Name: "stuck", Env: env, SocketDir: dir, Rules: rules,
					ShutdownWait: 300 * time.Millisecond, Stderr: &syncBuffer{}})
			}()
			defer func() {
				close(out.unblock)
				inW.Close()
				<-done
			}()
			v := attachViewer(t, dir, "stuck")
			if _, err := inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}` + "\n")); err != nil {
				t.Fatal(err)
			}
			v.await("the held response", func(r *trace.Record) bool { return r.Event == trace.EventInjected && r.Code == PhaseHolding })
			out.mu.Lock()
			out.stalled = true
			out.mu.Unlock()
			if rep := v.command(c); rep.Code != ReplyDone {
				t.Fatalf("%s refused: %+v", c.Act, rep)
			}
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Errorf("the proxy did not return 5s after it was told to stop (ShutdownWait 300ms): the %s blocks on a host that stopped reading", c.Act)
			}
		})
	}
}

// TestCommandLineHoldsOneObject: a line with a second JSON value after the
// command (two objects, or anything after the first) is refused whole,
// never run in part with the rest ignored.
func TestCommandLineHoldsOneObject(t *testing.T) {
	for _, line := range []string{
		`{"act":"release-all"}{"act":"hold","id":1}`,
		`{"act":"release-all"} {"act":"hold","id":1}`,
		`{"act":"release-all"} 7`,
		`{"act":"release-all"} x`,
	} {
		if _, _, err := parseCommand([]byte(line)); err == nil || !strings.Contains(err.Error(), "one command a line") {
			t.Errorf("%s: %v; want it refused as more than one command", line, err)
		}
		calls := 0
		rec := runCommand([]byte(line), countingActor{&calls}, "", func(time.Time) float64 { return 0 })
		if rec.Code != ReplyRefused || calls != 0 {
			t.Errorf("%s: reply %q (%s), %d acts carried out; want it refused and nothing done", line, rec.Code, rec.Text, calls)
		}
	}
	if _, _, err := parseCommand([]byte(`  {"act":"release-all"}  `)); err != nil {
		t.Errorf("one command with spaces around it: %v", err)
	}
}

// countingActor counts what it is asked to do.
type countingActor struct{ n *int }

func (a countingActor) releaseAll()                                 { *a.n++ }
func (a countingActor) releaseOne(wire.ID, time.Time) (bool, error) { *a.n++; return false, nil }
func (a countingActor) actOn(wire.ID, *Rule, time.Time) error       { *a.n++; return nil }
