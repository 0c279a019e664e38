package ui

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// sseHarness is a harness connected over HTTP+SSE (2024-11-05) with a
// stubborn call cancelled and answered late on the shared stream.
func sseHarness(t *testing.T, w, hgt int) *harness {
	h := newHarness(t, w, hgt)
	h.m.opts.Target, h.m.opts.Transport = "http://127.0.0.1:8080/sse", "sse"
	h.fake.info = event.ConnInfo{Transport: event.TransportSSE, Era: event.EraLegacy, ProtocolVersion: wire.Version20241105,
		ServerName: "inflight-demo", ServerVersion: "0.1.0"}
	h.connect()
	late := h.sendTool("stubborn")
	h.progress(late, 1, 10, "step 1 of 10")
	h.advance(500 * time.Millisecond)
	h.run(h.m.cancel(wire.IntID(late), "user requested cancellation", 1))
	h.cancelSent(late, event.SignalNotification)
	h.advance(time.Second)
	h.progress(late, 2, 10, "step 2 of 10")
	h.advance(1300 * time.Millisecond)
	h.answer(late, `{"content":[{"type":"text","text":"stubborn finished anyway"}]}`)
	h.sendTool("slow")
	h.progress(late+1, 3, 10, "step 3 of 10")
	h.advance(200 * time.Millisecond)
	return h
}

// The header says the connection is HTTP+SSE, and when its one stream ends
// the banner says that the requests in flight went with it.
func TestGoldenSSEViews(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run("list-"+suffix, func(t *testing.T) {
			h := sseHarness(t, size.w, size.h)
			h.golden()
		})
		t.Run("stream-closed-"+suffix, func(t *testing.T) {
			h := sseHarness(t, size.w, size.h)
			h.events(event.Event{Kind: event.TransportClosed, Err: errors.New("the server closed the HTTP+SSE stream; requests in flight are lost")})
			h.golden()
		})
	}
}
