package proxy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/trace"
)

// awkward is traffic a forwarder could get wrong: bytes that are not
// UTF-8, NULs, CRLF, a bare CR, a megabyte line, empty lines, a line cut
// across many writes, and no newline at the end.
func awkward(seed byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	b.Write([]byte{0, 1, 2, 0xff, 0xfe, '\r', '\n', '\n', '\r', 'x', '\n'})
	b.WriteString(strings.Repeat("é", 3) + "\r\n")
	long := bytes.Repeat([]byte{'a' + seed%26}, 1<<20)
	b.Write(long)
	b.WriteByte('\n')
	for i := 0; i < 300; i++ {
		b.WriteByte(byte(i) ^ seed)
	}
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/message"` + "\n")
	b.WriteString(`{"partial": "no newline at the end`)
	return b.Bytes()
}

// TestForwardsEveryByte: what the server receives is exactly what the host
// wrote, and what the host receives exactly what the server wrote, both
// ways at once, in odd-sized pieces.
func TestForwardsEveryByte(t *testing.T) {
	t.Run("plain", func(t *testing.T) { forwardsEveryByte(t, Options{}) })
	// With a rule watching the host's ping, the server's output goes line
	// by line through the gate, which must change nothing it does not act
	// on: a line kept back until its end, the megabyte line, the last line
	// with no newline.
	hold, err := ParseRule("ping: hold")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("rule watching", func(t *testing.T) { forwardsEveryByte(t, Options{Rules: []Rule{hold}}) })
	t.Run("rule watching, short lines", func(t *testing.T) {
		forwardsEveryByte(t, Options{Rules: []Rule{hold}, MaxLineBytes: 4096})
	})
}

func forwardsEveryByte(t *testing.T, opts Options) {
	dir := t.TempDir()
	toHost, toServer := awkward(1), awkward(7)
	sendFile, gotFile := filepath.Join(dir, "send"), filepath.Join(dir, "got")
	if err := os.WriteFile(sendFile, toHost, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, env := helper(t, "script", "SEND="+sendFile, "GOT="+gotFile, "WAIT_FIRST=1")
	h := newHost(t)
	var lines int
	opts.Env = env
	opts.OnEvent = func(ev event.Event, _ []session.Change, _ *session.Tracker) {
		if ev.Kind == event.Sent || ev.Kind == event.Received || ev.Kind == event.Malformed {
			lines++
		}
	}
	var traceBuf syncBuffer
	tw := trace.NewWriter(&traceBuf, time.Now(), nil)
	opts.Trace = tw
	wait := run(t, h, cmd, opts)
	for i, n := 0, 1; i < len(toServer); i, n = i+n, n*7%3001+1 {
		if _, err := h.inW.Write(toServer[i:min(i+n, len(toServer))]); err != nil {
			t.Fatal(err)
		}
	}
	h.inW.Close()
	res := wait()
	if res.End != EndHostClosed || res.Stopped != "" {
		t.Errorf("end %v, stopped %q: want the host's close, and the server gone when its stdin closed", res.End, res.Stopped)
	}
	if got := h.received(); !bytes.Equal(got, toHost) {
		t.Errorf("the host received %d bytes, not the %d the server sent (first difference at %d)", len(got), len(toHost), firstDiff(got, toHost))
	}
	got, err := os.ReadFile(gotFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, toServer) {
		t.Errorf("the server received %d bytes, not the %d the host sent (first difference at %d)", len(got), len(toServer), firstDiff(got, toServer))
	}
	// Every non-empty line of both directions was recorded: 9 each way
	// (the 300 bytes hold two newlines of their own).
	if lines != 18 {
		t.Errorf("recorded %d lines, want 18", lines)
	}
	_ = tw.Close()
	// With the rule, its match was recorded: the gate was watching the
	// server's output (the server sends only after the host's ping).
	if matched := strings.Contains(traceBuf.String(), `"event":"injected"`); matched != (len(opts.Rules) > 0) {
		t.Errorf("rule matched %v with %d rules", matched, len(opts.Rules))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestFloodWithSlowRecorder: a server floods progress while the recorder
// is slow. The host gets every byte, the queue never holds more than its
// bound, and the record says what it skipped.
func TestFloodWithSlowRecorder(t *testing.T) {
	const n = 100000
	cmd, env := helper(t, "flood", "N=100000")
	h := newHost(t)
	var notes []string
	var recorded int
	const bound = 256 << 10
	wait := run(t, h, cmd, Options{Env: env, QueueBytes: bound, OnEvent: func(ev event.Event, _ []session.Change, _ *session.Tracker) {
		switch ev.Kind {
		case event.Note:
			notes = append(notes, ev.Text)
		case event.Received:
			recorded++
			time.Sleep(20 * time.Microsecond)
		}
	}})
	// Wait for the whole flood to reach the host, then close.
	deadline := time.Now().Add(20 * time.Second)
	for h.gotLen() < n*80 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	h.inW.Close()
	res := wait()
	got := h.received()
	if c := bytes.Count(got, []byte("\n")); c != n {
		t.Fatalf("the host received %d lines, want %d", c, n)
	}
	if !bytes.HasSuffix(got, []byte(`"progress":100000}}`+"\n")) {
		t.Errorf("the last line is not the flood's last: %q", got[len(got)-40:])
	}
	if res.PeakQueueBytes > bound {
		t.Errorf("the queue held %d bytes, over its bound of %d", res.PeakQueueBytes, bound)
	}
	skipped := false
	for _, s := range notes {
		skipped = skipped || strings.Contains(s, "progress notifications and 0 other lines were forwarded but not recorded")
	}
	if !skipped || recorded >= n {
		t.Errorf("recorded %d of %d with a slow recorder, notes %q: want progress skipped and said so", recorded, n, notes)
	}
	t.Logf("recorded %d of %d progress notifications; queue peak %d bytes", recorded, n, res.PeakQueueBytes)
}
