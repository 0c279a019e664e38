package check

import (
	"errors"
	"fmt"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/report"
	"inflight/runner"
	"inflight/session"
	"inflight/wire"
)

// The checks of a request's own HTTP stream: what a legacy server redelivers
// when a stream is resumed with Last-Event-ID, and whether progress comes
// on the stream of the request its token names.
const (
	CheckResumeRedelivers  = "resume.redelivers"
	CheckResumeOwnStream   = "resume.own_stream"
	CheckProgressOwnStream = "progress.own_stream"
	CheckProgressKnownTok  = "progress.known_token"
)

// resumeWatch bounds how long the battery waits, once the same call run
// beside it was answered (and the stream was resumed), for the rest of
// the dropped stream: a server that redelivers sends it about when the
// other call's answer came.
const resumeWatch = 400 * time.Millisecond

const (
	pageTransportsLegacy = "2025-11-25/basic/transports.mdx"
	// naOwnStream is why the checks of a request's own stream do not
	// apply to a transport whose requests have no stream of their own.
	naOwnStream    = "on stdio and HTTP+SSE one stream carries every message: no request has a stream of its own to resume or to mix up"
	naResumeModern = "modern Streamable HTTP streams are never resumed (no Last-Event-ID)"
	naNoEventIDs   = "the server gives its events no IDs, so nothing can be resumed"
)

// ownStreamRequirement is what the checks of this file quote; false for
// another check.
func ownStreamRequirement(id string, modern bool) (requirement, bool) {
	progressPage := pageProgressLegacy
	if modern {
		progressPage = pageProgressModern
	}
	switch id {
	case CheckResumeRedelivers:
		return requirement{"a resumed stream redelivers the rest", LevelShould,
			"Disconnection MAY occur at any time (e.g., due to network conditions). Therefore: Disconnection SHOULD NOT be interpreted as the client cancelling its request. … The SSE stream SHOULD eventually include a JSON-RPC response for the JSON-RPC request sent in the POST body.", pageTransportsLegacy}, true
	case CheckResumeOwnStream:
		return requirement{"a resumed stream replays only its own messages", LevelMust,
			"The server MAY use this header to replay messages that would have been sent after the last event ID, on the stream that was disconnected, and to resume the stream from that point. The server MUST NOT replay messages that would have been delivered on a different stream.", pageTransportsLegacy}, true
	case CheckProgressOwnStream:
		if modern {
			return requirement{"progress comes on its own request's stream", LevelMust,
				"The server MAY send JSON-RPC notifications — for example, notifications/progress or notifications/message — before the final response. These notifications MUST relate to the originating client request.", pageStreamableHTTP}, true
		}
		return requirement{"progress comes on its own request's stream", LevelShould,
			"The server MAY send JSON-RPC requests and notifications before sending the JSON-RPC response. These messages SHOULD relate to the originating client request.", pageTransportsLegacy}, true
	case CheckProgressKnownTok:
		return requirement{"progress names a request's token", LevelMust,
			"Progress notifications MUST only reference tokens that: Were provided in an active request; Are associated with an in-progress operation", progressPage}, true
	}
	return requirement{}, false
}

// ownStreams is what the battery saw of requests' own streams: when each
// was resumed, and whether two calls ran at once.
type ownStreams struct {
	resumedAt map[wire.ID]time.Time
	twoCalls  bool
}

// noteStream records, for the resumption check, when a request's stream
// was resumed.
func (b *battery) noteStream(ev event.Event) {
	if ev.Kind == event.StreamOpened && ev.Resumed && !ev.RequestID.IsZero() {
		if b.own.resumedAt == nil {
			b.own.resumedAt = map[wire.ID]time.Time{}
		}
		if _, ok := b.own.resumedAt[ev.RequestID]; !ok {
			b.own.resumedAt[ev.RequestID] = ev.Time
		}
	}
}

// twoCalls is the step of the two calls at once: a and other run the
// tool side by side; on legacy HTTP a's stream is dropped at its first
// progress and resumed.
type twoCalls struct {
	b        *battery
	a, other *session.Request
	lastID   string
	dropped  time.Time
}

