package source

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// feeder applies a trace's items to a tracker as the recording run drove
// its own: the events with Apply (inflight's own traffic) or Observe (a
// proxy's), and what the run did outside events — a request begun, a
// cancel asked for, a deadline reached — when the trace's lines say it
// happened. The tracker judges every event again, at its recorded time;
// where it judges otherwise than the trace says the recording tracker
// did, the feeder says so (disagree), and never bends its judgement.
type feeder struct {
	tr      *session.Tracker
	relayed bool
	// ahead looks at the lines to come.
	ahead lookAhead
	// judge: compare with the trace and report flags (the first reading;
	// playing on from a checkpoint only rebuilds the tracker).
	judge bool
	// mine and theirs count the violations flagged, by code, by this
	// tracker and by the recording one.
	mine, theirs map[string]int
	// disagree and flag are told what judging found.
	disagree func(text string)
	flag     func(f Flag)
	// lastBegun is the largest integer ID this tracker has begun (the
	// next Begin takes the one after it).
	lastBegun int64
	// flagged are the flags raised so far, by kind, request and what: a
	// flood of late progress, or of one violation, is one flag.
	flagged map[flagKey]bool
	// seen, when set, is handed every event after the tracker applied
	// it, with what it changed, and the changes made outside an event
	// (ev nil): what a live run hands its trace (Feed).
	seen func(tr *session.Tracker, ev *event.Event, changes []session.Change)
}

// lookAhead finds what a line leaves to the lines after it: the params
// of a request about to be sent, the reason of a cancel about to be.
type lookAhead struct {
	params func(id wire.ID) json.RawMessage
	reason func(id wire.ID) string
}

type flagKey struct {
	kind FlagKind
	id   wire.ID
	text string
}

// raise reports a flag the first time its kind, request and text come.
func (f *feeder) raise(fl Flag) {
	k := flagKey{fl.Kind, fl.ID, fl.Text}
	if f.flagged[k] {
		return
	}
	if f.flagged == nil {
		f.flagged = map[flagKey]bool{}
	}
	f.flagged[k] = true
	f.flag(fl)
}

// FlagKind says what a flag of the run is.
type FlagKind uint8

// The flags a replay jumps between.
const (
	// FlagLate: something arrived after its request was given up, and
	// not within the crossing window of the cancel.
	FlagLate FlagKind = iota + 1
	// FlagViolation: a protocol violation was recorded.
	FlagViolation
	// FlagTimeout: a request's timeout expired, and it was cancelled.
	FlagTimeout
)

func (k FlagKind) String() string {
	switch k {
	case FlagLate:
		return "late"
	case FlagViolation:
		return "violation"
	case FlagTimeout:
		return "timeout"
	}
	return "flag"
}

// Flag is a moment of the run worth jumping to.
type Flag struct {
	Kind FlagKind
	// Item is the item that raised it (its index in the trace's items).
	Item int
	// ID is the request it concerns (zero for none); Text says more (the
	// violation's code, what arrived late).
	ID   wire.ID
	Text string
}

func (f *feeder) apply(it *Item, index int) {
	switch in := it.Info.(type) {
	case TrackerState:
		if f.relayed {
			f.relayedState(in)
		} else {
			f.state(in, index)
		}
		return
	case TrackerViolation:
		f.theirViolation(in.Code)
		return
	case HostClosedStream:
		f.changed(f.tr.HostClosedStreamIn(in.ID, in.SessionID, in.At), index)
		return
	case WindowOver:
		f.due(in.At, index)
		return
	case Reply:
		return
	}
	if it.HasEvent() {
		f.event(it, index)
	}
	switch in := it.Info.(type) {
	case HostGone:
		f.changed(f.tr.HostGone(in.At), index)
	case HostResumed:
		f.changed(f.tr.HostResumedIn(in.SessionID, in.At), index)
	case HostReopened:
		f.changed(f.tr.HostReopenedIn(in.SessionID, in.At), index)
	case HostEndedSession:
		f.changed(f.tr.HostEndedSession(in.SessionID, in.At), index)
	case UpstreamEnded:
		f.changed(f.tr.UpstreamStreamEndedIn(in.ID, in.SessionID, in.At), index)
	}
}

