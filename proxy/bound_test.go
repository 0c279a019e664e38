package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// The proxy follows a bounded set of the host's requests: a host that
// leaves any number unanswered grows what inflight remembers only to
// the bound, and every byte still passes.

// boundWatch sees the recorder's tracker through OnEvent: the most host
// requests it followed open at once, its counts when the host's marker
// request (ID "end") came, and that moment.
type boundWatch struct {
	mu      sync.Mutex
	maxOpen int
	maxLen  int
	last    session.Counts
	end     chan struct{}
	once    sync.Once
}

func newBoundWatch() *boundWatch { return &boundWatch{end: make(chan struct{})} }

func (w *boundWatch) onEvent(ev event.Event, _ []session.Change, tr *session.Tracker) {
	w.mu.Lock()
	c := tr.Counts()
	w.maxOpen = max(w.maxOpen, c.InFlight+c.Cancelling)
	w.maxLen = max(w.maxLen, tr.Len())
	w.last = c
	w.mu.Unlock()
	if ev.Kind == event.Sent && ev.Msg.ID == wire.StringID("end") {
		w.once.Do(func() { close(w.end) })
	}
}

// waitEnd writes the marker until the recorder has seen it (a queue past
// its bound skips lines, a marker among them), so that everything before
// it was recorded or skipped.
func (w *boundWatch) waitEnd(t testing.TB, send func([]byte)) {
	t.Helper()
	marker := []byte(`{"jsonrpc":"2.0","id":"end","method":"ping"}` + "\n")
	for {
		send(marker)
		select {
		case <-w.end:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (w *boundWatch) counts() (maxOpen, maxLen int, last session.Counts) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxOpen, w.maxLen, w.last
}

// stdioUnanswered sends n requests the server never answers through a
// proxy configured with cfg, and returns what the host sent, what the
// server got ("bytes sha256"), the watch, and the heap in use before and
// once the recorder had caught up.
func stdioUnanswered(t testing.TB, n int, cfg session.Config) (sent, got string, w *boundWatch, before, after uint64) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gotPath := filepath.Join(t.TempDir(), "got")
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	defer inR.Close()
	defer outR.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	w = newBoundWatch()
	before = heapInUse()
	done := make(chan error, 1)
	go func() {
		_, err := Run(t.Context(), Host{In: inR, Out: outW}, exe, nil, Options{Tracker: cfg, OnEvent: w.onEvent,
			Env: []string{"INFLIGHT_PROXY_HELPER=sink", "GOT=" + gotPath}})
		outW.Close()
		done <- err
	}()
	h := sha256.New()
	total := 0
	send := func(b []byte) {
		h.Write(b)
		total += len(b)
		if _, err := inW.Write(b); err != nil {
			t.Error(err)
		}
	}
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p%d"}}}`+"\n", i, i)
		if len(buf) > 32<<10 || i == n {
			send(buf)
			buf = buf[:0]
		}
	}
	w.waitEnd(t, send)
	after = heapInUse()
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(gotPath)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %x", total, h.Sum(nil)), string(b), w, before, after
}

// TestProxyFollowsBoundedHostRequests: 40 000 requests left unanswered on
// stdio. The tracker follows at most its bound open at once (its history
// too), counts the rest as no longer followed, the heap grows by a few
// megabytes, not by the kilobytes of each request — and the server got
// every byte the host wrote, in order.
func TestProxyFollowsBoundedHostRequests(t *testing.T) {
	const n, limit = 40000, 1000
	cfg := session.Config{MaxFollowed: limit, HistoryLimit: limit, RawStoreBytes: 1 << 20, LogEntries: 1000}
	sent, got, w, before, after := stdioUnanswered(t, n, cfg)
	if got != sent {
		t.Fatalf("the server got %s, the host sent %s", got, sent)
	}
	maxOpen, maxLen, last := w.counts()
	if maxOpen > limit+1 || maxLen > 2*limit {
		t.Fatalf("the tracker followed up to %d open requests (history %d), over the bound %d", maxOpen, maxLen, limit)
	}
	if last.Unfollowed == 0 || last.Unfollowed+last.InFlight > n+1 {
		t.Fatalf("counts %+v: no request counted as no longer followed", last)
	}
	// Unbounded, each request held about 2 KB: 80 MB here.
	if grew := int64(after) - int64(before); grew > 24<<20 {
		t.Fatalf("the heap grew by %d MB for %d unanswered requests", grew>>20, n)
	}
}

// TestProxyBoundFigures measures the heap in use before and after a flood
// of unanswered requests at the default bounds: 1 000 000 over stdio, and
// 360 000 over HTTP in batches of 1 000 to an upstream that answers 202.
// Set INFLIGHT_PROXY_MEMORY=1 to run it (it takes a minute or two).
func TestProxyBoundFigures(t *testing.T) {
	if os.Getenv("INFLIGHT_PROXY_MEMORY") == "" {
		t.Skip("set INFLIGHT_PROXY_MEMORY=1 to measure")
	}
	t.Run("stdio", func(t *testing.T) {
		sent, got, w, before, after := stdioUnanswered(t, 1_000_000, session.Config{})
		_, maxLen, last := w.counts()
		t.Logf("stdio 1M unanswered: heap in use %d MB before, %d MB after; followed at most %d; counts %+v; bytes exact: %v",
			before>>20, after>>20, maxLen, last, got == sent)
	})
	t.Run("http", func(t *testing.T) {
		before, after, w := httpUnanswered(t, 360, 1000)
		_, maxLen, last := w.counts()
		t.Logf("HTTP 360k unanswered (202): heap in use %d MB before, %d MB after; followed at most %d; counts %+v",
			before>>20, after>>20, maxLen, last)
	})
}

// httpUnanswered POSTs batches of size requests through RunHTTP to an
// upstream that answers 202 to each.
func httpUnanswered(t *testing.T, batches, size int) (before, after uint64, w *boundWatch) {
	up := serveBench(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rw.WriteHeader(http.StatusAccepted)
	}))
	w = newBoundWatch()
	before = heapInUse()
	url := httpProxyWith(t, up, Options{OnEvent: w.onEvent})
	c := benchHost(t)
	post := func(body []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	id := 0
	var buf []byte
	for range batches {
		buf = append(buf[:0], '[')
		for j := range size {
			id++
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"jsonrpc":"2.0","id":`...)
			buf = strconv.AppendInt(buf, int64(id), 10)
			buf = append(buf, `,"method":"tools/call","params":{"name":"slow"}}`...)
		}
		post(append(buf, ']'))
	}
	w.waitEnd(t, func(b []byte) { post(bytes.TrimSpace(b)) })
	after = heapInUse()
	return before, after, w
}

// httpProxyWith runs RunHTTP in front of upstream with opts, until the
// test ends.
func httpProxyWith(t *testing.T, upstream string, opts Options) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.ShutdownWait = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := RunHTTP(ctx, l, upstream, opts); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + l.Addr().String() + "/mcp"
}