// checkTwoCalls runs the tool twice at once, so that a server mixing two
// requests' streams shows it (progress.own_stream, judged over the whole
// battery); on legacy Streamable HTTP it drops the first call's stream at
// its first progress and judges what the resumption brings.
func (b *battery) checkTwoCalls() {
	ids := []string{CheckResumeRedelivers, CheckResumeOwnStream}
	if b.modern {
		b.skip(naResumeModern, ids...)
		b.step("running %s twice at once", b.o.Tool)
	} else {
		b.step("running %s twice at once, dropping the first one's stream at its first progress and resuming it", b.o.Tool)
	}
	opts := session.RequestOptions{Timeout: b.o.Timeout, MaxTimeout: b.o.Timeout}
	a, errA := b.cn.Begin(b.ctx, wire.MethodToolsCall, b.params, opts)
	other, errB := b.cn.Begin(b.ctx, wire.MethodToolsCall, b.params, opts)
	if b.gone() {
		return
	}
	if err := errors.Join(errA, errB); err != nil {
		if !b.modern {
			for _, id := range ids {
				b.inconclusive(id, "the tool calls could not be sent: "+err.Error())
			}
		}
		return
	}
	b.own.twoCalls = true
	tc := &twoCalls{b: b, a: a, other: other}
	if !b.modern {
		tc.dropAndResume()
	}
	b.finish(other)
	if !a.State.IsFinal() {
		// Never redelivered: it is cancelled, and not waited for.
		_ = b.cn.Cancel(a.ID, "inflight check: the resumed stream brought nothing more", session.CauseUser)
	}
}

// dropAndResume drops a's stream at its first progress, waits for what
// the resumption brings, and judges it.
func (tc *twoCalls) dropAndResume() {
	b, a := tc.b, tc.a
	ids := []string{CheckResumeRedelivers, CheckResumeOwnStream}
	started := func() bool { return a.State.IsFinal() || a.Progress.Count > 0 }
	if b.cn.Wait(b.ctx, started, time.Now().Add(b.o.CancelAfter)) == runner.WaitInterrupted {
		b.interrupted = true
		return
	}
	if a.State.IsFinal() || a.Progress.Count == 0 {
		why := fmt.Sprintf("the tool sent no progress within %s, so its stream could not be dropped mid-way", b.o.CancelAfter)
		if a.State.IsFinal() {
			why = fmt.Sprintf("the tool call ended (%s) before its stream could be dropped; give it longer --args", describeState(a))
		}
		for _, id := range ids {
			b.inconclusive(id, why)
		}
		return
	}
	last, err := tc.drop()
	switch {
	case errors.Is(err, client.ErrNoEventID):
		b.skip(naNoEventIDs, ids...)
		return
	case errors.Is(err, client.ErrNotResumable):
		b.skip("the server answered the call with one JSON body, not an SSE stream: there is no stream to resume", ids...)
		return
	case err != nil:
		for _, id := range ids {
			b.inconclusive(id, "dropping the call's stream failed: "+err.Error())
		}
		return
	}
	tc.lastID, tc.dropped = last, time.Now()
	if tc.watch() {
		tc.judge()
	}
}

// drop drops a's stream once an event came on it: its first progress
// may have come on another stream (a server mixing them up).
func (tc *twoCalls) drop() (string, error) {
	b, a := tc.b, tc.a
	until := time.Now().Add(b.o.CancelAfter)
	for {
		last, err := b.cn.DropStream(a.ID)
		if !errors.Is(err, client.ErrNothingRead) || !time.Now().Before(until) || a.State.IsFinal() {
			return last, err
		}
		b.cn.Watch(20 * time.Millisecond)
	}
}

