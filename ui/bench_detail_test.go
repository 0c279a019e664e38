package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// detailBenchModel is benchModel with the detail view open on the newest
// request, a running one whose request carries a payload of n items of
// about 140 bytes (what a person opens the detail for: a big tool call).
func detailBenchModel(b *testing.B, n int) *harness {
	b.Helper()
	h := benchModel(b, 100)
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"index":%d,"name":"item %d","tags":["a","b","c"],"nested":{"x":%d,"y":"%s"}}`, i, i, i*7, strings.Repeat("z", 40))
	}
	params := json.RawMessage(`{"name":"slow","arguments":{"items":[` + strings.Join(items, ",") + `]}}`)
	r := h.m.tracker.Begin(wire.MethodToolsCall, params, sessionDefaults(), h.now)
	raw := wire.Request(r.ID, wire.MethodToolsCall, params)
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: r.ID, Raw: raw, Msg: msg})
	// Connecting sent a tools/list after it: select the payload's request.
	h.m.screens.list = h.m.screens.list.Select(r.ID, false)
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, `"index": 1,`) || !strings.Contains(s, "#"+r.ID.String()+" ") {
		b.Fatalf("the detail does not show the payload:\n%s", s)
	}
	return h
}

// detailPayloads are the payload sizes the detail benchmarks use: about
// 55 KB and 1.1 MB.
var detailPayloads = []int{400, 8000}

// BenchmarkViewDetail measures one frame of the detail view of a request
// with a large payload, nothing having changed since the last frame (the
// clock only): the body must not be built again, so a frame should cost
// the same whatever the payload's size.
func BenchmarkViewDetail(b *testing.B) {
	for _, n := range detailPayloads {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			h := detailBenchModel(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.now = h.now.Add(100 * time.Millisecond)
				_ = h.m.View()
			}
		})
	}
}

// BenchmarkUpdateProgressBatchDetail is a flood of progress on the request
// the detail view shows: one pump batch applied, then one frame, as Bubble
// Tea does. Progress changes the header, not the body.
func BenchmarkUpdateProgressBatchDetail(b *testing.B) {
	for _, n := range detailPayloads {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			h := detailBenchModel(b, n)
			r, _ := h.m.screens.selectedRequest(h.m.tracker, h.m.focus.mode)
			evs := make([]event.Event, maxBatch)
			// Each batch continues the last one: progress that went back
			// would be a violation, which the body does show.
			batch := func(k int) {
				for i := range evs {
					params, _ := json.Marshal(map[string]any{"progressToken": r.ProgressToken, "progress": k*maxBatch + i + 4, "message": "flood"})
					raw := wire.Notification(wire.NotifyProgress, params)
					msg, _ := wire.Decode(raw)
					evs[i] = event.Event{Kind: event.Received, Time: h.now, Raw: raw, Msg: msg}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				batch(i)
				items := bareItems(evs)
				b.StartTimer()
				h.m.Update(eventsMsg{gen: h.m.conn.gen, items: items})
				_ = h.m.View()
			}
			if r.Violations > 0 {
				b.Fatalf("the flood broke a rule: %d violations", r.Violations)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*maxBatch), "ns/event")
		})
	}
}
