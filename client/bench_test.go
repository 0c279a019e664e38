package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// Benchmarks report figures (b.ReportMetric); they assert nothing about
// time. Run them with, for example:
//
//	go test -run='^$' -bench=. -benchtime=300000x -cpu=1 ./client/
//
// Each inflight benchmark has a go-sdk counterpart reading the same bytes
// from the same kind of pipe.
//
// What the profile of BenchmarkProgressInflight taught (-cpu=1): about 80% of
// the time was encoding/json's reflection — wire.Decode's envelope, then the
// tracker's DecodeProgress of the same params — for ~450 000/s on one core.
// Both are now a json.Valid check and a hand-written walk over the members
// (fuzzed against encoding/json in package wire), and the progress is
// decoded once, by the client's reader (Event.Progress): ~900 000/s. What is
// left is mostly json.Valid, channel hand-off and event copying.

// pipeServer is a legacy stdio server on real OS pipes (os.Pipe), shared by
// inflight's client and go-sdk's in the benchmarks: it answers the handshake
// (server/discover is unknown, initialize succeeds), reports each request and
// cancellation it reads, and lets the benchmark write raw bytes to the
// client.
type pipeServer struct {
	toClient   *os.File // the server's stdout
	fromClient *os.File // the server's stdin
	// Client ends.
	clientIn  *os.File
	clientOut *os.File

	calls     chan wire.ID   // tools/call requests read, by ID
	cancelled chan time.Time // when each notifications/cancelled line was read
	done      chan struct{}  // the reader ended
	wmu       sync.Mutex
}

func newPipeServer(tb testing.TB) *pipeServer {
	tb.Helper()
	sIn, cIn, err := os.Pipe() // client writes cIn, server reads sIn
	if err != nil {
		tb.Fatal(err)
	}
	cOut, sOut, err := os.Pipe() // server writes sOut, client reads cOut
	if err != nil {
		tb.Fatal(err)
	}
	s := &pipeServer{toClient: sOut, fromClient: sIn, clientIn: cIn, clientOut: cOut,
		calls: make(chan wire.ID, 1024), cancelled: make(chan time.Time, 1024), done: make(chan struct{})}
	go s.read()
	tb.Cleanup(func() {
		sOut.Close()
		sIn.Close()
		<-s.done
	})
	return s
}

