package client

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// sseRead reads every event of a stream and the error that ended it.
func sseRead(r io.Reader, max int) (events []sseEvent, lastID string, retry time.Duration, end error) {
	sr := newSSEReader(r, max)
	for {
		ev, err := sr.Next()
		if err != nil {
			return events, sr.LastID, sr.Retry, err
		}
		events = append(events, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		data   []string
		lastID string
		retry  time.Duration
		end    error // io.EOF, errSSECut, or nil for "some other error"
	}{
		{name: "one event", in: "data: a\n\n", data: []string{"a"}, end: io.EOF},
		{name: "multi-line data", in: "data: a\ndata:b\ndata\n\n", data: []string{"a\nb\n"}, end: io.EOF},
		{name: "CRLF and lone CR", in: "data: a\r\n\r\ndata: b\r\rdata: c\r\n\n", data: []string{"a", "b", "c"}, end: io.EOF},
		{name: "comments and blank lines", in: ": hi\n\n\n: keep-alive\ndata: x\n\n", data: []string{"x"}, end: io.EOF},
		{name: "BOM", in: "\xef\xbb\xbfdata: x\n\n", data: []string{"x"}, end: io.EOF},
		{name: "priming event moves the last ID", in: "id: p\ndata\n\nid: q\n\n", data: []string{""}, lastID: "q", end: io.EOF},
		{name: "id persists", in: "id: 1\ndata: a\n\ndata: b\n\n", data: []string{"a", "b"}, lastID: "1", end: io.EOF},
		{name: "id with NUL ignored", in: "id: 1\n\nid: a\x00b\ndata: x\n\n", data: []string{"x"}, lastID: "1", end: io.EOF},
		{name: "cut event does not move the last ID", in: "id: 1\ndata: a\n\nid: 2\ndata: b", data: []string{"a"}, lastID: "1", end: errSSECut},
		{name: "cut after a field line", in: "data: a\n", end: errSSECut},
		{name: "trailing comment is not a cut", in: "data: a\n\n: bye", data: []string{"a"}, end: io.EOF},
		{name: "retry", in: "retry: 1500\n\n", retry: 1500 * time.Millisecond, end: io.EOF},
		{name: "retry not digits", in: "retry: 15x\n\nretry: -5\n\nretry: +5\n\nretry:\n\n", end: io.EOF},
		{name: "retry capped", in: "retry: 99999999999999999999999\n\n", retry: maxRetry, end: io.EOF},
		{name: "event type and unknown fields", in: "event: message\nfoo: bar\ndata: x\n\n", data: []string{"x"}, end: io.EOF},
		{name: "too large", in: "data: " + strings.Repeat("x", 100) + "\n\n", end: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The result must not depend on how the bytes arrive.
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				evs, lastID, retry, end := sseRead(r, 64)
				var data []string
				for _, ev := range evs {
					data = append(data, string(ev.Data))
				}
				if strings.Join(data, "|") != strings.Join(tc.data, "|") || len(data) != len(tc.data) {
					t.Errorf("data %q, want %q", data, tc.data)
				}
				if lastID != tc.lastID || retry != tc.retry {
					t.Errorf("last ID %q retry %s, want %q %s", lastID, retry, tc.lastID, tc.retry)
				}
				switch {
				case tc.end == nil && (errors.Is(end, io.EOF) || errors.Is(end, errSSECut)):
					t.Errorf("ended with %v, want an error", end)
				case tc.end != nil && !errors.Is(end, tc.end):
					t.Errorf("ended with %v, want %v", end, tc.end)
				}
			}
		})
	}
}

