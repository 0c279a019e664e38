package replay

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"inflight/internal/testkit/testserver"
)

// floodTrace is a trace inflight could have written of a server that
// flooded: one tools/call, progress notifications by the hundred thousand,
// then a stderr flood, then the answer. It is generated as it is read, so
// that the file itself takes no memory; peak records the largest heap seen
// while replay read it.
type floodTrace struct {
	progress, stderr int
	n                int // records produced so far
	buf              bytes.Buffer
	peak             uint64
	base             uint64
}

func (f *floodTrace) total() int { return 4 + f.progress + f.stderr }

func (f *floodTrace) record(i int) string {
	ms := float64(i) * 0.05
	switch {
	case i == 0:
		return `{"ms":0,"dir":"local","event":"connected","transport":"stdio","era":"modern","protocolVersion":"2026-07-28","server":"flood 1"}`
	case i == 1:
		return `{"ms":0.01,"dir":"local","id":1,"event":"state","state":"pending","method":"tools/call","target":"flood"}`
	case i == 2:
		return `{"ms":0.02,"dir":"out","id":1,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","_meta":{"progressToken":1}}}}`
	case i < 3+f.progress:
		p := i - 2
		return fmt.Sprintf(`{"ms":%.3f,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d,"total":%d,"message":"step %d of a flood"}}}`,
			ms, p, f.progress, p)
	case i < 3+f.progress+f.stderr:
		return fmt.Sprintf(`{"ms":%.3f,"dir":"in","event":"stderr","text":"log line %d of a server that writes a great deal to stderr, %s"}`,
			ms, i-2-f.progress, strings.Repeat("x", 60))
	}
	return fmt.Sprintf(`{"ms":%.3f,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}}`, ms)
}

func (f *floodTrace) Read(p []byte) (int, error) {
	for f.buf.Len() < len(p) && f.n < f.total() {
		f.buf.WriteString(f.record(f.n))
		f.buf.WriteByte('\n')
		f.n++
		if f.n%5000 == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			f.peak = max(f.peak, ms.HeapAlloc)
		}
	}
	if f.buf.Len() == 0 {
		return 0, io.EOF
	}
	return f.buf.Read(p)
}

// Replaying a trace streams it: the heap stays bounded however many
// records the file holds (issue 14: a 176 MB trace of a million progress
// notifications took 1.4 GB, a 2.26 GB one of a stderr flood ran out of
// memory, because replay loaded and sorted every record). 200 000 records
// (about 35 MB of trace) are replayed here; holding them all took well
// over 150 MB of heap, streaming takes a few.
func TestReplayStreamsAHugeTrace(t *testing.T) {
	f := &floodTrace{progress: 150_000, stderr: 50_000}
	if raceEnabled {
		// The race detector makes each record some ten times dearer.
		f = &floodTrace{progress: 40_000, stderr: 10_000}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.base = ms.HeapAlloc
	var out, errOut bytes.Buffer
	if code := Reader(f, "flood.jsonl", Options{}, &out, &errOut); code != 0 {
		t.Fatalf("replay exit %d: %s", code, errOut.String())
	}
	const bound = 16 << 20
	grew := f.peak - min(f.peak, f.base)
	t.Logf("%d records; heap grew by at most %.1f MiB; %d bytes of output", f.n, float64(grew)/(1<<20), out.Len())
	if grew > bound {
		t.Errorf("replaying %d records grew the heap by %.1f MiB, more than %d MiB", f.n, float64(grew)/(1<<20), bound>>20)
	}
	s := out.String()
	testserver.MustContain(t, s, fmt.Sprintf("%d lines over", f.total()))
	testserver.MustContain(t, s, fmt.Sprintf("%d progress notifications", f.progress))
	testserver.MustContain(t, s, fmt.Sprintf("… %d more progress notifications", f.progress-progressRunHead-progressRunTail))
	testserver.MustContain(t, s, fmt.Sprintf("… %d more stderr lines", f.stderr-progressRunHead-progressRunTail))
	testserver.MustContain(t, s, fmt.Sprintf("log line %d of a server", f.stderr))
	if n := strings.Count(s, "\n"); n > 60 {
		t.Errorf("the replay has %d lines:\n%s", n, s)
	}
}

// A crafted (or broken) trace with times no run can have — ms 1e308, a
// merged progress line "until" 1e308 — prints them bounded, and says the
// span is out of range, rather than as 309 digits.
func TestReplayHugeTimesBounded(t *testing.T) {
	file := strings.Join([]string{
		`{"ms":0,"dir":"out","id":1,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}}`,
		`{"ms":1e308,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1e308,"total":1e308}},"coalesced":3,"lastMs":1e308}`,
		`{"ms":1e308,"dir":"local","id":1,"event":"state","state":"cancel_requested","method":"tools/call","target":"x"}`,
		`{"ms":1.5e308,"dir":"in","id":1,"msg":{"jsonrpc":"2.0","id":1,"result":{}}}`,
	}, "\n")
	var out bytes.Buffer
	if code := Reader(strings.NewReader(file), "huge.jsonl", Options{}, &out, io.Discard); code != 0 {
		t.Fatalf("replay exit %d", code)
	}
	s := out.String()
	for _, line := range strings.Split(s, "\n") {
		if len(line) > 200 {
			t.Errorf("a line of %d bytes: %.120s…", len(line), line)
		}
	}
	testserver.MustContain(t, s, "over 1.5e+308ms (out of range)")
	testserver.MustContain(t, s, "until +1e+308ms")
	testserver.MustContain(t, s, "cancel at +1e+308ms (out of range)")
	testserver.MustContain(t, s, "progress 1e+308/1e+308")
}

// Options.Stop (main's interruption: Ctrl+C, a hangup, stdout's reader
// gone) ends a replay of a huge trace where it is, rather than after
// reading all of it for no one.
func TestReplayStops(t *testing.T) {
	f := &floodTrace{progress: 1_000_000}
	stop := make(chan struct{})
	close(stop)
	var out, errOut bytes.Buffer
	if code := Reader(f, "flood.jsonl", Options{Stop: stop}, &out, &errOut); code != 4 || out.Len() > 0 {
		t.Fatalf("exit %d, %d bytes of output", code, out.Len())
	}
	if f.n > 2*stopEvery || !strings.Contains(errOut.String(), "stopped after") {
		t.Errorf("read %d records before stopping; stderr %q", f.n, errOut.String())
	}
}
