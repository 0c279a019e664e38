package proxy

import (
	"errors"
	"fmt"
	"time"

	"inflight/wire"
)

// This file makes things happen on a request the user picks while it is in
// flight (a key in `inflight attach`, a command on the attach socket:
// act_command.go), where a --rule acts on the requests it matches from
// their start. The action is a Rule like a --rule's, applied from now on;
// everything it does is recorded as an injected line, as a rule's is.

// actor is what the attach socket's commands call: the stdio injector, and
// the HTTP proxy's once it has one (broadcast.takeCommands wires either).
type actor interface {
	// actOn applies r, from now on, to the host's request id while it is
	// still in flight (the host sent it, the host has no answer yet):
	// delay/hold/drop/race act on its response when it comes (or on it if
	// held already); cancel/cancel-silent cancel upstream r.After from
	// now. A clear error otherwise (no such request in flight, answered
	// already, a rule acts on it). Recorded as an injected line like a
	// --rule's; r.Text says where it came from.
	actOn(id wire.ID, r *Rule, at time.Time) error
	// releaseOne passes on id's held response now, or takes back a hold,
	// delay, drop or race a command armed on id whose response has not
	// come yet (tookBack true: its response will pass on untouched); an
	// error when nothing of id is held or armed by a command.
	releaseOne(id wire.ID, at time.Time) (tookBack bool, err error)
	// releaseAll passes on every response held now.
	releaseAll()
}

var _ actor = (*injector)(nil)

// errEnding refuses a command once the proxy is ending.
var errEnding = errors.New("the proxy is ending: it acts on nothing more")

// actOn is actor.actOn for stdio.
func (in *injector) actOn(id wire.ID, r *Rule, at time.Time) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return errEnding
	}
	if mk := in.marks[id]; mk != nil {
		if mk.held != nil {
			return in.reactLocked(mk, r, at)
		}
		if mk.cancelled {
			return fmt.Errorf("%s is not in flight: inflight cancelled it upstream already (%s, %s)", mk.name(), mk.rule.Does(), mk.rule.Text)
		}
		if mk.byCommand {
			return fmt.Errorf("%s is acted on already (%s, %s): wait for its response, or release it once it is held", mk.name(), mk.rule.Does(), mk.rule.Text)
		}
		return fmt.Errorf("rule %q acts on %s already (%s)", mk.rule.Text, mk.name(), mk.rule.Does())
	}
	f, ok := in.flights[id]
	if !ok {
		return fmt.Errorf("no request of the host's with ID %s is in flight (answered already, cancelled, or never seen)", id)
	}
	if r.Action.cancels() && f.method == wire.MethodInitialize {
		return errors.New("initialize must never be cancelled")
	}
	if len(in.marks) >= maxMarks {
		return fmt.Errorf("the proxy already acts on %d requests still unanswered", maxMarks)
	}
	mk := &marked{id: id, rule: r, method: f.method, target: f.target, at: f.at, byCommand: true}
	in.marks[id] = mk
	in.synced()
	in.q.pushControl(note(mk, at, false, PhaseActing, "%s", actingText(r, mk.name(), at.Sub(f.at))))
	if r.Action.cancels() {
		in.wg.Add(1)
		mk.timer = time.AfterFunc(r.After, func() {
			defer in.wg.Done()
			in.cancel(mk)
		})
	}
	return nil
}

// actingText is the acting line of r, taken from now on a request (name)
// in flight since: "hold on tools/call slow (id 7) (a key in inflight
// attach), 5ms after it was sent: …". The view tells a key's doing from a
// rule's by r.Text in brackets (ui/attach_act.go); stdio and HTTP say it
// alike.
func actingText(r *Rule, name string, since time.Duration) string {
	what := map[Action]string{
		ActDelay:        "its response will be held for " + r.After.String() + " when it comes",
		ActHold:         "its response will be held until released when it comes",
		ActDrop:         "its response will be dropped when it comes",
		ActRace:         "its response will be held until the host cancels it",
		ActCancel:       "cancelling it upstream " + inWords(r.After) + fmt.Sprintf(", answering the host with error %d", CodeCancelledByProxy),
		ActCancelSilent: "cancelling it upstream " + inWords(r.After) + ", leaving the host waiting",
	}[r.Action]
	return fmt.Sprintf("%s on %s (%s), %s after it was sent: %s", r.Does(), name, r.Text, since.Round(time.Millisecond), what)
}