// TestSSELoneCRDeliversAtOnce: an event ended by CRs is delivered without
// waiting for a byte that may never come (the LF of a CRLF).
func TestSSELoneCRDeliversAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	sr := newSSEReader(pr, 1<<10)
	go func() { _, _ = pw.Write([]byte("data: now\r\r")) }()
	got := make(chan sseEvent, 1)
	go func() {
		ev, _ := sr.Next()
		got <- ev
	}()
	select {
	case ev := <-got:
		if string(ev.Data) != "now" {
			t.Errorf("data %q", ev.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an event ended by CR CR waited for more input")
	}
	pw.Close()
}

// FuzzSSE: the reader never panics, never returns an event larger than its
// limit, and reads the same events whatever the read boundaries.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "id: 1\nretry: 10\ndata: {}\n\n", "data: a\r\rdata: b\r\n\r\n", ": c\n\n",
		"\xef\xbb\xbfdata: x\n\n", "data: x", "id: a\x00\n\n", "retry: 99999999999999999999\n\n",
		"data:" + strings.Repeat("y", 300) + "\n\n", "\r\n\r\r\n\n",
	} {
		f.Add([]byte(s))
	}
	const limit = 256
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, id1, retry1, end1 := sseRead(strings.NewReader(string(in)), limit)
		bytewise, id2, retry2, end2 := sseRead(iotest.OneByteReader(strings.NewReader(string(in))), limit)
		for _, ev := range whole {
			if len(ev.Data) > limit {
				t.Fatalf("event of %d bytes with a %d-byte limit", len(ev.Data), limit)
			}
		}
		if len(whole) != len(bytewise) || id1 != id2 || retry1 != retry2 || (end1 == nil) != (end2 == nil) || errors.Is(end1, errSSECut) != errors.Is(end2, errSSECut) {
			t.Fatalf("read boundaries changed the result: %d events id %q retry %s end %v vs %d events id %q retry %s end %v",
				len(whole), id1, retry1, end1, len(bytewise), id2, retry2, end2)
		}
		for i := range whole {
			if string(whole[i].Data) != string(bytewise[i].Data) || whole[i].ID != bytewise[i].ID {
				t.Fatalf("event %d differs: %q vs %q", i, whole[i].Data, bytewise[i].Data)
			}
		}
		if retry1 < 0 || retry1 > maxRetry {
			t.Fatalf("retry %s out of bounds", retry1)
		}
	})
}

func TestLineReader(t *testing.T) {
	in := "one\r\ntwo\n\n" + strings.Repeat("x", 100) + "\nafter\nlast"
	lr := newLineReader(iotest.HalfReader(strings.NewReader(in)), 50)
	type result struct {
		line  string
		total int
		long  bool
	}
	var got []result
	for {
		line, total, err := lr.Next()
		if err != nil && !errors.Is(err, errLineTooLong) {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, result{string(line), total, errors.Is(err, errLineTooLong)})
	}
	// Lengths exclude the terminator: a line's total minus what was kept
	// is what was dropped, and a line of exactly the limit fits.
	want := []result{{"one", 3, false}, {"two", 3, false}, {"", 0, false}, {strings.Repeat("x", 100)[:len(got[3].line)], 100, true}, {"after", 5, false}, {"last", 4, false}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestLineReaderTerminators: the length Next reports never counts the
// terminator, whether "\n" or "\r\n", in the buffered fast path, across
// buffer boundaries (a "\r\n" split between two reads), at the limit, and
// for a line over it.
func TestLineReaderTerminators(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		max   int
		line  string
		total int
		long  bool
	}{
		{name: "lf", in: "hello\n", max: 50, line: "hello", total: 5},
		{name: "crlf", in: "world\r\n", max: 50, line: "world", total: 5},
		{name: "empty crlf", in: "\r\n", max: 50, line: "", total: 0},
		{name: "exactly the limit", in: strings.Repeat("a", 10) + "\r\n", max: 10, line: strings.Repeat("a", 10), total: 10},
		{name: "over the limit, crlf", in: strings.Repeat("b", 11) + "\r\n", max: 10, total: 11, long: true},
		{name: "unterminated cr at EOF", in: "tail\r", max: 50, line: "tail", total: 4},
		// The 16-byte buffer below ends after the '\r': "\n" is a chunk of its own.
		{name: "crlf split across reads", in: strings.Repeat("c", 15) + "\r\n", max: 50, line: strings.Repeat("c", 15), total: 15},
		{name: "long line", in: strings.Repeat("d", 40) + "\r\n", max: 50, line: strings.Repeat("d", 40), total: 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The default buffer takes the fast path; the smallest one bufio
			// allows cuts long lines into chunks, as the slow path sees them.
			for _, size := range []int{64 << 10, 16} {
				lr := newLineReader(nil, tc.max)
				lr.r = bufio.NewReaderSize(strings.NewReader(tc.in), size)
				line, total, err := lr.Next()
				if long := errors.Is(err, errLineTooLong); long != tc.long || (err != nil && !long) {
					t.Fatalf("err %v, want long=%t", err, tc.long)
				}
				if total != tc.total || (!tc.long && string(line) != tc.line) {
					t.Errorf("Next = %q, %d; want %q, %d", line, total, tc.line, tc.total)
				}
			}
		})
	}
}
