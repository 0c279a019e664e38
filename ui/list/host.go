package list

import (
	"fmt"

	"charm.land/lipgloss/v2"
	"slices"
	"strings"
	"time"

	"inflight/session"
	"inflight/ui/look"
)

// A host's request (inflight attach: a view on a proxy) is marked in its
// row: ⇄ before its label, and in its last column the flags it earns by
// the host's conduct and what the proxy did to it.

// HostAct is what a proxy said it did to one of the host's requests (its
// injected lines), which the tracker does not hold: the root keeps it,
// and the list reads it through Facts.
type HostAct struct {
	// Action is the proxy's word for what it did: "hold", "delay 30s",
	// "cancel", …
	Action string
	// Phase is where the action stands, in the proxy's words (Phase…).
	Phase string
	// Mine: this view's key asked for it; ByKey: a key asked for it (this
	// view's or another's), not a --rule.
	Mine, ByKey bool
	// HeldAt is when the response was held (zero if never);
	// ReleasedAfter how long it was held.
	HeldAt        time.Time
	ReleasedAfter time.Duration
	// Ended: the request ended (or the host cancelled it) while the
	// action still waited for its response: it never took. HostCancelled:
	// the host's cancel ended it.
	Ended, HostCancelled bool
}

// The phases of an action, as the proxy's injected lines name them (their
// "code").
const (
	PhaseMatched  = "matched"
	PhaseActing   = "acting"
	PhaseHolding  = "holding"
	PhaseReleased = "released"
	PhaseDropped  = "dropped"
	PhaseCancel   = "cancelled"
	PhaseKept     = "kept"
	PhasePassed   = "passed"
	PhaseFailed   = "failed"
	// PhaseTakenBack: a key's action, armed before the response came, was
	// taken back (released): the response passes on untouched.
	PhaseTakenBack = "taken-back"
)

// hostMark is the REQUEST column's mark of a host's request.
func hostMark(r *session.Request) string {
	if r.ByHost {
		return "⇄ "
	}
	return ""
}

// hostParts are the flags a host's request earns by the host's conduct,
// one for each kind of finding of the host on it; found counts those
// findings, which are the host's and not among the server's violations
// the row counts.
func (p painter) hostParts(r *session.Request) (parts []look.Part, found int) {
	if !r.ByHost {
		return nil, 0
	}
	if a, ok := p.facts.HostAct(r); ok {
		if part, ok := HostActPart(p.st, a, p.now); ok {
			parts = append(parts, part)
		}
	}
	if r.Violations == 0 {
		return parts, 0
	}
	var said []string
	for _, v := range p.tracker.Violations().ForRequest(r.ID) {
		if !session.IsHostFinding(v.Code) {
			continue
		}
		found++
		if slices.Contains(said, v.Code) {
			continue
		}
		said = append(said, v.Code)
		parts = append(parts, look.Part{Variants: hostFindingVariants(v.Code), Style: p.st.Flag, Prio: look.PrioFlag})
	}
	return parts, found
}

// hostFindingVariants say a finding of the host in its row, widest first
// (the detail has its words).
func hostFindingVariants(code string) []string {
	switch code {
	case session.ViolationHostAbandoned:
		return []string{"⚑ host gave up without cancelling", "⚑ host gave up"}
	case session.ViolationHostCancelledInitialize:
		return []string{"⚑ host cancelled initialize", "⚑ cancelled initialize"}
	case session.ViolationHostCancelledWhileProgressing:
		return []string{"⚑ host cancelled while progress flowed", "⚑ cancelled mid-progress"}
	case session.ViolationHostTimeoutDuringQuestion:
		return []string{"⚑ host gave up while the server's question waited", "⚑ gave up mid-question"}
	case session.ViolationHostCancelledAnswered:
		return []string{"⚑ host cancelled it after its answer", "⚑ cancelled after answer"}
	case session.ViolationHostResumedWithoutLastEventID:
		return []string{"⚑ host reopened the stream without Last-Event-ID", "⚑ no Last-Event-ID"}
	case session.ViolationHostNoResume:
		return []string{"⚑ host did not resume the stream", "⚑ not resumed"}
	case session.ViolationHostClosedStreamLegacy:
		return []string{"⚑ host closed the stream: no cancel on legacy HTTP", "⚑ closed, no cancel"}
	case session.ViolationHostDuplicateID:
		return []string{"⚑ host reused its ID", "⚑ ID reused"}
	}
	return []string{"⚑ " + code, "⚑ host"}
}

// hostCancelVariants say a host's cancel in the list, widest first.
func hostCancelVariants(cn *session.Cancel, ago string) []string {
	return []string{"host sent " + look.SignalText(cn.Signal) + " " + ago, "host cancelled " + ago, "by host " + ago}
}

