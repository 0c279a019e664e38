package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/floodpeer"
	"inflight/session"
	"inflight/wire"
)

// keyClock wraps the model to note when each key press reaches Update.
type keyClock struct {
	*Model
	seen chan time.Time
}

func (k keyClock) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k.seen <- time.Now()
	case probeMsg:
		msg(k.Model)
		return k, nil
	case eventsMsg:
		batches.Add(1)
		batchEvents.Add(int64(len(msg.items)))
	}
	_, cmd := k.Model.Update(msg)
	return k, cmd
}

// BenchmarkKeyUnderFlood runs the real program (renderer included, output
// discarded) against the demo's flood tool over stdio and measures how long
// a key press waits before Update handles it. Bubble Tea draws at most 60
// frames a second, so a key handled within one frame (16.7ms) shows on the
// next frame. Side by side: the pump as built (batches of maxBatch events
// per Update) and the naive pump (one event per message).
//
//	go test -run '^$' -bench KeyUnderFlood -benchtime 1x ./ui/
//
// The demo server is go-sdk's, which marshals every notification: it, not
// the TUI, sets the pace of that flood (about 300 000/s here). The case
// peer=raw replays the same tool from internal/testkit/floodpeer (prebuilt lines,
// never the slow side), so its progress/s is what the TUI itself applies
// with the renderer running: issue 9's target is ≥ 500 000/s.
func BenchmarkKeyUnderFlood(b *testing.B) {
	for _, c := range []struct {
		name  string
		batch int
		raw   bool
	}{
		{fmt.Sprintf("batch=%d", maxBatch), maxBatch, false},
		{"batch=1", 1, false},
		{fmt.Sprintf("batch=%d/peer=raw", maxBatch), maxBatch, true},
	} {
		batch := c.batch
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				batches.Store(0)
				batchEvents.Store(0)
				p50, p99, rate := keyUnderFlood(b, batch, c.raw)
				b.ReportMetric(p50, "key-p50-ms")
				b.ReportMetric(p99, "key-p99-ms")
				b.ReportMetric(rate, "progress/s")
				b.ReportMetric(float64(batchEvents.Load())/float64(max(1, batches.Load())), "events/update")
			}
		})
	}
}

func keyUnderFlood(b *testing.B, batch int, raw bool) (p50, p99, rate float64) {
	b.Helper()
	d := &demoDialer{}
	defer d.close()
	dial, count := d.dial, 1_000_000
	if raw {
		rd := &rawFloodDialer{}
		defer rd.close()
		// Enough that the raw peer, several times faster, is still
		// flooding when the measurement ends.
		dial, count = rd.dial, 50_000_000
	}
	cfg := session.DefaultConfig()
	m, err := New(Options{
		Target: "demo", Transport: "stdio", Dial: dial, Tracker: cfg, Dark: true,
		Calls: []Call{{Method: wire.MethodToolsCall, Params: json.RawMessage(fmt.Sprintf(`{"name":"flood","arguments":{"count":%d}}`, count))}},
	})
	if err != nil {
		b.Fatal(err)
	}
	m.conn.wait = func(ch <-chan event.Event, gen int) tea.Cmd { return waitEventsBatch(ch, gen, batch) }
	kc := keyClock{Model: m, seen: make(chan time.Time, 64)}
	p := tea.NewProgram(kc, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignals(), tea.WithWindowSize(120, 35))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := p.Run(); err != nil {
			b.Error(err)
		}
	}()
	flood := func() *session.Request {
		// Read the tracker through the program so no goroutine races Update.
		ch := make(chan *session.Request, 1)
		p.Send(probeMsg(func(m *Model) {
			var r *session.Request
			for i := 0; i < m.tracker.Len(); i++ {
				if m.tracker.At(i).Target == "flood" {
					r2 := *m.tracker.At(i)
					r = &r2
				}
			}
			ch <- r
		}))
		return <-ch
	}
	// Wait until the flood is running.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r := flood(); r != nil && r.Progress.Count > 10000 {
			break
		}
		if time.Now().After(deadline) {
			r := flood()
			b.Fatalf("the flood did not start: %+v", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := flood()
	t0 := time.Now()
	var lat []float64
	for k := 0; k < 60; k++ {
		sent := time.Now()
		p.Send(tea.KeyPressMsg{Code: 'j', Text: "j"})
		got := <-kc.seen
		lat = append(lat, float64(got.Sub(sent).Microseconds())/1000)
		time.Sleep(15 * time.Millisecond)
	}
	end := flood()
	elapsed := time.Since(t0)
	if end.State != session.StateRunning {
		b.Logf("the flood ended early (%s); the rate covers only part of the window", end.State)
	}
	rate = float64(end.Progress.Count-start.Progress.Count) / elapsed.Seconds()
	p.Send(probeMsg(func(m *Model) { m.ending.quitting = true }))
	p.Quit()
	wg.Wait()
	sort.Float64s(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], rate
}

var batches, batchEvents atomic.Int64

// probeMsg runs a function on the model inside Update (benchmarks only).
type probeMsg func(*Model)

// rawFloodDialer connects to internal/testkit/floodpeer's raw peer over kernel
// pipes, in process: a server that answers the set-up and floods prebuilt
// progress lines, so the flood's pace is the client's and the TUI's.
type rawFloodDialer struct {
	mu      sync.Mutex
	clients []*client.Client
	wg      sync.WaitGroup
}

func (d *rawFloodDialer) dial() (Client, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		_ = floodpeer.Serve(inR, outW) // ends when the client closes its pipes
		inR.Close()
		outW.Close()
	}()
	c, err := client.New(client.Config{Pipes: &client.Pipes{Stdin: inW, Stdout: outR}})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.clients = append(d.clients, c)
	d.mu.Unlock()
	return c, nil
}

func (d *rawFloodDialer) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.clients {
		c.Close()
	}
	d.wg.Wait()
}