// watch waits until a is final or, once the call beside it was answered
// and a's stream resumed, resumeWatch has passed with nothing that ended
// a; false when interrupted.
func (tc *twoCalls) watch() bool {
	b, a, other := tc.b, tc.a, tc.other
	limit := time.Now().Add(b.o.Timeout)
	for !a.State.IsFinal() {
		next := limit
		resumed, ok := b.own.resumedAt[a.ID]
		if other.State.IsFinal() && ok {
			next = earlier(limit, later(other.Ended, resumed).Add(resumeWatch))
		}
		if !time.Now().Before(next) {
			return true
		}
		stop := func() bool {
			_, ok := b.own.resumedAt[a.ID]
			return a.State.IsFinal() || (next.Equal(limit) && other.State.IsFinal() && ok)
		}
		switch b.cn.Wait(b.ctx, stop, next) {
		case runner.WaitInterrupted:
			b.interrupted = true
			return false
		case runner.WaitClosed:
			return true
		}
	}
	return true
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// judge records resume.redelivers and resume.own_stream from what the
// tracker saw after the drop.
func (tc *twoCalls) judge() {
	b, a, other := tc.b, tc.a, tc.other
	if b.gone() {
		return
	}
	resumed, ok := b.own.resumedAt[a.ID]
	what := fmt.Sprintf("inflight dropped request %s's stream at its first progress and resumed it with Last-Event-ID %q", a.ID, tc.lastID)
	switch {
	case a.State == session.StateCompleted:
		b.add(CheckResumeRedelivers, true, fmt.Sprintf("%s; the rest came on the resumed stream: %d progress notifications in all and the response, %s after the drop",
			what, a.Progress.Count, report.Fine(a.Ended.Sub(tc.dropped))))
	case a.State.IsFinal():
		b.add(CheckResumeRedelivers, false, fmt.Sprintf("%s; the request ended %s", what, describeState(a)))
	case !ok:
		b.add(CheckResumeRedelivers, false, fmt.Sprintf("%s; the stream was not resumed within %s", what, report.Span(b.o.Timeout)))
	default:
		watched := time.Now().Sub(resumed)
		b.add(CheckResumeRedelivers, false, fmt.Sprintf("%s; nothing more came for it in the %s watched after the resumption, though the same call run beside it was answered (%s), %s after it began: the rest of the stream was never redelivered",
			what, report.Span(watched), describeState(other), report.Fine(other.Elapsed(time.Now()))))
	}
	if !ok {
		b.skip("the dropped stream was never resumed, so nothing could be replayed on it", CheckResumeOwnStream)
		return
	}
	if n, first := b.violations(session.ViolationReplayedOtherStream); n > 0 {
		b.add(CheckResumeOwnStream, false, fmt.Sprintf("%d message%s of another request came on request %s's resumed stream (first: %s)", n, report.Plural(n), a.ID, first))
		return
	}
	b.add(CheckResumeOwnStream, true, fmt.Sprintf("everything on request %s's resumed stream was its own", a.ID))
}

// checkProgressStreams judges, over the whole battery, the progress
// notifications: each for a token inflight sent (all transports), and on
// Streamable HTTP each on the stream of the request its token names.
func (b *battery) checkProgressStreams() {
	if n, first := b.violations(session.ViolationUnknownProgressToken); n > 0 {
		b.add(CheckProgressKnownTok, false, fmt.Sprintf("%d progress notification%s named a token no request of inflight's carried (first: %s)", n, report.Plural(n), first))
	} else {
		b.add(CheckProgressKnownTok, true, "every progress notification named the token of a request inflight had sent")
	}
	if !b.http {
		b.skip(naOwnStream, CheckProgressOwnStream)
		return
	}
	if n, first := b.violations(session.ViolationProgressOtherStream); n > 0 {
		b.add(CheckProgressOwnStream, false, fmt.Sprintf("%d progress notification%s came on the response stream of another request than the one its token names (first: %s)", n, report.Plural(n), first))
		return
	}
	detail := "every progress notification came on the response stream of the request its token names"
	if b.own.twoCalls {
		detail += ", two calls at once included"
	}
	b.add(CheckProgressOwnStream, true, detail)
}
