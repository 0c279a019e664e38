package trace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A stderr flood is kept to its head, a note with the count of lines left
// out, and its tail; the tail is written once the flood is over — after
// StderrQuiet without a dropped line, or at the connection's close.
func TestWriterBoundsStderr(t *testing.T) {
	var buf bytes.Buffer
	start := time.Now()
	clock := start
	w := NewWriter(&buf, start, nil)
	w.now = func() time.Time { return clock }
	const n = 5000
	for i := 1; i <= n; i++ {
		if err := w.Write(Record{MS: float64(i), Dir: DirIn, Event: EventStderr, Text: fmt.Sprintf("line %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), "\n"); got != StderrHeadLines {
		t.Fatalf("%d lines written during the flood, want the head's %d", got, StderrHeadLines)
	}
	clock = clock.Add(StderrQuiet)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := ReadAll(&buf)
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	if len(recs) != StderrHeadLines+1+StderrTailLines {
		t.Fatalf("%d records, want head, note and tail", len(recs))
	}
	note := recs[StderrHeadLines]
	left := n - StderrHeadLines - StderrTailLines
	leftBytes := 0
	for i := StderrHeadLines + 1; i <= n-StderrTailLines; i++ {
		leftBytes += len(fmt.Sprintf("line %d", i))
	}
	if note.Event != EventNote || note.Dropped != left || !strings.Contains(note.Text, fmt.Sprintf("%d lines (%d bytes)", left, leftBytes)) {
		t.Errorf("the note: %+v", note)
	}
	if first, last := recs[StderrHeadLines+1], recs[len(recs)-1]; first.Text != fmt.Sprintf("line %d", n-StderrTailLines+1) || last.Text != fmt.Sprintf("line %d", n) {
		t.Errorf("the tail runs from %q to %q", first.Text, last.Text)
	}

	// A second flood, ended by the connection's close.
	buf.Reset()
	for i := 1; i <= 300; i++ {
		_ = w.Write(Record{MS: float64(n + i), Dir: DirIn, Event: EventStderr, Text: fmt.Sprintf("again %d", i)})
	}
	_ = w.Write(Record{MS: float64(n + 400), Dir: DirLocal, Event: EventTransportClosed})
	_ = w.Flush()
	recs, _, _ = ReadAll(&buf)
	if len(recs) != 1+StderrTailLines+1 || recs[0].Dropped != 300-StderrTailLines || recs[len(recs)-1].Event != EventTransportClosed {
		t.Errorf("after the second flood: %d records, note %+v", len(recs), recs[0])
	}
}
