package look

import (
	"fmt"
	"time"

	"inflight/session"
)

// FineDur formats a short duration to the microsecond: round trips are
// tens of microseconds on a loopback.
func FineDur(d time.Duration) string {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return Dur(d)
}

// LateFate is what became of what came after a cancel: inflight ignores
// what answers its own requests; of a host's, the proxy saw it forwarded
// (the wire requires it), not whether the host ignored it.
func LateFate(r *session.Request) string {
	if r.ByHost {
		return "forwarded to the host"
	}
	return "ignored"
}

// CrossingBasis says what "crossed" was judged by: the tracker's window,
// and the round trip it comes from (named through line, which makes it
// safe to draw).
func CrossingBasis(t *session.Tracker, line func(string) string) string {
	w := t.CrossingWindow()
	rt := t.RoundTrip()
	if !rt.Measured() {
		return fmt.Sprintf("crossed = within %s (no round trip measured)", FineDur(w))
	}
	return fmt.Sprintf("crossed = within %s: half the quickest round trip (%s, %s)", FineDur(w), FineDur(rt.D), line(rt.Source))
}
