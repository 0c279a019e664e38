package look

import (
	"fmt"
	"time"

	"inflight/session"
	"inflight/wire"
)

// RequestLabel is what the request is about: the tool, prompt or resource,
// with the method when there is room. line makes the server's words safe
// for the terminal.
func RequestLabel(r *session.Request, withMethod bool, line func(string) string) string {
	target := line(r.Target)
	// A raw request's method is whatever was typed or passed to --call.
	method := line(r.Method)
	switch {
	case r.Method == wire.MethodSubscriptionsListen:
		return "listen"
	case target == "":
		return method
	case withMethod:
		return method + " " + target
	case r.Method == wire.MethodToolsCall:
		return target
	case r.Method == wire.MethodResourcesRead:
		return "read " + target
	case r.Method == wire.MethodPromptsGet:
		return "prompt " + target
	}
	return method + " " + target
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

// LateFateShort is LateFate in a word, for the list's cell.
func LateFateShort(r *session.Request) string {
	if r.ByHost {
		return "forwarded"
	}
	return "ignored"
}

// CrossingBasis says what "crossed" was judged by: the tracker's window,
// and the round trip it comes from.
func CrossingBasis(t *session.Tracker, line func(string) string) string {
	w := t.CrossingWindow()
	rt := t.RoundTrip()
	if !rt.Measured() {
		return fmt.Sprintf("crossed = within %s (no round trip measured)", FineDur(w))
	}
	return fmt.Sprintf("crossed = within %s: half the quickest round trip (%s, %s)", FineDur(w), FineDur(rt.D), line(rt.Source))
}

// FineDur formats a short duration to the microsecond: round trips are
// tens of microseconds on a loopback.
func FineDur(d time.Duration) string {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return Dur(d)
}
