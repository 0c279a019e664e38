package proxy

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"inflight/event"
	"inflight/otlp"
	"inflight/report"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/wire"
)

// control is what a control line tells the recorder, in order with the
// lines around it.
type control uint8

const (
	ctlNone control = iota
	// ctlHostGone: the host closed the proxy's stdin.
	ctlHostGone
	// ctlClosed: the server's end is over; err says why.
	ctlClosed
	// ctlInjected: a rule did something (line.inj says what).
	ctlInjected
	// ctlStreamClosed: the host closed the HTTP response stream of its
	// request line.id before it ended (http.go).
	ctlStreamClosed
	// ctlHostResumed: the host resumed a stream (a GET with
	// Last-Event-ID, http.go).
	ctlHostResumed
	// ctlHostReopened: the host opened a GET stream without
	// Last-Event-ID; ctlHostEnded: it ended its session (DELETE);
	// ctlUpstreamEnded: the server's stream of the host's request line.id
	// ended (http.go).
	ctlHostReopened
	ctlHostEnded
	ctlUpstreamEnded
	// ctlExchange: an HTTP exchange is over (line.http; http_record.go).
	ctlExchange
)

// injection is what a rule did, for the record.
type injection struct {
	id wire.ID
	// session is the host session of the request acted on (HTTP): a
	// request of another session with that ID is not it.
	session string
	// action is the rule's action as the trace names it ("delay 30s");
	// rule the rule as written.
	action, rule string
	// text says what was done, in a sentence for the trace and stderr.
	text string
	// quiet: a note for the trace only (a rule matched; nothing done yet).
	quiet bool
	// onResponse: the server's response to id, which follows in the
	// queue, is the line acted on (held or dropped).
	onResponse bool
	// cancel is the notifications/cancelled inflight sent the server
	// (reason its reason, serverSoFar its position in the server's
	// output); answer the error it answered the host with (said on the
	// injected line).
	cancel, answer []byte
	reason         string
	serverSoFar    int64
	failed         bool
	// closedUp: the cancel was closing the upstream request's stream (the
	// modern HTTP cancel, http_inject.go); cancel is nil then.
	closedUp bool
	// phase is what happened (inject.go's Phase…), the line's "code".
	phase string
}

// recorder turns the lines the forwarders copied into events, applies them
// to the tracker, and writes the trace. It is one goroutine, the only one
// that touches the tracker; it is never waited for by the wire.
type recorder struct {
	q  *queue
	tr *session.Tracker
	// tws are the trace's writers: the --trace file, the attach socket's.
	tws    []*trace.Writer
	stderr io.Writer
	name   string
	// onEvent, when set, sees every event with what it changed (tests, and
	// the attach socket's stream later). It runs on the recorder's
	// goroutine: a slow one slows the recording, never the wire.
	onEvent func(ev event.Event, changes []session.Change, tr *session.Tracker)
	// spans builds the OTLP spans from what the tracker applied (nil:
	// none).
	spans *otlp.Sink
	// maxLine is the recording limit of one line, for the words of a cut one.
	maxLine int
	done    chan struct{}
	// failed: the recorder panicked and records no more.
	failed bool
	// era and server are what the last connected line said.
	era    event.Era
	server string
	// injectedOn names the action a rule took on the server's response to
	// an ID, for that response's line.
	injectedOn map[wire.ID]string
	// transport is what the proxied connection is.
	transport event.TransportKind
	// byTap is the request each of the last HTTP POSTs carried (by
	// line.tap, modulo its length): a stream closed is that request's,
	// not a later one's with the same ID.
	byTap [tapMemory]tapRequest
	// httpTrace, when HTTP exchanges are recorded, is the writer of their
	// lines (http_record.go).
	httpTrace *trace.Writer
}

// tapMemory bounds the POSTs whose request the recorder remembers.
const tapMemory = 4096

type tapRequest struct {
	tap uint64
	req *session.Request
	// batch: the POST carried several requests, so a question on its
	// stream could be any one's.
	batch bool
}

