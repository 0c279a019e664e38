package client_test

import (
	"io"
	"testing"

	"inflight/client"
	"inflight/event"
)

// TestStderrLinesNotTruncated: a stderr line that was kept whole reports
// nothing truncated; the terminator ("\n" or "\r\n") is not part of the
// line, so it is not a byte that was dropped.
func TestStderrLinesNotTruncated(t *testing.T) {
	_, pipes := newStdioPeer(t, legacyHandshake)
	errR, errW := io.Pipe()
	pipes.Stderr = errR
	go func() {
		_, _ = errW.Write([]byte("hello\nworld\r\n"))
		errW.Close()
	}()
	_, rec, _ := connectClient(t, client.Config{Pipes: pipes})
	for _, want := range []string{"hello", "world"} {
		ev := rec.wait(t, "stderr "+want, func(ev event.Event) bool { return ev.Kind == event.Stderr && ev.Text == want })
		if ev.Truncated != 0 {
			t.Errorf("stderr %q reported %d bytes truncated", ev.Text, ev.Truncated)
		}
	}
}