func inWords(d time.Duration) string {
	if d <= 0 {
		return "now"
	}
	return "in " + d.String()
}

// reactLocked applies a new action to a response held already (by a rule
// or an earlier command).
func (in *injector) reactLocked(mk *marked, r *Rule, at time.Time) error {
	if r.Action.cancels() {
		return fmt.Errorf("the server answered %s already (its response is held, %s): release or drop it", mk.name(), mk.rule.Does())
	}
	if r.Action == ActRace && mk.hostCancelled {
		return fmt.Errorf("the host cancelled %s already: nothing to race; release or drop its response", mk.name())
	}
	if mk.timer != nil {
		if !mk.timer.Stop() {
			return fmt.Errorf("the response to %s is being released now", mk.name())
		}
		in.wg.Done()
		mk.timer = nil
	}
	held := at.Sub(mk.heldAt).Round(time.Millisecond)
	was := mk.rule.Does()
	mk.rule, mk.byCommand = r, true
	switch r.Action {
	case ActDrop:
		mk.held = nil
		delete(in.marks, mk.id)
		in.synced()
		in.q.pushControl(note(mk, at, false, PhaseDropped, "dropped the held response to %s (%s), held %s (%s): the host never gets it", mk.name(), r.Text, held, was))
	case ActHold:
		in.q.pushControl(note(mk, at, false, PhaseHolding, "holding the response to %s until released (%s), held %s so far (%s)", mk.name(), r.Text, held, was))
	case ActDelay:
		in.armDelay(mk)
		in.q.pushControl(note(mk, at, false, PhaseHolding, "holding the response to %s for %s more (%s), held %s so far (%s)", mk.name(), r.After, r.Text, held, was))
	case ActRace:
		in.q.pushControl(note(mk, at, false, PhaseHolding, "holding the response to %s until the host cancels it (%s), held %s so far (%s)", mk.name(), r.Text, held, was))
	}
	return nil
}

// releaseOne is actor.releaseOne for stdio.
func (in *injector) releaseOne(id wire.ID, at time.Time) (bool, error) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return false, errEnding
	}
	mk := in.marks[id]
	switch {
	case mk == nil:
		in.mu.Unlock()
		if _, ok := in.flights[id]; ok {
			return false, fmt.Errorf("nothing of request %s is held: nothing acts on it", id)
		}
		return false, fmt.Errorf("nothing of request %s is held (no request of the host's with that ID is in flight)", id)
	case mk.held == nil && mk.byCommand && !mk.cancelled && !mk.rule.Action.cancels():
		// Armed by a command, its response not come yet: taken back, the
		// response passes on as if nothing had been asked.
		delete(in.marks, id)
		in.synced()
		in.q.pushControl(note(mk, at, false, PhaseTakenBack, "took back the %s on %s (%s) before its response came: its response will pass on untouched", mk.rule.Does(), mk.name(), CommandSource))
		in.mu.Unlock()
		return true, nil
	case mk.held == nil:
		in.mu.Unlock()
		return false, fmt.Errorf("nothing of %s is held yet: %s waits for its response", mk.name(), mk.rule.Does())
	}
	if mk.timer != nil {
		if !mk.timer.Stop() {
			in.mu.Unlock()
			return false, fmt.Errorf("the response to %s is being released now", mk.name())
		}
		in.wg.Done()
		mk.timer = nil
	}
	held := at.Sub(mk.heldAt).Round(time.Millisecond)
	// Written from a goroutine of its own: this is a viewer's command
	// goroutine, which the proxy's end waits for; a host that stopped
	// reading must block only what close waits for a bounded time.
	in.passLater(mk, in.takeLocked(mk), "on request, held "+held.String())
	in.mu.Unlock()
	return false, nil
}
