package session

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// soak drives n requests through a tracker as a long session would: each
// gets a few progress notifications, then half complete and half are
// cancelled (a quarter of those answer late). It returns the live heap after
// a GC at each checkpoint.
func soak(b *testing.B, cfg Config, n int, checkpoints []int) []uint64 {
	b.Helper()
	tr := NewTracker(cfg)
	tr.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &event.ConnInfo{Era: event.EraModern}})
	params := json.RawMessage(`{"name":"slow","arguments":{"seconds":1,"steps":4}}`)
	var heaps []uint64
	next := 0
	for i := 1; i <= n; i++ {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		r := tr.Begin(wire.MethodToolsCall, params, RequestOptions{}, now)
		req := wire.Request(r.ID, wire.MethodToolsCall, params)
		rm, _ := wire.Decode(req)
		tr.Apply(event.Event{Kind: event.Sent, Time: now, RequestID: r.ID, Raw: req, Msg: rm})
		for j := 1; j <= 4; j++ {
			p := wire.Notification(wire.NotifyProgress, json.RawMessage(fmt.Sprintf(`{"progressToken":%s,"progress":%d,"total":4,"message":"step %d of 4"}`, r.ProgressToken.Raw(), j, j)))
			pm, _ := wire.Decode(p)
			tr.Apply(event.Event{Kind: event.Received, Time: now, Raw: p, Msg: pm})
		}
		res := wire.ResultResponse(r.ID, json.RawMessage(`{"resultType":"complete","content":[{"type":"text","text":"slow finished 4 steps in 1s"}]}`))
		resm, _ := wire.Decode(res)
		resEv := event.Event{Kind: event.Received, Time: now, RequestID: r.ID, Raw: res, Msg: resm}
		if i%2 == 0 {
			tr.Apply(resEv)
		} else {
			tr.RequestCancel(r.ID, "user requested cancellation", CauseUser, now)
			tr.Apply(event.Event{Kind: event.CancelSent, Time: now, RequestID: r.ID, Signal: event.SignalNotification})
			if i%4 == 1 {
				tr.Apply(resEv) // a late response
			}
		}
		if i%1024 == 0 {
			tr.expire(now.Add(time.Hour)) // settle the cancels nothing answered
		}
		if next < len(checkpoints) && i == checkpoints[next] {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heaps = append(heaps, ms.HeapAlloc)
			next++
		}
	}
	runtime.KeepAlive(tr)
	return heaps
}

// BenchmarkSoak shows that memory stays flat over a long session: a
// million requests through the default, bounded tracker, beside the same
// traffic into a tracker whose history, raw store and log are unbounded
// (the alternative a naive client is). Run it once:
//
//	go test -run x -bench Soak -benchtime 1x ./session/
//
// heapMB@N is the live heap after N requests; growth is the ratio of the
// last checkpoint to the first.
func BenchmarkSoak(b *testing.B) {
	mb := func(v uint64) float64 { return float64(v) / (1 << 20) }
	b.Run("bounded", func(b *testing.B) {
		points := []int{100_000, 500_000, 1_000_000}
		var heaps []uint64
		for i := 0; i < b.N; i++ {
			heaps = soak(b, DefaultConfig(), points[len(points)-1], points)
		}
		for i, p := range points {
			b.ReportMetric(mb(heaps[i]), fmt.Sprintf("heapMB@%dk", p/1000))
		}
		b.ReportMetric(float64(heaps[len(heaps)-1])/float64(heaps[0]), "growth")
	})
	b.Run("unbounded", func(b *testing.B) {
		// The same traffic with nothing ever evicted; fewer requests, as it
		// grows without limit.
		points := []int{100_000, 200_000}
		cfg := Config{HistoryLimit: 1 << 30, RawStoreBytes: 1 << 40, LogEntries: 4 << 20}
		var heaps []uint64
		for i := 0; i < b.N; i++ {
			heaps = soak(b, cfg, points[len(points)-1], points)
		}
		for i, p := range points {
			b.ReportMetric(mb(heaps[i]), fmt.Sprintf("heapMB@%dk", p/1000))
		}
		b.ReportMetric(float64(heaps[len(heaps)-1])/float64(heaps[0]), "growth")
	})
}
