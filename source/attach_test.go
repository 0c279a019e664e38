package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/event"
	"inflight/trace"
	"inflight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// drain takes every item of a source until it ends.
func drain(t *testing.T, s Source) []Item {
	t.Helper()
	var items []Item
	timeout := time.After(5 * time.Second)
	for {
		select {
		case it, ok := <-s.Items():
			if !ok {
				return items
			}
			items = append(items, it)
		case <-timeout:
			t.Fatalf("the source did not end; %d items so far", len(items))
		}
	}
}

// TestAttachReadsTheStream: a proxy's lines, written as its recorder
// writes them, come out decoded and in order; a line that is not a record
// is skipped; the stream's clean end is no error.
func TestAttachReadsTheStream(t *testing.T) {
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, t0, nil)
	tw.SetSenders("host", "server")
	tw.SetPositions(true)
	call := wire.Request(wire.IntID(1), "tools/call", []byte(`{"name":"slow"}`))
	msg, _ := wire.Decode(call)
	if err := tw.Judged(event.Event{Kind: event.Sent, Time: t0.Add(10 * time.Millisecond), RequestID: wire.IntID(1), Raw: call, Msg: msg}, ""); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("not a record\n")
	answer := wire.ResultResponse(wire.IntID(1), []byte(`{}`))
	amsg, _ := wire.Decode(answer)
	_ = tw.Judged(event.Event{Kind: event.Received, Time: t0.Add(30 * time.Millisecond), RequestID: wire.IntID(1), Raw: answer, Msg: amsg, StreamEnd: 42}, "late")
	id := wire.IntID(1)
	_ = tw.Write(trace.Record{MS: 31, Dir: trace.DirLocal, Event: trace.EventState, ID: &id, State: "completed"})
	_ = tw.Close()

	a := NewAttach(&buf, AttachConfig{Proxy: Proxy{Name: "p", Start: t0}})
	items := drain(t, a)
	if err := a.Err(); err != nil {
		t.Errorf("a clean end: %v", err)
	}
	if len(items) != 3 {
		t.Fatalf("%d items, want 3: %+v", len(items), items)
	}
	if ev := items[0].Event; ev.Kind != event.Sent || ev.RequestID != wire.IntID(1) || !ev.Time.Equal(t0.Add(10*time.Millisecond)) || string(ev.Raw) != string(call) {
		t.Errorf("first: %+v", ev)
	}
	if it := items[1]; it.Event.Kind != event.Received || it.Verdict != "late" || it.Event.StreamEnd != 42 || !it.Event.Time.Equal(t0.Add(30*time.Millisecond)) {
		t.Errorf("second: %+v", it)
	}
	if in, ok := items[2].Info.(TrackerState); !ok || in.State != "completed" || in.ID != wire.IntID(1) {
		t.Errorf("third: %+v", items[2])
	}
	if a.Proxy().Name != "p" || a.Acts() {
		t.Errorf("proxy %+v, acts %v", a.Proxy(), a.Acts())
	}
	if err := a.Act("hold", wire.IntID(1), 0); err == nil {
		t.Error("a watch-only view wrote a command")
	}
}

type brokenReader struct{ r io.Reader }

func (b brokenReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

// TestAttachBrokenStream: what came before a broken stream is delivered,
// and Err says why it ended.
func TestAttachBrokenStream(t *testing.T) {
	r := brokenReader{strings.NewReader(`{"ms":1,"dir":"local","event":"stderr","text":"a"}` + "\n")}
	a := NewAttach(r, AttachConfig{Proxy: Proxy{Start: t0}})
	items := drain(t, a)
	if len(items) != 1 || items[0].Event.Text != "a" {
		t.Errorf("items %+v", items)
	}
	if err := a.Err(); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("err %v", err)
	}
}

// lockedBuffer is a writer the commands of several goroutines go to.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

// TestAttachAct: a command goes to the proxy as one line, whole, however
// many are written at once.
func TestAttachAct(t *testing.T) {
	var w lockedBuffer
	encode := func(act string, id wire.ID, after time.Duration) []byte {
		return fmt.Appendf(nil, "%s %s %s\n", act, id, after)
	}
	a := NewAttach(strings.NewReader(""), AttachConfig{Commands: &w, Encode: encode})
	drain(t, a)
	if !a.Acts() {
		t.Fatal("a view with a command writer does not act")
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := a.Act("delay", wire.IntID(int64(i)), time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(w.b.String(), "\n"), "\n")
	if len(lines) != 20 || w.writes != 20 {
		t.Fatalf("%d lines in %d writes: %q", len(lines), w.writes, w.b.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "delay ") || !strings.HasSuffix(l, " 1s") {
			t.Errorf("line %q", l)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestAttachActFails(t *testing.T) {
	a := NewAttach(strings.NewReader(""), AttachConfig{Commands: failingWriter{}, Encode: func(string, wire.ID, time.Duration) []byte { return []byte("x\n") }})
	drain(t, a)
	if err := a.Act("hold", wire.IntID(1), 0); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("err %v", err)
	}
}
