package attach

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// key answers the keys a view on a proxy answers differently: it sends
// nothing of its own, so the keys that would are refused with why, and
// quitting only leaves (the proxy and the host's requests go on).
func (m Model) key(env screen.Env, in Input, msg tea.KeyPressMsg) (Model, screen.Action) {
	k := env.Keys
	if key.Matches(msg, k.Interrupt) || (!in.Typing && in.Mode != keymap.ModeHelp && pressed(msg, k.Quit)) {
		return m, Leave{}
	}
	if in.Typing {
		return m, screen.Unused{}
	}
	switch in.Mode {
	case keymap.ModeList, keymap.ModeDetail:
		if m, act, ok := m.actKey(env, in, msg); ok {
			return m, act
		}
	case keymap.ModeLog:
	default:
		return m, screen.Unused{}
	}
	if why := m.refusal(env, in, msg); why != "" {
		return m, info(why)
	}
	return m, screen.Unused{}
}

// refusal says why a key that would send or cancel does nothing here (""
// for the other keys).
func (m Model) refusal(env screen.Env, in Input, msg tea.KeyPressMsg) string {
	k := env.Keys
	switch {
	case pressed(msg, k.Cancel), pressed(msg, k.CancelReason):
		switch r := in.Selected; {
		case r != nil && r.ByHost && m.proxy.Acts && m.ended:
			return fmt.Sprintf("#%s is the host's request, and the proxy ended: nothing acts on it now", env.Line(r.ID.String()))
		case r != nil && r.ByHost && m.proxy.Acts && (!r.IsActive() || r.State == session.StateCancelRequested):
			return fmt.Sprintf("#%s is the host's request, not in flight (%s): there is nothing to cancel", env.Line(r.ID.String()), look.StateName(r.State))
		case r != nil && r.ByHost && m.proxy.Acts:
			return fmt.Sprintf("#%s is the host's to cancel: z cancels it upstream (Z: the host keeps waiting)", env.Line(r.ID.String()))
		case r != nil && r.ByHost:
			return fmt.Sprintf("#%s is the host's request: this view only watches it (the proxy takes no commands)", env.Line(r.ID.String()))
		}
		return "this view only watches the proxy: it cannot cancel"
	case pressed(msg, k.CancelAll), pressed(msg, k.StopWatching), pressed(msg, k.Longer), pressed(msg, k.Shorter):
		return "this view only watches the proxy: the host's requests are the host's to cancel and time out"
	case pressed(msg, k.New), pressed(msg, k.Reissue), pressed(msg, k.Edit):
		return "this view only watches the proxy: it sends no requests"
	case pressed(msg, k.Reconnect):
		if m.ended {
			return "the proxy ended: run inflight attach again once it runs"
		}
		return "this view is attached to the proxy: there is nothing to reconnect"
	}
	return ""
}

// actKey answers the keys that act on the selected host request through
// the proxy (ok false: msg is none of them).
func (m Model) actKey(env screen.Env, in Input, msg tea.KeyPressMsg) (Model, screen.Action, bool) {
	k := env.Keys
	acts := []struct {
		b   key.Binding
		act string
	}{{k.Delay, "delay"}, {k.Hold, "hold"}, {k.Release, "release"}, {k.Drop, "drop"},
		{k.CancelUp, "cancel"}, {k.CancelSilent, "cancel-silent"}, {k.Race, "race"}}
	act := ""
	for _, a := range acts {
		if pressed(msg, a.b) {
			act = a.act
		}
	}
	if act == "" {
		return m, nil, false
	}
	r := in.Selected
	switch {
	case !m.proxy.Acts:
		return m, info("this proxy takes no commands (read-only, or it cannot act): the view only watches"), true
	case m.ended:
		return m, info("the proxy ended: there is nothing left to act on"), true
	case r == nil:
		return m, info("select one of the host's requests first"), true
	}
	if why := cannotAct(env, r, in.Held, in.Armed, act); why != "" {
		return m, info(why), true
	}
	if act == "delay" {
		m.delay = openDelay(env, r)
		return m, nil, true
	}
	if act == "release" && in.Armed && !in.Held {
		return m, screen.Batch{info("asked the proxy to take back what was armed on #" + env.Line(r.ID.String()) + "…"), Act{Action: act, ID: r.ID}}, true
	}
	return m, ask(env, Act{Action: act, ID: r.ID}), true
}

// cannotAct says why act cannot apply to r ("" when it can): only the
// host's requests in flight, or one whose response the proxy holds
// (held); a release also takes back what a key armed (armed).
func cannotAct(env screen.Env, r *session.Request, held, armed bool, act string) string {
	id := "#" + env.Line(r.ID.String())
	if !r.ByHost {
		return id + " is not the host's request: only the host's requests can be acted on"
	}
	switch {
	case act == "release" && armed && !held:
		return ""
	case act == "release" && !held:
		return "nothing of " + id + " is held: there is nothing to release"
	case held && (act == "cancel" || act == "cancel-silent"):
		return "the server answered " + id + " already (the proxy holds its response): release or drop it"
	case held:
		return ""
	case r.State == session.StateCancelRequested && r.Cancel != nil && r.Cancel.Cause == session.CauseHost:
		return "the host cancelled " + id + " already: it is not in flight"
	case !r.IsActive() || r.State == session.StateCancelRequested:
		return id + " is not in flight (" + look.StateName(r.State) + "): no key acts on it now"
	}
	return ""
}

// ask is a, said on the status line as it goes; the proxy's reply comes
// in its stream.
func ask(env screen.Env, a Act) screen.Action {
	what := a.Action
	if a.After > 0 {
		what += " " + a.After.String()
	}
	return screen.Batch{info("asked the proxy: " + what + " on #" + env.Line(a.ID.String()) + "…"), a}
}

// info is a plain word on the status line.
func info(text string) screen.Status { return screen.Status{Level: screen.Info, Text: text} }

// pressed reports whether msg is one of b's keys, enabled or not: for
// saying why a key that does nothing here does nothing.
func pressed(msg tea.KeyPressMsg, b key.Binding) bool {
	for _, k := range b.Keys() {
		if msg.String() == k {
			return true
		}
	}
	return false
}