func (s *pipeServer) read() {
	defer close(s.done)
	br := bufio.NewReaderSize(s.fromClient, 1<<16)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		if strings.Contains(string(line), `"notifications/cancelled"`) {
			// Timestamp first: this is the moment the server has the line.
			s.cancelled <- time.Now()
			continue
		}
		m, derr := wire.Decode(line)
		if derr != nil || m.Kind != wire.KindRequest {
			continue
		}
		switch m.Method {
		case wire.MethodDiscover:
			s.write(wire.ErrorResponse(m.ID, wire.CodeMethodNotFound, "Method not found"))
		case wire.MethodInitialize:
			s.write(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}`)))
		case wire.MethodToolsList:
			s.write(wire.ResultResponse(m.ID, json.RawMessage(`{"tools":[]}`)))
		case wire.MethodToolsCall:
			s.calls <- m.ID
		}
	}
}

func (s *pipeServer) write(line []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = s.toClient.Write(append(line, '\n'))
}

// progressLines pre-encodes n notifications/progress lines for token, with
// strictly increasing progress, as one buffer.
func progressLines(token wire.ID, n int) []byte {
	buf := make([]byte, 0, n*110)
	prefix := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + token.Raw() + `,"progress":`
	suffix := `,"total":` + strconv.Itoa(n) + `,"message":"working"}}` + "\n"
	for i := 1; i <= n; i++ {
		buf = append(buf, prefix...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, suffix...)
	}
	return buf
}

// BenchmarkProgressInflight: progress notifications processed end to end
// over a real stdio pipe: a writer blasts pre-encoded lines into an
// os.Pipe, the client reads and decodes them and emits events, and a
// consumer applies each to a session.Tracker, as the UI does.
func BenchmarkProgressInflight(b *testing.B) {
	srv := newPipeServer(b)
	c, err := client.New(client.Config{Pipes: &client.Pipes{Stdin: srv.clientIn, Stdout: srv.clientOut}, ProbeTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	tr := session.NewTracker(session.Config{})
	answered := make(chan struct{})
	var consumer sync.WaitGroup
	consumer.Add(1)
	var reqID atomic.Value
	go func() {
		defer consumer.Done()
		for ev := range c.Events() {
			tr.Apply(ev)
			if ev.Kind == event.Received && ev.Msg.IsResponse() {
				if id, _ := reqID.Load().(wire.ID); id == ev.RequestID {
					close(answered)
				}
			}
		}
	}()
	defer func() {
		c.Close()
		consumer.Wait()
	}()
	if _, err := c.Connect(context.Background()); err != nil {
		b.Fatal(err)
	}
	// The tracker is only touched by the consumer goroutine once events
	// flow, so the request is begun before anything is sent.
	r := tr.Begin(wire.MethodToolsCall, toolCall("flood", nil), session.RequestOptions{}, time.Now())
	reqID.Store(r.ID)
	if err := c.Send(context.Background(), client.Request{ID: r.ID, Method: wire.MethodToolsCall, Params: toolCall("flood", nil), ProgressToken: r.ProgressToken}); err != nil {
		b.Fatal(err)
	}
	<-srv.calls
	lines := progressLines(r.ProgressToken, b.N)
	final := append(wire.ResultResponse(r.ID, json.RawMessage(`{"content":[]}`)), '\n')

	b.SetBytes(int64(len(lines) / b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go func() {
		srv.wmu.Lock()
		defer srv.wmu.Unlock()
		_, _ = srv.toClient.Write(lines)
		_, _ = srv.toClient.Write(final)
	}()
	<-answered
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "notifications/s")
	// Read only by the consumer until now; it has applied the response.
	if got, _ := tr.Get(r.ID); got.Progress.Count != b.N {
		b.Fatalf("tracker counted %d progress notifications, want %d", got.Progress.Count, b.N)
	}
}

// BenchmarkProgressGoSDK: the same stream read by go-sdk's own client, whose
// ProgressNotificationHandler does equivalent bookkeeping (a map lookup and
// an update per notification).
func BenchmarkProgressGoSDK(b *testing.B) {
	srv := newPipeServer(b)
	type progress struct {
		count int
		value float64
	}
	var mu sync.Mutex
	byToken := map[any]*progress{}
	n := b.N
	all := make(chan struct{})
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			p := byToken[req.Params.ProgressToken]
			if p == nil {
				p = &progress{}
				byToken[req.Params.ProgressToken] = p
			}
			p.count++
			p.value = req.Params.Progress
			if p.count == n {
				close(all)
			}
			mu.Unlock()
		},
	})
	cs, err := cl.Connect(context.Background(), &mcp.IOTransport{Reader: srv.clientOut, Writer: srv.clientIn}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	lines := progressLines(wire.IntID(1), b.N)
	b.SetBytes(int64(len(lines) / b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go func() {
		srv.wmu.Lock()
		defer srv.wmu.Unlock()
		_, _ = srv.toClient.Write(lines)
	}()
	<-all
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "notifications/s")
}

// reportLatency reports the p50 and p99 of samples.
func reportLatency(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(q float64) time.Duration { return samples[min(len(samples)-1, int(q*float64(len(samples))))] }
	b.ReportMetric(float64(at(0.50))/1e3, "p50-µs")
	b.ReportMetric(float64(at(0.99))/1e3, "p99-µs")
	b.ReportMetric(0, "ns/op") // the per-op time includes the round trip of Send; the percentiles are the figures
}

// BenchmarkCancelLatencyStdioInflight: from Cancel() to the server reading
// the notifications/cancelled line, over real pipes.
func BenchmarkCancelLatencyStdioInflight(b *testing.B) {
	srv := newPipeServer(b)
	c, err := client.New(client.Config{Pipes: &client.Pipes{Stdin: srv.clientIn, Stdout: srv.clientOut}, ProbeTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range c.Events() {
		}
	}()
	defer func() {
		c.Close()
		<-drained
	}()
	if _, err := c.Connect(context.Background()); err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := wire.IntID(int64(i + 1))
		if err := c.Send(context.Background(), client.Request{ID: id, Method: wire.MethodToolsCall, Params: toolCall("slow", nil)}); err != nil {
			b.Fatal(err)
		}
		<-srv.calls
		start := time.Now()
		if _, err := c.Cancel(id, "bench"); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, (<-srv.cancelled).Sub(start))
	}
	b.StopTimer()
	reportLatency(b, samples)
}

// BenchmarkCancelLatencyStdioGoSDK: go-sdk's client cancelling through its
// context (it sends notifications/cancelled from a goroutine), measured the
// same way: from cancel() to the server reading the line.
func BenchmarkCancelLatencyStdioGoSDK(b *testing.B) {
	srv := newPipeServer(b)
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.IOTransport{Reader: srv.clientOut, Writer: srv.clientIn}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		}()
		<-srv.calls
		start := time.Now()
		cancel()
		samples = append(samples, (<-srv.cancelled).Sub(start))
		<-returned
	}
	b.StopTimer()
	reportLatency(b, samples)
}

// BenchmarkCancelLatencyModernHTTP: from Cancel() to the server's handler
// observing r.Context().Done() — the closed SSE stream — over loopback.
func BenchmarkCancelLatencyModernHTTP(b *testing.B) {
	started := make(chan struct{}, 1)
	seen := make(chan time.Time, 1)
	srv := httptest.NewServer(modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		sseWrite(w, "data: "+progressJSON(m.ID, 1)+"\n\n")
		started <- struct{}{}
		<-r.Context().Done()
		seen <- time.Now()
	}))
	defer srv.Close()
	c, err := client.New(client.Config{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range c.Events() {
		}
	}()
	defer func() {
		c.Close()
		<-drained
	}()
	if _, err := c.Connect(context.Background()); err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := wire.IntID(int64(i + 1))
		if err := c.Send(context.Background(), client.Request{ID: id, Method: wire.MethodToolsCall, Params: toolCall("hang", nil)}); err != nil {
			b.Fatal(err)
		}
		<-started
		start := time.Now()
		if _, err := c.Cancel(id, "bench"); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, (<-seen).Sub(start))
	}
	b.StopTimer()
	reportLatency(b, samples)
}