// event applies one event: inflight's own with Apply, a proxy's as its
// recorder observed it (ui/attach.go does the same with a proxy's live
// stream).
func (f *feeder) event(it *Item, index int) {
	ev := it.Event
	var changes []session.Change
	if f.relayed {
		if it.ByProxy {
			f.proxyCancel(&ev, index)
		}
		changes = f.tr.Observe(ev)
	} else {
		f.unannounced(&ev)
		changes = f.tr.Apply(ev)
	}
	if f.judge && ev.Kind == event.Received {
		if mine := session.Verdict(ev.Kind, changes); mine != it.Verdict {
			f.disagree(fmt.Sprintf("#%s: the trace judged %s, this replay %s", about(&ev), verdictName(it.Verdict), verdictName(mine)))
		}
	}
	f.flagChanges(changes, index)
	if f.seen != nil {
		f.seen(f.tr, &ev, changes)
	}
}

// about is the request an event concerns: its ID, or a progress
// notification's token.
func about(ev *event.Event) wire.ID {
	if ev.RequestID.IsZero() && ev.Progress != nil {
		return ev.Progress.Token
	}
	return ev.RequestID
}

func verdictName(v string) string {
	if v == "" {
		return "timely"
	}
	return v
}

// unannounced begins a request the trace sends without a line that began
// it — the TUI's export (e) writes the protocol log, which has no such
// lines — when its ID is the one the tracker would give it next; a
// request the trace sends under another ID is applied as it comes (the
// tracker then knows nothing of it).
func (f *feeder) unannounced(ev *event.Event) {
	if ev.Kind != event.Sent || ev.Msg.Kind != wire.KindRequest || ev.Internal {
		return
	}
	if _, known := f.tr.Get(ev.RequestID); known {
		return
	}
	if n, ok := ev.RequestID.Int(); !ok || n != f.lastBegun+1 {
		return
	}
	f.begun(f.tr.Begin(ev.Msg.Method, ev.Msg.Params, session.RequestOptions{}, ev.Time))
}

// begun notes the ID a request got.
func (f *feeder) begun(r *session.Request) {
	if n, ok := r.ID.Int(); ok && n > f.lastBegun {
		f.lastBegun = n
	}
}

// proxyCancel follows inflight's own cancel upstream in a proxy's trace
// (a rule's, a key's) as the user's cancel, as the proxy's recorder did.
func (f *feeder) proxyCancel(ev *event.Event, index int) {
	reason, cancel := "", false
	switch {
	case ev.Kind == event.Sent && ev.Msg.Method == wire.NotifyCancelled:
		cancel = true
		if c, err := wire.DecodeCancelled(ev.Msg.Params); err == nil {
			reason = c.Reason
		}
	case ev.Kind == event.CancelSent && ev.Signal == event.SignalStreamClosed:
		cancel, reason = true, ev.Reason
	}
	if !cancel {
		return
	}
	if ch, err := f.tr.RequestCancel(ev.RequestID, reason, session.CauseUser, ev.Time); err == nil {
		f.changed([]session.Change{ch}, index)
	}
}

// state follows a state line of inflight's own trace. A line that says
// what the tracker already did (the event before it moved the request)
// agrees and does nothing; the others say what the run did outside an
// event, which the replay does at the line's time: a request begun (the
// user's, or a task's own, which the clock's Due began), a cancel asked
// for (the clock's, when a timeout expired then; else the user's), a late
// window over.
func (f *feeder) state(in TrackerState, index int) {
	r, known := f.tr.Get(in.ID)
	if !known && in.From == "" && in.State == session.StatePending.String() {
		if !in.Parent.IsZero() {
			// A task's own request: the clock began it.
			f.due(in.At, index)
			if _, ok := f.tr.Get(in.ID); !ok && f.judge {
				f.disagree(fmt.Sprintf("#%s: the trace began it for task #%s, this replay did not", in.ID, in.Parent))
			}
			return
		}
		begun := f.tr.Begin(in.Method, f.ahead.params(in.ID), session.RequestOptions{}, in.At)
		f.begun(begun)
		if begun.ID != in.ID && f.judge {
			f.disagree(fmt.Sprintf("the trace began #%s, this replay #%s", in.ID, begun.ID))
		}
		return
	}
	if !known || r.State.String() == in.State {
		return
	}
	if in.State == session.StateCancelRequested.String() && r.IsActive() && r.State != session.StateCancelRequested {
		// The clock's cancel when the request's timeout had expired by
		// then; else the caller's (the user's c, a --cancel-after).
		// Due is not asked otherwise: what else it has due would be
		// begun before the cancel, in another order than the run's.
		if left, limit := r.Remaining(in.At); limit != session.LimitNone && left == 0 {
			f.due(in.At, index)
		}
		if r.State != session.StateCancelRequested {
			reason := in.Reason
			if reason == "" {
				reason = f.ahead.reason(in.ID)
			}
			if ch, err := f.tr.RequestCancel(in.ID, reason, session.CauseUser, in.At); err == nil {
				f.changed([]session.Change{ch}, index)
			}
		}
		return
	}
	// Another move outside an event is the clock's: a late window over,
	// a task's listen closed.
	f.due(in.At, index)
	if f.judge && r.State.String() != in.State && isFinalState(in.State) {
		why := ""
		if r.State == session.StateCancelRequested {
			// Settled by the clock in the run, still watched here.
			why = " (the run's late window was shorter than the replay's)"
		}
		f.disagree(fmt.Sprintf("#%s: the trace says %s, this replay %s%s", in.ID, stateWords(in.State), stateWords(r.State.String()), why))
	}
}

