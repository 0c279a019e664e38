package ui

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// isActionKey reports whether msg is one of the keys that act on requests
// (enabled now or not): pressing one replaces the status line, so that it
// never keeps saying something about an earlier action.
func isActionKey(k *keymap.KeyMap, msg tea.KeyPressMsg) bool {
	for _, b := range []key.Binding{k.Cancel, k.CancelReason, k.CancelAll, k.StopWatching, k.Longer, k.Shorter,
		k.New, k.Reissue, k.Export, k.Reconnect, k.FilterList, k.ClearFinished} {
		if pressed(msg, b) {
			return true
		}
	}
	return false
}

// whyNoCancel says why c or C does nothing on the selected request r (ok:
// one is selected), for the status line.
func whyNoCancel(r *session.Request, ok bool, now time.Time) (statusLevel, string) {
	switch {
	case !ok:
		return levelInfo, "no request selected"
	case r.State == session.StateCancelRequested:
		text := fmt.Sprintf("#%s: cancellation already requested", r.ID)
		if left, ok := look.LateWindowLeft(r, now); ok {
			text += fmt.Sprintf("; watching for late traffic %s more — W stops watching now", look.Dur(left))
		}
		return levelInfo, text
	default:
		return levelWarn, fmt.Sprintf("#%s is %s: there is nothing to cancel", r.ID, look.StateName(r.State))
	}
}

// stopWatching is W on the selected request r (ok false: none): the
// tracker settles it now instead of at the end of its late window, and
// the notice says what it became or why it could not.
func stopWatching(t *session.Tracker, rec records, r *session.Request, ok bool, now time.Time) notice {
	if !ok {
		return notice{level: levelInfo, text: "no request selected"}
	}
	left, _ := look.LateWindowLeft(r, now)
	ch, err := t.StopWatching(r.ID, now)
	if err != nil {
		return notice{level: levelInfo, text: fmt.Sprintf("#%s: %s", r.ID, look.RefusalText(err, now))}
	}
	traceChanged(rec, t, []session.Change{ch})
	// The message goes when another request is on screen.
	return notice{level: levelInfo, text: fmt.Sprintf("#%s: stopped watching %s early: %s; later traffic is still flagged late", r.ID, look.Dur(left), look.StateName(ch.To)), about: r.ID}
}

// shownDetail is the request the detail view shows, zero when it is not
// on screen.
func (s *screens) shownDetail(f focus) wire.ID {
	if f.mode != keymap.ModeDetail {
		return wire.ID{}
	}
	return s.detail.ID()
}
