package look

import (
	"fmt"
	"time"

	"inflight/session"
)

// Elapsed is the one meaning of "elapsed" on every screen (the list's
// ELAPSED column, the detail's header) and in `call` (elapsedMs) alike:
// from the request's start (when it was created, which is also where its
// timeout counts from) until its fate is known, that is until it reached a
// final state. While its cancel is pending the request is still in flight,
// so elapsed keeps running through the late window; it stops when a
// response, the end of the late window or w (stop watching) settles it.
func Elapsed(r *session.Request, now time.Time) time.Duration { return r.Elapsed(now) }

// LateWindowLeft is how much of the late window a request whose cancel is
// pending still waits for news before it settles on its own (ok is false
// for any other request).
func LateWindowLeft(r *session.Request, now time.Time) (left time.Duration, ok bool) {
	if r.State != session.StateCancelRequested || r.Cancel == nil || r.Cancel.SettleBy.IsZero() {
		return 0, false
	}
	return max(0, r.Cancel.SettleBy.Sub(now)), true
}

// WatchingText says that a cancelled request is still watched for late
// traffic, and for how long: "watching for late traffic · 3.2s left"
// ("" for a request not in its late window). The list and the detail both
// say it in these words.
func WatchingText(r *session.Request, now time.Time) string {
	left, ok := LateWindowLeft(r, now)
	if !ok {
		return ""
	}
	return fmt.Sprintf("watching for late traffic · %s left", Dur(left))
}