// run records until the queue is closed and empty.
func (r *recorder) run() {
	defer close(r.done)
	var buf []line
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		ls, g, closed := r.q.take(buf)
		if !g.empty() {
			r.noteGap(g, time.Now())
		}
		r.recordAll(ls)
		clear(ls) // the lines' bytes go now, not when the slot is reused
		buf = ls
		r.due(time.Now())
		if closed && len(ls) == 0 {
			r.summary()
			r.flush()
			return
		}
		if len(ls) > 0 {
			continue
		}
		r.flush()
		wait := time.Hour
		if next, ok := r.tr.NextDeadline(); ok {
			wait = max(time.Until(next), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-r.q.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// recordAll records lines, unless the recorder has failed. A failure of
// the record (a panic on traffic nobody foresaw) must not take the host's
// server away with it: it is said once on stderr, and from then on the
// lines are forwarded as ever and only no longer recorded.
func (r *recorder) recordAll(ls []line) {
	if r.failed {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			r.failed = true
			r.say(fmt.Sprintf("the recorder failed (%v): forwarding goes on, unrecorded", p))
			r.flush()
		}
	}()
	for i := range ls {
		r.record(&ls[i])
	}
}

// control applies a control line: what the proxy saw besides messages.
func (r *recorder) control(l *line) {
	switch l.ctl {
	case ctlExchange:
		r.exchange(l)
	case ctlHostGone:
		r.report(event.Event{Kind: event.Note, Time: l.at, Text: trace.NoteHostClosed}, r.tr.HostGone(l.at))
	case ctlClosed:
		ev := event.Event{Kind: event.TransportClosed, Time: l.at, Err: l.err}
		r.report(ev, r.tr.Observe(ev))
	case ctlInjected:
		r.injected(l.at, l.inj)
	case ctlStreamClosed:
		if t := r.byTap[l.tap%tapMemory]; l.tap != 0 && t.tap == l.tap {
			// The POST's own request: if its ID names another by now (the
			// host's next request took it once it was over), or the
			// tracker never followed it (another's with the ID was in
			// flight), the closure is not the followed request's.
			if cur, ok := r.tr.Get(l.id); !ok || t.req == nil || cur != t.req {
				return
			}
		}
		ev := event.Event{Kind: event.StreamClosed, Time: l.at, RequestID: l.id, ByClient: true, SessionID: l.session}
		r.report(ev, r.tr.HostClosedStreamIn(l.id, l.session, l.at))
	case ctlHostResumed:
		r.report(event.Event{Kind: event.Note, Time: l.at, Text: trace.NoteHostResumed, SessionID: l.session}, r.tr.HostResumedIn(l.session, l.at))
	case ctlHostReopened:
		r.report(event.Event{Kind: event.Note, Time: l.at, Text: trace.NoteHostReopened, SessionID: l.session}, r.tr.HostReopenedIn(l.session, l.at))
	case ctlHostEnded:
		r.report(event.Event{Kind: event.Note, Time: l.at, Text: trace.NoteHostEndedSession, SessionID: l.session}, r.tr.HostEndedSession(l.session, l.at))
	case ctlUpstreamEnded:
		if req, ok := r.tr.Get(l.id); ok && req.State.IsActive() {
			r.report(event.Event{Kind: event.Note, Time: l.at, Text: trace.NoteUpstreamEnded, RequestID: l.id, SessionID: l.session},
				r.tr.UpstreamStreamEndedIn(l.id, l.session, l.at))
		}
	}
}

// record applies one line.
func (r *recorder) record(l *line) {
	if l.ctl != ctlNone {
		r.control(l)
		return
	}
	if len(l.raw) == 0 && l.total == 0 {
		return
	}
	var ev event.Event
	switch l.from {
	case FromStderr:
		ev = event.Event{Kind: event.Stderr, Time: l.at, Text: string(l.raw), Truncated: l.total - len(l.raw)}
	case FromHost:
		ev = event.Event{Kind: event.Sent, Time: l.at, Raw: l.raw, Truncated: l.total - len(l.raw), SessionID: l.session}
		if m, err := wire.DecodeOwned(l.raw); err == nil {
			ev.Msg = m
		}
		if ev.Msg.Kind != wire.KindNotification {
			ev.RequestID = ev.Msg.ID
		} else if ev.Msg.Method == wire.NotifyCancelled {
			// Where the server's output stood when the cancel passed:
			// what ends within it was sent before (crossing.go).
			ev.StreamEnd = l.serverSoFar
		}
	case FromServer:
		ev = r.serverEvent(l)
	}
	before, _ := r.tr.Get(ev.RequestID)
	changes := r.tr.Observe(ev)
	// A host request the tracker began following now (not one it already
	// had under that ID: a duplicate, or another session's, not followed).
	var begun *session.Request
	if ev.Kind == event.Sent && ev.Msg.Kind == wire.KindRequest {
		if req, ok := r.tr.Get(ev.RequestID); ok && req != before {
			begun = req
		}
		if l.tap != 0 {
			slot := &r.byTap[l.tap%tapMemory]
			*slot = tapRequest{tap: l.tap, req: begun, batch: slot.tap == l.tap} // req nil: not followed
		}
	}
	if ev.Progress != nil {
		// The trace names the request progress is for; a host's token is
		// not its ID, as inflight's own tokens are.
		if req, ok := r.tr.ByProgressToken(ev.Progress.Token); ok {
			ev.RequestID = req.ID
		}
	}
	injected := ""
	if ev.Kind == event.Received && ev.Msg.IsResponse() {
		if a, ok := r.injectedOn[ev.RequestID]; ok {
			injected = a
			delete(r.injectedOn, ev.RequestID)
		}
	}
	r.reportInjected(ev, changes, injected)
	if begun != nil {
		for _, tw := range r.tws {
			_ = tw.State(ev.Time, begun, begun.State, begun.State)
		}
	}
	if info, _ := r.tr.Conn(); info.Era != r.era || info.ServerName != r.server {
		// The host's traffic showed the era (its initialize answered, or a
		// modern request's _meta) or the server (server/discover's
		// answer): say so as a connection would.
		r.era, r.server = info.Era, info.ServerName
		info.Transport = r.transport
		c := event.Event{Kind: event.Connected, Time: ev.Time, Info: &info}
		r.report(c, r.tr.Apply(c))
	}
}

// serverEvent is the event of a line the server sent.
func (r *recorder) serverEvent(l *line) event.Event {
	ev := event.Event{Kind: event.Received, Time: l.at, Raw: l.raw, StreamEnd: l.end, SessionID: l.session}
	m, p, err := wire.DecodeLine(l.raw)
	switch {
	case l.total > len(l.raw):
		ev.Kind, ev.Truncated = event.Malformed, l.total-len(l.raw)
		ev.Err = fmt.Errorf("a line of %d bytes, over the %d bytes inflight records of one: forwarded whole, recorded in part", l.total, r.maxLine)
	case err != nil:
		ev.Kind, ev.Err = event.Malformed, err
	default:
		ev.Msg, ev.Progress = m, p
		if m.Kind != wire.KindNotification {
			ev.RequestID = m.ID
		}
		if m.Kind == wire.KindRequest {
			ev.Owner = r.streamOwner(l.tap)
		}
	}
	return ev
}

// streamOwner is the host request whose HTTP response stream carried a
// server's request: the one request the POST numbered tap carried, while
// the tracker follows it under its ID (zero on stdio, on a GET stream, for
// a batch, or once the ID names another request).
func (r *recorder) streamOwner(tap uint64) wire.ID {
	t := r.byTap[tap%tapMemory]
	if tap == 0 || t.tap != tap || t.req == nil || t.batch {
		return wire.ID{}
	}
	if cur, ok := r.tr.Get(t.req.ID); !ok || cur != t.req {
		return wire.ID{}
	}
	return t.req.ID
}

// report writes an event and what it changed to the trace, the flags to
// stderr, and hands both to onEvent.
func (r *recorder) report(ev event.Event, changes []session.Change) {
	r.reportInjected(ev, changes, "")
}

// reportInjected is report for a line a rule acted on (injected names
// the action; "" for none).
func (r *recorder) reportInjected(ev event.Event, changes []session.Change, injected string) {
	verdict := session.Verdict(ev.Kind, changes)
	for _, tw := range r.tws {
		if injected == "" {
			_ = tw.Judged(ev, verdict)
		} else {
			rec := trace.FromEvent(ev, tw.Since(ev.Time))
			rec.Verdict, rec.Injected = verdict, injected
			if tw.Positions() {
				rec.End = int(ev.StreamEnd)
			}
			_ = tw.Write(rec)
		}
		_ = tw.Changes(r.tr, changes)
	}
	if r.stderr != nil {
		for _, ch := range changes {
			if text, ok := flagText(ch, r.tr, r.transport); ok {
				fmt.Fprintf(r.stderr, "inflight proxy %s: %s\n", termsafe.Line(r.name), text)
			}
		}
	}
	r.spans.Applied(r.tr, &ev, changes)
	if r.onEvent != nil {
		r.onEvent(ev, changes, r.tr)
	}
}

// flush writes out what the trace writers hold, whenever the recorder
// has caught up.
func (r *recorder) flush() {
	for _, tw := range r.tws {
		_ = tw.Flush()
	}
}

// due settles the host's cancels whose late window has passed, and judges
// a closed stream the host did not resume in time (session.Tracker.Due).
// It sends nothing, and the tracker asks for nothing: it observes (Observe)
// a host's traffic, so the requests, their timeouts, their cancels and
// their tasks' polls are the host's, and its Due has no Cancels or
// Requests.
func (r *recorder) due(now time.Time) {
	if _, ok := r.tr.NextDeadline(); !ok {
		return
	}
	changes := r.tr.Due(now).Changes
	if len(changes) > 0 {
		note := trace.NoteLateWindowOver
		for _, ch := range changes {
			if ch.Kind == session.ChangeViolation && (ch.Violation.Code == session.ViolationHostClosedStreamLegacy || ch.Violation.Code == session.ViolationHostNoResume) {
				note = trace.NoteResumeWaitOver
			}
		}
		r.report(event.Event{Kind: event.Note, Time: now, Text: note}, changes)
	}
}

// summary says, as the proxy ends, what it found of the host (the host_
// codes, counted) and how many of its requests it no longer followed, on
// stderr and as the trace's last note.
func (r *recorder) summary() {
	if r.failed {
		return
	}
	counts := r.tr.Violations().Counts()
	codes := make([]string, 0, len(counts))
	for code := range counts {
		if session.IsHostFinding(code) {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes)
	parts := make([]string, 0, len(codes)+1)
	for _, code := range codes {
		parts = append(parts, fmt.Sprintf("%s %d", code, counts[code]))
	}
	if n := r.tr.Counts().Unfollowed; n > 0 {
		parts = append(parts, fmt.Sprintf("%d older requests no longer followed", n))
	}
	if len(parts) == 0 {
		return
	}
	text := "of the host: " + strings.Join(parts, ", ")
	r.report(event.Event{Kind: event.Note, Time: time.Now(), Text: text}, nil)
	r.say(text)
}

// noteGap records that lines went by unrecorded.
func (r *recorder) noteGap(g gap, now time.Time) {
	other := 0
	for _, n := range g.other {
		other += n
	}
	text := fmt.Sprintf("the recorder fell behind: %d progress notifications and %d other lines were forwarded but not recorded", g.progress, other)
	ev := event.Event{Kind: event.Note, Time: now, Text: text}
	r.report(ev, nil)
	if r.stderr != nil && other > 0 {
		fmt.Fprintf(r.stderr, "inflight proxy %s: %s\n", termsafe.Line(r.name), text)
	}
}

// flagText is the line a change earns on the proxy's stderr: the host's
// faults and late answers, which a person reading a host's server log
// should see. Late progress is in the trace, not here: a flood of it
// would bury the log.
func flagText(ch session.Change, tr *session.Tracker, transport event.TransportKind) (string, bool) {
	switch ch.Kind {
	case session.ChangeViolation:
		v := ch.Violation
		switch v.Code {
		case session.ViolationHostCancelledInitialize:
			return "⚑ host cancelled initialize (request " + termsafe.Line(v.RequestID.String()) + ")", true
		case session.ViolationHostCancelledUnknown:
			return "⚑ host cancelled an unknown ID (" + termsafe.Line(v.RequestID.String()) + ")", true
		case session.ViolationHostAbandoned:
			return "⚑ host gave up without cancelling " + describe(tr, v.RequestID), true
		case session.ViolationHostClosedStreamLegacy:
			return "⚑ host closed the stream on legacy HTTP: not a cancel there (" + describe(tr, v.RequestID) + ")", true
		case session.ViolationHostDuplicateID:
			return "⚑ host reused request ID " + termsafe.Line(v.RequestID.String()), true
		case session.ViolationHostCancelledWhileProgressing:
			// The finding says it all, from "the host …": one statement.
			return "⚑ " + strings.TrimPrefix(termsafe.Line(v.Detail), "the "), true
		case session.ViolationHostTimeoutDuringQuestion, session.ViolationHostNoResume, session.ViolationHostResumedWithoutLastEventID,
			session.ViolationHostAnsweredUnknownID, session.ViolationHostCancelledAnswered:
			return "⚑ " + termsafe.Line(v.Detail) + " (" + v.Code + ")", true
		}
	case session.ChangeLate:
		if ch.What != session.ArrivalResponse {
			return "", false
		}
		req, ok := tr.Get(ch.ID)
		if !ok || req.Cancel == nil || req.Cancel.Cause != session.CauseHost {
			return "", false
		}
		// On HTTP the host may have closed the stream it would come on
		// (a race's hold ends at its cancel): forwarded only where open.
		fwd := "forwarded; the host must ignore it"
		if transport == event.TransportHTTP {
			fwd = "passed on if the host's stream was still open; the host must ignore it"
		}
		return fmt.Sprintf("⚑ late response to %s, %s after the host's cancel (%s)",
			describe(tr, ch.ID), report.After(req.Late.AfterCancel), fwd), true
	}
	return "", false
}

// describe names a request as "tools/call slow (id 3)".
func describe(tr *session.Tracker, id wire.ID) string {
	req, ok := tr.Get(id)
	if !ok {
		return "request " + termsafe.Line(id.String())
	}
	s := req.Method
	if req.Target != "" {
		s += " " + req.Target
	}
	return termsafe.Line(s) + " (id " + termsafe.Line(id.String()) + ")"
}

// injected records what a rule did: the cancel inflight sent upstream
// (the tracker follows it as the user's cancel, so the server's answer
// after it is judged as after any cancel), the answer it gave the host,
// and a line saying what was done, in the trace and on stderr.
func (r *recorder) injected(at time.Time, in *injection) {
	// A cancel of a request the tracker does not follow (another host
	// session's with that ID) is said, not applied to the one it follows.
	followed := true
	if req, ok := r.tr.Get(in.id); ok && in.session != "" && req.HostSession() != "" && req.HostSession() != in.session {
		followed = false
	}
	if (in.cancel != nil || in.closedUp) && followed {
		if ch, err := r.tr.RequestCancel(in.id, in.reason, session.CauseUser, at); err == nil {
			for _, tw := range r.tws {
				_ = tw.Changes(r.tr, []session.Change{ch})
			}
			r.spans.Applied(r.tr, nil, []session.Change{ch})
		}
		signal := event.SignalStreamClosed
		if in.cancel != nil {
			signal = event.SignalNotification
			out := event.Event{Kind: event.Sent, Time: at, Raw: in.cancel, RequestID: in.id, Internal: true}
			if m, err := wire.DecodeOwned(in.cancel); err == nil {
				out.Msg = m
			}
			r.tr.Observe(out)
			r.writeAs(out, in.action)
		}
		sent := event.Event{Kind: event.CancelSent, Time: at, RequestID: in.id, Signal: signal,
			Reason: in.reason, StreamEnd: in.serverSoFar}
		changes := r.tr.Observe(sent)
		r.writeAs(sent, in.action)
		for _, tw := range r.tws {
			_ = tw.Changes(r.tr, changes)
		}
		r.spans.Applied(r.tr, &sent, changes)
		if in.closedUp {
			// Nothing more can come on the closed stream: the cancel settles.
			closed := event.Event{Kind: event.StreamClosed, Time: at, RequestID: in.id, ByClient: true}
			changes := r.tr.Observe(closed)
			r.writeAs(closed, in.action)
			for _, tw := range r.tws {
				_ = tw.Changes(r.tr, changes)
			}
			r.spans.Applied(r.tr, &closed, changes)
		}
	}
	if in.onResponse {
		if r.injectedOn == nil {
			r.injectedOn = map[wire.ID]string{}
		}
		r.injectedOn[in.id] = in.action
	}
	id := in.id
	text := in.text
	if in.answer != nil {
		// The answer the host got is inflight's, not the server's: it is
		// said on this line, not as a message "in", which replay (and any
		// reader of the trace) would take for the server's response.
		text += ": " + string(in.answer)
	}
	rec := trace.Record{Dir: trace.DirLocal, Event: trace.EventInjected, ID: &id, Injected: in.action, Text: text, Code: in.phase}
	for _, tw := range r.tws {
		rec.MS = tw.Since(at)
		_ = tw.Write(rec)
	}
	if !in.quiet {
		r.say("injected " + in.action + ": " + in.text)
	}
}

// writeAs writes a message or event inflight itself made (a rule's), "by"
// inflight, with the action that made it.
func (r *recorder) writeAs(ev event.Event, injected string) {
	for _, tw := range r.tws {
		rec := trace.FromEvent(ev, tw.Since(ev.Time))
		rec.By, rec.Internal, rec.Injected = "inflight", false, injected
		if tw.Positions() {
			rec.End = int(ev.StreamEnd)
		}
		_ = tw.Write(rec)
	}
}
