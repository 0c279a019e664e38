package ui

import (
	"strings"
	"time"

	"inflight/session"
	"inflight/source"
	"inflight/ui/detail"
	"inflight/ui/list"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// This file is the feed's side of making things happen (inflight attach's
// keys): a key on a selected host request asks the proxy to act on it
// (ui/attach says what to ask; the root carries it out with Attach.Act,
// source.Attach.Act, which writes the command); the proxy answers this view alone with
// a reply line (refused, and why, or done), and says what it then does in
// injected lines every viewer gets. The row and the detail's timeline mark
// what was done from those lines — what the proxy said it did and when,
// never what the view asked for.

// AttachCommandSource is what a command's injected lines name as their
// source (proxy.CommandSource, the same words): a line with it is a key's
// doing, one without a --rule's.
const AttachCommandSource = "a key in inflight attach"

// The phases of an injected line (its "code"; proxy.Phase…).
const (
	phaseMatched   = "matched"
	phaseActing    = "acting"
	phaseHolding   = "holding"
	phaseReleased  = "released"
	phaseDropped   = "dropped"
	phaseCancel    = "cancelled"
	phaseKept      = "kept"
	phasePassed    = "passed"
	phaseFailed    = "failed"
	phaseTakenBack = "taken-back"
)

// actMark is what the proxy said it did to one host request, latest first
// in importance: the phase it is in, since when, and by whom.
type actMark struct {
	action string // "hold", "delay 30s", "cancel" (the line's "injected")
	phase  string
	// byKey: a key (this view's or another's) did it, not a --rule.
	byKey bool
	// at is when the phase began; heldAt when the response was held
	// (zero if never); releasedAfter how long it was held.
	at, heldAt    time.Time
	releasedAfter time.Duration
	text          string
	// history is every line, for the detail's timeline.
	history []actStep
}

type actStep struct {
	at    time.Time
	phase string
}

// noteAct records an injected line on its request's mark: the request its
// ID names now in t (the proxy's lines come in order, after the request's),
// which keeps the mark when a later request takes the ID. A line naming no
// request the view follows (one of a cut history) marks nothing.
func (f *proxyFeed) noteAct(t *session.Tracker, in source.Injected) {
	id, at := in.ID, in.At
	if id.IsZero() || in.Phase == "" {
		return
	}
	r, ok := t.Get(id)
	if !ok {
		return
	}
	if f.acts == nil {
		f.acts = map[*session.Request]*actMark{}
	}
	a := f.acts[r]
	if a == nil || in.Phase == phaseMatched || in.Phase == phaseActing {
		if a == nil || a.phase != phaseHolding {
			if a == nil {
				f.sweepActs(t)
			}
			a = &actMark{}
			f.acts[r] = a
		}
	}
	if strings.Contains(in.Text, "("+AttachCommandSource+")") {
		a.byKey = true
	}
	a.action, a.phase, a.at, a.text = in.Action, in.Phase, at, in.Text
	switch in.Phase {
	case phaseHolding:
		if a.heldAt.IsZero() {
			a.heldAt = at
		}
	case phaseReleased, phaseDropped:
		if !a.heldAt.IsZero() {
			a.releasedAfter = at.Sub(a.heldAt)
		}
	}
	a.history = append(a.history, actStep{at: at, phase: in.Phase})
}

// sweepActs forgets the marks of requests t no longer keeps (it bounds
// its history): none of their rows is shown again. It runs when the marks
// have doubled since the last sweep, so each mark costs O(1).
func (f *proxyFeed) sweepActs(t *session.Tracker) {
	if len(f.acts) < 2*max(f.actsSwept, 64) {
		return
	}
	kept := func(r *session.Request) bool {
		cur, ok := t.Get(r.ID)
		return ok && cur == r
	}
	for r := range f.acts {
		if !kept(r) {
			delete(f.acts, r)
		}
	}
	for r := range f.mine {
		if !kept(r) {
			delete(f.mine, r)
		}
	}
	f.actsSwept = len(f.acts)
}

// reply is the proxy's answer to this view's command: said on the status
// line, and a command done marks its request as this view's doing.
func (f *proxyFeed) reply(news *feedNews, t *session.Tracker, reply source.Reply) {
	id := reply.ID
	what := f.line(reply.Action)
	if !id.IsZero() {
		what += " on #" + f.line(id.String())
	}
	if reply.Outcome != "done" {
		news.say = warn("the proxy refused " + what + ": " + f.line(reply.Text))
		return
	}
	if r, ok := t.Get(id); ok && reply.Action != "release" {
		if f.mine == nil {
			f.mine = map[*session.Request]bool{}
		}
		f.mine[r] = true
	}
	req := ""
	if !id.IsZero() {
		req = "#" + f.line(id.String())
	}
	text := actDone(f.line(reply.Action), req)
	if reply.Action == "release" && strings.HasPrefix(reply.Text, "took back") {
		text = "hold taken back: " + req + "'s response will pass on untouched"
	}
	news.say = screen.Status{Level: screen.Info, Text: text}
}

// actDone says in plain words what the proxy does now that it took a
// command of this view's on the request named req ("#3"; "" for none).
func actDone(act, req string) string {
	switch act {
	case "hold":
		return "the proxy holds " + req + "'s response: the host waits until it is released"
	case "delay":
		return "the proxy delays " + req + "'s response to the host"
	case "drop":
		return "the proxy drops " + req + "'s response: the host never gets it"
	case "cancel":
		return "the proxy cancels " + req + " at the server and answers the host: cancelled"
	case "cancel-silent":
		return "the proxy cancels " + req + " at the server and answers the host nothing"
	case "race":
		return "the proxy holds " + req + "'s response until the host's cancel comes, then lets both cross"
	case "release":
		return "released " + req + ": its response goes on to the host"
	case "release-all":
		return "released every held response: each goes on to the host"
	}
	if req == "" {
		return "the proxy did " + act
	}
	return "the proxy did " + act + " on " + req
}

// ticking reports whether a row's held time is counting up.
func (f *proxyFeed) ticking() bool {
	for _, a := range f.acts {
		if a.phase == phaseHolding {
			return true
		}
	}
	return false
}

// held reports whether the proxy said it holds r's response.
func (f *proxyFeed) held(r *session.Request) bool {
	a := f.acts[r]
	return a != nil && a.phase == phaseHolding
}

// hostAct is what the proxy said it did to r, as the list draws it.
func (f *proxyFeed) hostAct(r *session.Request) (list.HostAct, bool) {
	a, ok := f.acts[r]
	if !ok {
		return list.HostAct{}, false
	}
	hostCancelled := r.Cancel != nil && r.Cancel.Cause == session.CauseHost
	return list.HostAct{Action: a.action, Phase: a.phase, Mine: f.mine[r], ByKey: a.byKey, HeldAt: a.heldAt, ReleasedAfter: a.releasedAfter,
		Ended: !r.IsActive() || hostCancelled, HostCancelled: hostCancelled}, true
}

// armed reports whether a key armed on r an action that waits for its
// response (not a cancel): a release takes it back.
func (f *proxyFeed) armed(r *session.Request) bool {
	a := f.acts[r]
	if a == nil || a.phase != phaseActing || !a.byKey || !r.IsActive() {
		return false
	}
	verb := list.ActVerb(a.action)
	return verb != "cancel" && verb != "cancel-silent"
}

// fact is the detail's word on what the proxy did to r at now, in the
// styles st ("" for nothing).
func (f *proxyFeed) fact(st look.Styles, r *session.Request, now time.Time) string {
	a, ok := f.hostAct(r)
	if !ok {
		return ""
	}
	p, ok := list.HostActPart(st, a, now)
	if !ok {
		return ""
	}
	return p.Variants[0]
}

// steps are what the proxy did to r, each at its time (the detail's
// timeline reaches them all: a held response is released after the
// request ended for the server), with the timeline's word for those it
// marks.
func (f *proxyFeed) steps(r *session.Request) []detail.Act {
	a, ok := f.acts[r]
	if !ok {
		return nil
	}
	steps := make([]detail.Act, len(a.history))
	for i, s := range a.history {
		label := ""
		switch s.phase {
		case phaseActing, phaseMatched:
			label = look.ActMark + " " + list.ActVerb(a.action)
		case phaseHolding:
			label = look.ActMark + " held"
		case phaseReleased:
			label = "released"
		case phaseDropped:
			label = look.ActMark + " dropped"
		case phaseTakenBack:
			label = "taken back"
		}
		steps[i] = detail.Act{At: s.at, Label: label}
	}
	return steps
}
