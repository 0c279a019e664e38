package client_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"inflight/client"
	"inflight/session"
	"inflight/wire"
)

// A well-behaved flood: the server writes progress until it reads the
// cancel, then stops and answers nothing. When inflight's consumer falls
// behind, the stdout pipe fills with lines written before the cancel, read
// after it; each event says where it ends in the server's output and the
// cancel says how much the server had written when it left, so the tracker
// calls those crossed, however late they are read. By time alone (found in
// review) a server that did everything right showed ~500 "late"
// notifications, one pipe's worth.
func TestPipedLinesWrittenBeforeTheCancelCrossedIt(t *testing.T) {
	if !pipeCountable() {
		t.Skip("the bytes waiting in a pipe are counted on Linux only")
	}
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var cancelled atomic.Bool
	var afterCancel atomic.Int64 // lines the server began after it read the cancel
	peerDone := make(chan struct{})
	go func() {
		defer close(peerDone)
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		send := func(b []byte) bool { _, err := outW.Write(append(b, '\n')); return err == nil }
		for sc.Scan() {
			m, err := wire.Decode(sc.Bytes())
			if err != nil {
				continue
			}
			switch m.Method {
			case wire.MethodDiscover:
				send(wire.ErrorResponse(m.ID, wire.CodeMethodNotFound, "Method not found"))
			case wire.MethodInitialize:
				send(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"flood","version":"1"}}`)))
			case wire.NotifyCancelled:
				cancelled.Store(true)
			case wire.MethodToolsCall:
				go func() {
					for i := 1; ; i++ {
						if cancelled.Load() {
							return
						}
						line := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d,"message":"line %08d of a flood"}}`, i, i)
						if !send(line) {
							return
						}
						if cancelled.Load() {
							afterCancel.Add(1)
						}
					}
				}()
			}
		}
	}()
	c, err := client.New(client.Config{Pipes: &client.Pipes{Stdin: inW, Stdout: outR}, ProtocolVersion: wire.Version20251125, EventBuffer: 16})
	if err != nil {
		t.Fatal(err)
	}
	tr := session.NewTracker(session.Config{LateWindow: 300 * time.Millisecond})
	drain := func(until func() bool, bound time.Duration) {
		deadline := time.After(bound)
		for !until() {
			select {
			case ev := <-c.Events():
				tr.Apply(ev)
			case <-deadline:
				return
			}
		}
	}
	connected := make(chan error, 1)
	go func() { _, err := c.Connect(t.Context()); connected <- err }()
	var cerr error
	drain(func() bool {
		select {
		case cerr = <-connected:
			return true
		default:
			return false
		}
	}, 10*time.Second)
	if cerr != nil {
		t.Fatal(cerr)
	}
	t.Cleanup(func() {
		go func() {
			for range c.Events() {
			}
		}()
		_ = c.Close()
		inR.Close()
		<-peerDone
	})
	r := tr.Begin(wire.MethodToolsCall, toolCall("flood", nil), session.RequestOptions{}, time.Now())
	if err := c.Send(t.Context(), client.Request{ID: r.ID, Method: wire.MethodToolsCall, Params: toolCall("flood", nil), ProgressToken: r.ProgressToken}); err != nil {
		t.Fatal(err)
	}
	drain(func() bool { return r.Progress.Count > 100 }, 10*time.Second)
	// The consumer falls behind: the reader blocks on the full channel, and
	// the server's lines pile up in the pipe (64 KiB on Linux).
	time.Sleep(200 * time.Millisecond)
	if _, err := tr.RequestCancel(r.ID, "user", session.CauseUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cancel(r.ID, "user"); err != nil {
		t.Fatal(err)
	}
	// Everything the pipe held, and whatever followed, until 200ms pass
	// with nothing.
	for quiet := time.NewTimer(200 * time.Millisecond); ; {
		select {
		case ev := <-c.Events():
			tr.Apply(ev)
			quiet.Reset(200 * time.Millisecond)
			continue
		case <-quiet.C:
		}
		break
	}
	begun := afterCancel.Load()
	t.Logf("crossed %d, late %d; the server began %d lines after it read the cancel", r.Late.ProgressCrossed, r.Late.ProgressAfterCancel, begun)
	if r.Late.ProgressCrossed < 200 {
		t.Errorf("%d progress crossed the cancel: the pipe held hundreds written before it", r.Late.ProgressCrossed)
	}
	// At most what the server began writing after it read the cancel, and
	// the one line a full pipe held back when the cancel left.
	if int64(r.Late.ProgressAfterCancel) > begun+1 {
		t.Errorf("%d progress judged late from a server that began %d lines after it read the cancel", r.Late.ProgressAfterCancel, begun)
	}
}

func pipeCountable() bool { return runtime.GOOS == "linux" }
