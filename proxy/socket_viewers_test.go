package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hostileBroadcast is a socket whose history is full (historyBytes of
// trace lines), as on a proxy that has run a while.
func hostileBroadcast(t testing.TB) (*broadcast, string, *syncBuffer) {
	t.Helper()
	dir := privateTemp(t)
	l, path, err := listen(dir, "hostile")
	if err != nil {
		t.Fatal(err)
	}
	b := newBroadcast(l, Hello{Stream: "trace", Proxy: "hostile", Started: time.Now()})
	stderr := &syncBuffer{}
	b.takeCommands(nil, Options{Name: "hostile", Stderr: stderr, ReadOnly: true})
	t.Cleanup(b.close)
	line := []byte(`{"ms":1,"dir":"in","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"message":"` + strings.Repeat("x", 900) + `"}}}` + "\n")
	for written := 0; written < historyBytes+len(line); written += len(line) {
		b.Write(line)
	}
	return b, filepath.Clean(path), stderr
}

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// dialHostile connects n viewers that never read a byte, and waits until
// the socket has taken or refused each.
func dialHostile(t *testing.T, b *broadcast, path string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("dial viewer %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b.mu.Lock()
		seen := b.accepted + b.refused
		b.mu.Unlock()
		if seen >= n {
			return conns
		}
		if time.Now().After(deadline) {
			t.Fatalf("the socket took or refused %d of %d viewers", seen, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A thousand viewers that connect and never read cost the proxy next to
// nothing: they share the history instead of a copy each, at most
// maxViewers are taken and the rest refused with a line that says why,
// and one that does not read is dropped (and the proxy says so) while a
// viewer that reads goes on getting the stream.
func TestHostileViewersShareTheHistory(t *testing.T) {
	b, path, stderr := hostileBroadcast(t)
	b.mu.Lock()
	b.noReadTimeout = 500 * time.Millisecond
	b.mu.Unlock()

	good, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	gr := bufio.NewReaderSize(good, 1<<20)
	if h, err := ReadHello(gr); err != nil || !h.HistoryCut {
		t.Fatalf("the reading viewer's hello: %+v, %v", h, err)
	}

	before := heapInUse()
	conns := dialHostile(t, b, path, 1000)
	during := heapInUse()
	grew := int64(during) - int64(before)
	t.Logf("heap in use: %d MiB before, %d MiB with 1000 viewers that never read (%+d KiB)", before>>20, during>>20, grew>>10)
	if grew > 64<<20 {
		t.Errorf("1000 viewers that never read cost %d MiB: the history is copied per viewer", grew>>20)
	}
	b.mu.Lock()
	attached := len(b.subs)
	b.mu.Unlock()
	if attached > maxViewers {
		t.Errorf("%d viewers attached, want at most %d", attached, maxViewers)
	}

	// The last one was refused, with a hello that says so.
	_ = conns[len(conns)-1].SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = ReadHello(bufio.NewReader(conns[len(conns)-1]))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d viewers", maxViewers)) {
		t.Errorf("a viewer past the limit: %v; want a refusal naming the limit", err)
	}

	// The reading viewer still gets what is written after them.
	go func() {
		for i := range 50 {
			b.Write(fmt.Appendf(nil, `{"ms":2,"event":"note","text":"after %d"}`+"\n", i))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_ = good.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		l, err := gr.ReadBytes('\n')
		if err != nil {
			t.Fatalf("the reading viewer was cut off: %v", err)
		}
		if bytes.Contains(l, []byte(`"after 49"`)) {
			break
		}
	}

	// The ones that never read are gone, and the proxy said why.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b.mu.Lock()
		attached = len(b.subs)
		b.mu.Unlock()
		if attached == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d viewers still attached; want the reading one alone", attached)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "did not read") {
		t.Errorf("the proxy did not say it dropped a viewer: %q", stderr.String())
	}
	for _, c := range conns {
		c.Close()
	}
	after := heapInUse()
	t.Logf("heap in use once they left: %d MiB", after>>20)
}

// BenchmarkHostileViewersMemory: 1000 viewers connect to a socket with a
// full history and never read. Reported: the most heap in use while they
// are connected (sampled every 50ms for 3s, collection or not), and the
// heap in use a second after they left, both over the heap before them.
//
//	go test ./proxy/ -run '^$' -bench HostileViewersMemory -benchtime 1x
func BenchmarkHostileViewersMemory(b *testing.B) {
	for range b.N {
		bc, path, _ := hostileBroadcast(b)
		base := heapInUse()
		conns := make([]net.Conn, 0, 1000)
		for range 1000 {
			c, err := net.Dial("unix", path)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		var peak uint64
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
		for _, c := range conns {
			c.Close()
		}
		time.Sleep(time.Second)
		left := heapInUse()
		b.ReportMetric(float64(int64(peak)-int64(base))/(1<<20), "MiB-peak")
		b.ReportMetric(float64(int64(left)-int64(base))/(1<<20), "MiB-after-leaving")
		bc.close()
	}
}

// A viewer that leaves frees its place at once, even on a proxy that has
// nothing to write: more attach/leave cycles than maxViewers, and as many
// looks at the socket directory (List reads each proxy's hello), leave no
// viewer counted, and the next viewer is taken.
func TestViewersThatLeaveAreNotCounted(t *testing.T) {
	dir := privateTemp(t)
	l, _, err := listen(dir, "idle")
	if err != nil {
		t.Fatal(err)
	}
	b := newBroadcast(l, Hello{Stream: "trace", Proxy: "idle", Started: time.Now()})
	b.takeCommands(nil, Options{Name: "idle", Stderr: &syncBuffer{}, ReadOnly: true})
	t.Cleanup(b.close)
	b.Write([]byte(`{"ms":1,"event":"note","text":"the only line"}` + "\n"))

	attached := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.subs)
	}
	waitNone := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for attached() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("after %s, %d viewers are still counted; want none", what, attached())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for i := range 2 * maxViewers {
		c, err := Attach(dir, "idle")
		if err != nil {
			t.Fatalf("attach %d: %v", i, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := ReadHello(bufio.NewReader(c)); err != nil {
			t.Fatalf("attach %d: %v", i, err)
		}
		c.Close()
	}
	waitNone(fmt.Sprintf("%d attach/leave cycles", 2*maxViewers))
	for i := range 2 * maxViewers {
		running, err := List(dir)
		if err != nil || len(running) != 1 || running[0].Stale || running[0].Refused != "" {
			t.Fatalf("look %d at the socket directory: %+v, %v", i, running, err)
		}
	}
	waitNone(fmt.Sprintf("%d looks at the socket directory", 2*maxViewers))
	c, err := Attach(dir, "idle")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := ReadHello(bufio.NewReader(c)); err != nil {
		t.Fatalf("a viewer after the others left: %v", err)
	}
}