// hostActiveCell is the PROGRESS / OUTCOME cell of a host's request still
// pending or running that the host gave up on: the flag, then what the
// cell would say without it.
func (p painter) hostActiveCell(r *session.Request, w int, now time.Time) (string, bool) {
	if r.State != session.StatePending && r.State != session.StateRunning {
		return "", false
	}
	parts, _ := p.hostParts(r)
	if len(parts) == 0 {
		return "", false
	}
	if r.State == session.StateRunning {
		// The progress keeps its bar and count beside the flags: what
		// the proxy does to the request does not stop the server's work.
		count := fmt.Sprintf("%d progress", r.Progress.Count)
		const room = 28
		if w >= 2*room {
			head := look.BuildCell(parts, w-room-len(look.CellSep))
			rest := w - lipgloss.Width(head) - 2*len(look.CellSep) - len(count)
			return head + look.CellSep + p.progressCell(r, rest, now) + look.CellSep + p.st.Dim.Render(count), true
		}
		parts = append(parts, look.Part{Variants: []string{count}, Style: p.st.Dim, Prio: look.PrioWatch})
		return look.BuildCell(parts, w), true
	}
	parts = append(parts, look.Part{Variants: []string{"waiting for the server…"}, Style: p.st.Dim, Prio: look.PrioRepeats})
	return look.BuildCell(parts, w), true
}

// actBy names who acted on a request: "you" (this view's key), "another
// view" (another view's key), "rule".
func actBy(a HostAct) string {
	switch {
	case a.Mine:
		return "you"
	case a.ByKey:
		return "another view"
	}
	return "rule"
}

// ActVerb is the action's name without its duration ("delay 30s" → delay).
func ActVerb(action string) string {
	verb, _, _ := strings.Cut(action, " ")
	return verb
}

// HostActPart is a host request's mark in its row, what the proxy did to
// it at now (ok false for a phase it does not mark). The detail's facts
// say it in its widest words.
func HostActPart(st look.Styles, a HostAct, now time.Time) (part look.Part, ok bool) {
	by := actBy(a)
	verb := ActVerb(a.Action)
	m := look.ActMark + " "
	var v []string
	style := st.Flag
	switch a.Phase {
	case PhaseMatched, PhaseActing:
		switch {
		case a.Ended:
			style = st.Dim
			first := "the request ended first"
			if a.HostCancelled {
				first = "the host cancelled first"
			}
			v = []string{"the " + verb + " never took: " + first, verb + " never took"}
		case verb == "cancel", verb == "cancel-silent":
			v = []string{m + "cancel upstream armed by " + by + " (" + a.Action + ")", m + "cancel armed by " + by}
		default:
			v = []string{m + a.Action + " armed by " + by + ", waiting for the response", m + a.Action + " armed by " + by, m + verb + " armed"}
		}
	case PhaseHolding:
		held := look.Dur(now.Sub(a.HeldAt))
		switch verb {
		case "delay":
			v = []string{m + "delayed by " + by + " · " + held + " (" + a.Action + ")", m + "delayed by " + by + " · " + held, m + "delayed · " + held}
		case "race":
			v = []string{m + "held by " + by + " for the host's cancel · " + held, m + "held for the race · " + held, m + "held · " + held}
		default:
			v = []string{m + "held by " + by + " · " + held, m + "held · " + held}
		}
	case PhaseTakenBack:
		style = st.Dim
		v = []string{verb + " taken back by " + by + " before the response came", verb + " taken back"}
	case PhaseReleased:
		style = st.Dim
		after := look.Dur(a.ReleasedAfter)
		if verb == "race" {
			v = []string{"released as the host's cancel came, held " + after, "released after " + after}
		} else {
			v = []string{"released after " + after + " (" + a.Action + " by " + by + ")", "released after " + after}
		}
	case PhaseDropped:
		v = []string{m + "response dropped by " + by + ": the host never got it", m + "dropped by " + by, m + "dropped"}
	case PhaseCancel, PhaseKept:
		host := "the host answered -32800"
		if verb == "cancel-silent" {
			host = "the host left waiting"
		}
		v = []string{m + "cancelled upstream by " + by + ", " + host, m + "cancelled upstream by " + by, m + "cancelled upstream"}
	case PhasePassed:
		style = st.Dim
		v = []string{a.Action + " by " + by + ": nothing to do, passed on", a.Action + ": passed on"}
	case PhaseFailed:
		style = st.Error
		v = []string{"✗ " + a.Action + " by " + by + " failed", "✗ " + verb + " failed"}
	default:
		return look.Part{}, false
	}
	return look.Part{Variants: v, Style: style, Prio: look.PrioFlag}, true
}