// relayedState compares a proxy's state line with the replay's, where the
// proxy says a request ended.
func (f *feeder) relayedState(in TrackerState) {
	if !f.judge {
		return
	}
	if r, ok := f.tr.Get(in.ID); ok && isFinalState(in.State) && in.State != r.State.String() {
		f.disagree(fmt.Sprintf("#%s: the trace says %s, this replay %s", in.ID, stateWords(in.State), stateWords(r.State.String())))
	}
}

// due is the clock reaching at: what the tracker has due then.
func (f *feeder) due(at time.Time, index int) {
	d := f.tr.Due(at)
	for _, r := range d.Requests {
		f.begun(r)
	}
	if f.judge {
		for _, x := range d.Cancels {
			f.raise(Flag{Kind: FlagTimeout, Item: index, ID: x.ID, Text: x.Reason})
		}
	}
	f.changed(d.Changes, index)
}

// changed hands changes made outside an event to seen, and notes their
// flags.
func (f *feeder) changed(changes []session.Change, index int) {
	f.flagChanges(changes, index)
	if f.seen != nil && len(changes) > 0 {
		f.seen(f.tr, nil, changes)
	}
}

// flagChanges notes the flags among changes, and counts the violations
// to compare with the trace's.
func (f *feeder) flagChanges(changes []session.Change, index int) {
	if !f.judge {
		return
	}
	for _, ch := range changes {
		switch ch.Kind {
		case session.ChangeLate:
			f.raise(Flag{Kind: FlagLate, Item: index, ID: ch.ID, Text: ch.What.String()})
		case session.ChangeViolation:
			f.mine[ch.Violation.Code]++
			f.raise(Flag{Kind: FlagViolation, Item: index, ID: ch.Violation.RequestID, Text: ch.Violation.Code})
		}
	}
}

// theirViolation compares a violation the trace's tracker flagged with
// this one's.
func (f *feeder) theirViolation(code string) {
	if !f.judge {
		return
	}
	f.theirs[code]++
	if f.mine[code] < f.theirs[code] {
		f.disagree(fmt.Sprintf("the trace flagged %s and this replay did not", code))
		f.mine[code]++ // said once
	}
}

// ended compares, at the end of the trace, the flags each side raised.
func (f *feeder) ended() {
	if !f.judge {
		return
	}
	for code, n := range f.mine {
		if t := f.theirs[code]; n > t {
			f.disagree(fmt.Sprintf("this replay flagged %s %d times, the trace %d", code, n, t))
		}
	}
}

// stateWords is a trace's state name in the words the list says it with
// ("cancel_requested" is "cancelling", "timed_out" "timed out"): the
// disagreement is read on the replay's status line, beside the list.
func stateWords(name string) string {
	if name == session.StateCancelRequested.String() {
		return "cancelling"
	}
	return strings.ReplaceAll(name, "_", " ")
}

// isFinalState reports whether a trace's state name is a final state's.
func isFinalState(name string) bool {
	for s := session.StatePending; s.String() != "unknown"; s++ {
		if s.String() == name {
			return s.IsFinal()
		}
	}
	return false
}
