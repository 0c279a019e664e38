package httptap

import (
	"strings"
	"testing"
	"time"

	"inflight/event"
)

// The tap cuts a stream into the events a reader would see, however the
// reads cut the bytes: lines split across reads, CRLF split between two,
// multi-line data, comments, an event of an id alone, and what a broken
// stream left of its last event.
func TestSSETapCutsEventsAcrossReads(t *testing.T) {
	stream := ": hello\r\nid: 1\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent: endpoint\ndata: /messages\n\nid: 7\n\n" + "data: cut"
	for size := 1; size <= len(stream); size++ {
		var x event.HTTPExchange
		var tap sseTap
		base := time.Unix(1000, 0)
		for i := 0; i < len(stream); i += size {
			tap.feed([]byte(stream[i:min(i+size, len(stream))]), base.Add(time.Duration(i)*time.Millisecond), &x)
		}
		tap.flush(base.Add(time.Hour), &x)
		got := make([]string, len(x.SSE))
		for i, e := range x.SSE {
			got[i] = e.Event + "|" + e.ID + "|" + e.Data
		}
		want := []string{"|1|{\"a\":\n1}", "endpoint||/messages", "|7|", "||cut"}
		if strings.Join(got, ";") != strings.Join(want, ";") {
			t.Fatalf("reads of %d bytes: %q, want %q", size, got, want)
		}
		// Each event is stamped with the read that ended it; the cut one
		// with the stream's end.
		if x.SSE[0].Time.After(x.SSE[1].Time) || (size == 1 && !x.SSE[0].Time.Before(x.SSE[1].Time)) || !x.SSE[3].Time.Equal(base.Add(time.Hour)) {
			t.Errorf("reads of %d bytes: times %v", size, []time.Time{x.SSE[0].Time, x.SSE[1].Time, x.SSE[3].Time})
		}
	}
}

// The tap keeps at most MaxExchangeEvents events and MaxExchangeBody bytes
// of their data, and counts the rest.
func TestSSETapIsBounded(t *testing.T) {
	var x event.HTTPExchange
	var tap sseTap
	now := time.Now()
	for range event.MaxExchangeEvents + 5 {
		tap.feed([]byte("data: x\n\n"), now, &x)
	}
	if len(x.SSE) != event.MaxExchangeEvents || x.SSEDropped != 5 || x.Truncated != 5 {
		t.Errorf("%d events kept, %d dropped, %d bytes truncated", len(x.SSE), x.SSEDropped, x.Truncated)
	}
	x, tap = event.HTTPExchange{}, sseTap{}
	big := strings.Repeat("y", event.MaxExchangeBody-10)
	tap.feed([]byte("data: "+big+"\n\ndata: 0123456789abcdef\n\n"), now, &x)
	if len(x.SSE) != 2 || len(x.SSE[1].Data) != 10 || x.Truncated != 6 {
		t.Errorf("%d events, the second %d bytes, %d truncated", len(x.SSE), len(x.SSE[1].Data), x.Truncated)
	}
}
