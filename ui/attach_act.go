package ui

import (
	"strings"
	"time"

	"inflight/session"
	"inflight/source"
	"inflight/ui/detail"
	"inflight/ui/look"
)

// This file is the view's side of making things happen (inflight attach's
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
	phaseMatched  = "matched"
	phaseActing   = "acting"
	phaseHolding  = "holding"
	phaseReleased = "released"
	phaseDropped  = "dropped"
	phaseCancel   = "cancelled"
	phaseKept     = "kept"
	phasePassed   = "passed"
	phaseFailed   = "failed"
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
// ID names now (the proxy's lines come in order, after the request's), which
// keeps the mark when a later request takes the ID. A line naming no request
// the view follows (one of a cut history) marks nothing.
func (m *Model) noteAct(in source.Injected) {
	id, at := in.ID, in.At
	if id.IsZero() || in.Phase == "" {
		return
	}
	r, ok := m.tracker.Get(id)
	if !ok {
		return
	}
	if m.attach.acts == nil {
		m.attach.acts = map[*session.Request]*actMark{}
	}
	a := m.attach.acts[r]
	if a == nil || in.Phase == phaseMatched || in.Phase == phaseActing {
		if a == nil || a.phase != phaseHolding {
			if a == nil {
				m.sweepActs()
			}
			a = &actMark{}
			m.attach.acts[r] = a
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

// sweepActs forgets the marks of requests the tracker no longer keeps (it
// bounds its history): none of their rows is shown again. It runs when the
// marks have doubled since the last sweep, so each mark costs O(1).
func (m *Model) sweepActs() {
	if len(m.attach.acts) < 2*max(m.attach.actsSwept, 64) {
		return
	}
	kept := func(r *session.Request) bool {
		cur, ok := m.tracker.Get(r.ID)
		return ok && cur == r
	}
	for r := range m.attach.acts {
		if !kept(r) {
			delete(m.attach.acts, r)
		}
	}
	for r := range m.attach.mine {
		if !kept(r) {
			delete(m.attach.mine, r)
		}
	}
	m.attach.actsSwept = len(m.attach.acts)
}

// attachReply shows the proxy's answer to this view's command.
func (m *Model) attachReply(reply source.Reply) {
	id := reply.ID
	what := m.line(reply.Action)
	if !id.IsZero() {
		what += " on #" + m.line(id.String())
	}
	if reply.Outcome != "done" {
		m.setStatus(levelWarn, "the proxy refused "+what+": "+m.line(reply.Text))
		return
	}
	if r, ok := m.tracker.Get(id); ok && reply.Action != "release" {
		if m.attach.mine == nil {
			m.attach.mine = map[*session.Request]bool{}
		}
		m.attach.mine[r] = true
	}
	m.setStatus(levelInfo, "the proxy took "+what)
}

// actBy names who acted on a request: "you" (this view's key), "a key"
// (another view's), "rule".
func (m *Model) actBy(r *session.Request, a *actMark) string {
	switch {
	case m.attach.mine[r]:
		return "you"
	case a.byKey:
		return "another view"
	}
	return "rule"
}

// actVerb is the action's name without its duration ("delay 30s" → delay).
func actVerb(action string) string {
	verb, _, _ := strings.Cut(action, " ")
	return verb
}

// actPart is a host request's mark in its row: what the proxy did to it
// (nil when nothing).
func (m *Model) actPart(r *session.Request, now time.Time) *look.Part {
	a, ok := m.attach.acts[r]
	if !ok {
		return nil
	}
	st := m.styles
	by := m.actBy(r, a)
	verb := actVerb(a.action)
	var v []string
	style := st.Flag
	switch a.phase {
	case phaseMatched, phaseActing:
		switch verb {
		case "cancel", "cancel-silent":
			v = []string{"⚑ cancel upstream by " + by + " (" + a.action + ")", "⚑ cancel by " + by}
		default:
			v = []string{"⚑ " + a.action + " by " + by + ", waiting for the response", "⚑ " + a.action + " by " + by, "⚑ " + verb}
		}
	case phaseHolding:
		held := look.Dur(now.Sub(a.heldAt))
		switch verb {
		case "delay":
			v = []string{"⚑ delayed by " + by + " · " + held + " (" + a.action + ")", "⚑ delayed by " + by + " · " + held, "⚑ delayed · " + held}
		case "race":
			v = []string{"⚑ held by " + by + " for the host's cancel · " + held, "⚑ held for the race · " + held, "⚑ held · " + held}
		default:
			v = []string{"⚑ held by " + by + " · " + held, "⚑ held · " + held}
		}
	case phaseReleased:
		style = st.Dim
		after := look.Dur(a.releasedAfter)
		if verb == "race" {
			v = []string{"released as the host's cancel came, held " + after, "released after " + after}
		} else {
			v = []string{"released after " + after + " (" + a.action + " by " + by + ")", "released after " + after}
		}
	case phaseDropped:
		v = []string{"⚑ response dropped by " + by + ": the host never got it", "⚑ dropped by " + by, "⚑ dropped"}
	case phaseCancel, phaseKept:
		host := "the host answered -32800"
		if verb == "cancel-silent" {
			host = "the host left waiting"
		}
		v = []string{"⚑ cancelled upstream by " + by + ", " + host, "⚑ cancelled upstream by " + by, "⚑ cancelled upstream"}
	case phasePassed:
		style = st.Dim
		v = []string{a.action + " by " + by + ": nothing to do, passed on", a.action + ": passed on"}
	case phaseFailed:
		style = st.Error
		v = []string{"✗ " + a.action + " by " + by + " failed", "✗ " + verb + " failed"}
	default:
		return nil
	}
	return &look.Part{Variants: v, Style: style, Prio: look.PrioFlag}
}

// attachTicking reports whether a row's held time is counting up.
func (m *Model) attachTicking() bool {
	for _, a := range m.attach.acts {
		if a.phase == phaseHolding {
			return true
		}
	}
	return false
}

// actFact is the detail's word on what the proxy did ("" for nothing).
func (m *Model) actFact(r *session.Request, now time.Time) string {
	p := m.actPart(r, now)
	if p == nil {
		return ""
	}
	return p.Variants[0]
}

// actSteps are what the proxy did to r, each at its time (the detail's
// timeline reaches them all: a held response is released after the
// request ended for the server), with the timeline's word for those it
// marks.
func (m *Model) actSteps(r *session.Request) []detail.Act {
	a, ok := m.attach.acts[r]
	if !ok {
		return nil
	}
	steps := make([]detail.Act, len(a.history))
	for i, s := range a.history {
		label := ""
		switch s.phase {
		case phaseActing, phaseMatched:
			label = "⚑ " + actVerb(a.action)
		case phaseHolding:
			label = "⚑ held"
		case phaseReleased:
			label = "released"
		case phaseDropped:
			label = "⚑ dropped"
		}
		steps[i] = detail.Act{At: s.at, Label: label}
	}
	return steps
}
