package look

import (
	"testing"
	"time"
)

// A duration reads as a person reads a stopwatch, and below a millisecond
// it still says how much: "+0ms" for an answer 689µs after a cancel read
// as "at the same time".
func TestDur(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"},
		{-time.Second, "0ms"},
		{50 * time.Microsecond, "<0.1ms"},
		{689 * time.Microsecond, "0.7ms"},
		{999 * time.Microsecond, "1.0ms"},
		{time.Millisecond, "1ms"},
		{42 * time.Millisecond, "42ms"},
		{2800 * time.Microsecond, "2.8ms"},
		{12340 * time.Microsecond, "12.3ms"},
		{99960 * time.Microsecond, "100ms"},
		{2300 * time.Millisecond, "2.3s"},
		{90 * time.Second, "1m30s"},
		{2*time.Hour + 5*time.Minute, "2h05m"},
	} {
		if got := Dur(c.d); got != c.want {
			t.Errorf("Dur(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := Ago(689 * time.Microsecond); got != "+0.7ms" {
		t.Errorf("Ago(689µs) = %q, want +0.7ms", got)
	}
}
