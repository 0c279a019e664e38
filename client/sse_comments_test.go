package client

import (
	"io"
	"strings"
	"testing"
)

// A flood of SSE comments (keep-alives) with no event between them is not
// an oversized event: comments take no room, so the event after them is
// read. Before, their bytes counted toward the event, and a server that
// sent keep-alives for long enough (or fast enough) had its stream ended
// with "SSE event larger than 33554432 bytes", which no event was.
func TestSSECommentsDoNotCountTowardTheEventLimit(t *testing.T) {
	const limit = 1 << 10
	in := strings.Repeat(": keep-alive\n", 10*limit/12) + "data: {}\n\n"
	evs, _, _, end := sseRead(strings.NewReader(in), limit)
	if end != io.EOF || len(evs) != 1 || string(evs[0].Data) != "{}" {
		t.Fatalf("got %d events, end %v", len(evs), end)
	}
	// A single comment line longer than the limit is still refused: it has
	// to be held to find its end.
	_, _, _, end = sseRead(strings.NewReader(":"+strings.Repeat("x", 2*limit)+"\ndata: {}\n\n"), limit)
	if end == nil || !strings.Contains(end.Error(), "1024-byte message limit") {
		t.Fatalf("a comment line over the limit ended with %v", end)
	}
	// Comments inside an event do not count either; its data does.
	in = "data: a\n" + strings.Repeat(":c\n", limit) + "data: b\n\n"
	if evs, _, _, end = sseRead(strings.NewReader(in), limit); len(evs) != 1 || string(evs[0].Data) != "a\nb" {
		t.Fatalf("got %d events, end %v", len(evs), end)
	}
}
