package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/wire"
)

// benchModel builds a model tracking n requests, the newest ones running.
func benchModel(b *testing.B, n int) *harness {
	b.Helper()
	h := newHarness(b, 140, 40)
	h.m.tracker = session.NewTracker(session.Config{HistoryLimit: n + 100})
	info := h.fake.info
	h.m.tracker.Apply(event.Event{Kind: event.Connected, Time: h.now, Info: &info})
	for i := 0; i < n; i++ {
		r := h.m.tracker.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}, h.now)
		params, _ := json.Marshal(map[string]any{"progressToken": r.ProgressToken, "progress": 3, "total": 10, "message": "step 3 of 10"})
		raw := wire.Notification(wire.NotifyProgress, params)
		msg, _ := wire.Decode(raw)
		h.m.tracker.Apply(event.Event{Kind: event.Received, Time: h.now, Raw: raw, Msg: msg})
		if i < n-50 {
			res := wire.ResultResponse(r.ID, json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`))
			rm, _ := wire.Decode(res)
			h.m.tracker.Apply(event.Event{Kind: event.Received, Time: h.now, RequestID: r.ID, Raw: res, Msg: rm})
		}
	}
	h.m.screens.followNewest(h.m.tracker)
	h.m.layout() // as Update does after every message
	return h
}

// BenchmarkView measures one frame of the request list; the list is
// virtualised, so 10 000 requests should cost what 1 000 cost.
func BenchmarkView(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			h := benchModel(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.now = h.now.Add(100 * time.Millisecond)
				_ = h.m.View()
			}
		})
	}
}

// BenchmarkUpdateProgressBatch measures applying one pump batch of
// progress notifications, the work between two frames during a flood.
func BenchmarkUpdateProgressBatch(b *testing.B) {
	h := benchModel(b, 100)
	r := h.m.tracker.At(h.m.tracker.Len() - 1)
	evs := make([]event.Event, maxBatch)
	for i := range evs {
		params, _ := json.Marshal(map[string]any{"progressToken": r.ProgressToken, "progress": i + 4, "message": "flood"})
		raw := wire.Notification(wire.NotifyProgress, params)
		msg, _ := wire.Decode(raw)
		evs[i] = event.Event{Kind: event.Received, Time: h.now, Raw: raw, Msg: msg}
	}
	items := bareItems(evs)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.m.Update(eventsMsg{gen: h.m.conn.gen, items: items})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*maxBatch), "ns/event")
	b.ReportMetric(float64(b.N*maxBatch)/b.Elapsed().Seconds(), "progress/s")
}

// BenchmarkUpdateProgressBatchRedacted is BenchmarkUpdateProgressBatch with
// secrets configured, as a user with an Authorization header has them:
// every message's bytes are redacted before the session keeps them, with
// the redactor's byte function or (as the TUI is given today) only its
// string function.
func BenchmarkUpdateProgressBatchRedacted(b *testing.B) {
	red := redact.New(http.Header{"Authorization": {"Bearer sk-live-abcdef123456"}}, []string{"GITHUB_TOKEN=ghp_0123456789"}, "")
	for _, c := range []struct {
		name string
		set  func(o *Options)
	}{
		{"none", func(o *Options) {}},
		{"Redact", func(o *Options) { o.Redact, o.RedactBytes = red.String, nil }},
		{"RedactBytes", func(o *Options) { o.Redact, o.RedactBytes = red.String, red.Bytes }},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := benchModel(b, 100)
			c.set(&h.m.opts)
			if h.m.opts.Redact != nil && h.m.opts.RedactBytes == nil {
				h.m.opts.RedactBytes = redactBytesWith(h.m.opts.Redact) // what New derives
			}
			r := h.m.tracker.At(h.m.tracker.Len() - 1)
			evs := make([]event.Event, maxBatch)
			for i := range evs {
				params, _ := json.Marshal(map[string]any{"progressToken": r.ProgressToken, "progress": i + 4, "message": "flood"})
				raw := wire.Notification(wire.NotifyProgress, params)
				msg, _ := wire.Decode(raw)
				evs[i] = event.Event{Kind: event.Received, Time: h.now, Raw: raw, Msg: msg}
			}
			items := bareItems(evs)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.m.Update(eventsMsg{gen: h.m.conn.gen, items: items})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*maxBatch), "ns/event")
			b.ReportMetric(float64(b.N*maxBatch)/b.Elapsed().Seconds(), "progress/s")
		})
	}
}

// BenchmarkViewLogRedacted is a frame of the protocol log whose messages
// hold JSON escapes, with secrets configured: View's last pass compares
// the frame's escaped text decoded.
func BenchmarkViewLogRedacted(b *testing.B) {
	red := redact.New(http.Header{"Authorization": {"Bearer sk-live-abcdef123456"}}, nil, "")
	h := benchModel(b, 200)
	h.m.opts.Redact = red.String
	for i := 0; i < 50; i++ {
		raw := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"path a\/b\/c caf\u00e9 %d"}}`, i))
		msg, _ := wire.Decode(raw)
		h.m.tracker.Apply(event.Event{Kind: event.Received, Time: h.now, Raw: raw, Msg: msg})
	}
	h.key("l")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.now = h.now.Add(100 * time.Millisecond)
		_ = h.m.View()
	}
}
