package call

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/session"
)

// On a terminal the bar stays on one line, whatever the server's message:
// a bar that wraps leaves a line behind at every redraw.
func TestProgressBarFitsTheTerminal(t *testing.T) {
	var out bytes.Buffer
	v := newLiveView(&out, true, nil)
	v.columns = func() int { return 40 }
	start := time.Now()
	r := &session.Request{Created: start, Progress: session.Progress{Count: 1, Value: 1, Total: 5, HasTotal: true,
		Message: strings.Repeat("a long progress message ", 10)}}
	v.drawProgress(r, start.Add(time.Second))
	r.Progress.Value = 2
	v.drawProgress(r, start.Add(2*time.Second))
	for _, seg := range strings.Split(out.String(), "\r\x1b[K") {
		if w := ansi.StringWidth(seg); w > 39 {
			t.Errorf("a bar line %d columns wide on a 40-column terminal: %q", w, seg)
		}
	}
	if !strings.Contains(out.String(), "…") {
		t.Errorf("the long message was not cut with an ellipsis: %q", out.String())
	}
}

// A server's progress of 1e308 (and a total of 1e-300) prints bounded, as
// a bar and as plain lines: not 309 digits, not "+Inf%".
func TestProgressHugeNumbersBounded(t *testing.T) {
	for _, bar := range []bool{true, false} {
		var out bytes.Buffer
		v := newLiveView(&out, bar, nil)
		v.columns = func() int { return 0 }
		start := time.Now()
		for i, p := range []session.Progress{
			{Count: 1, Value: 1e308, Total: 1e308, HasTotal: true},
			{Count: 2, Value: 1e308, Total: 1e-300, HasTotal: true},
			{Count: 3, Value: -1e308},
		} {
			r := &session.Request{Created: start, Progress: p}
			v.drawProgress(r, start.Add(time.Duration(i+1)*time.Second))
		}
		s := out.String()
		for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if len(line) > 80 {
				t.Errorf("bar %v: a progress line of %d bytes: %.100q", bar, len(line), line)
			}
		}
		for _, want := range []string{"1e+308/1e+308", "1e+308/1e-300", "-1e+308"} {
			if !strings.Contains(s, want) {
				t.Errorf("bar %v: no %q in %q", bar, want, s)
			}
		}
		if strings.Contains(s, "Inf") || strings.Contains(s, "NaN") {
			t.Errorf("bar %v: %q", bar, s)
		}
	}
}

// Late traffic under a millisecond after the cancel says how long it was,
// to a tenth of a millisecond, as replay --text does: "0s after the cancel"
// read as if it came with the cancel.
func TestLateUnderAMillisecondIsNotZero(t *testing.T) {
	var out bytes.Buffer
	v := newLiveView(&out, false, nil)
	start := time.Now()
	cancelAt := start.Add(300 * time.Millisecond)
	r := &session.Request{Created: start, Cancel: &session.Cancel{At: cancelAt}}
	r.Late.ProgressAfterCancel = 1
	v.lateProgress(r, event.Event{Time: cancelAt.Add(400 * time.Microsecond)})
	r.Late.ProgressAfterCancel = 2
	v.lateProgress(r, event.Event{Time: cancelAt.Add(1500 * time.Millisecond)})
	r.Late.ProgressCrossed = 1
	v.crossedProgress(r, event.Event{Time: cancelAt.Add(50 * time.Microsecond)})
	r.Late.AfterCancel = 700 * time.Microsecond
	v.lateResponse(r)
	s := out.String()
	for _, want := range []string{
		"late progress #1, 0.4ms after the cancel",
		"late progress #2, 1.50s after the cancel",
		"crossed the cancel in flight, 0.1ms after it",
		"arrived 0.7ms after the cancel",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s)
		}
	}
	if strings.Contains(s, " 0s ") {
		t.Errorf("a lateness printed as 0s:\n%s", s)
	}
}
