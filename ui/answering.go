package ui

import (
	"encoding/json"
	"fmt"
	"slices"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/answer"
	"inflight/ui/screen"
	"inflight/wire"
)

// answering is the answer form as the root holds it: the form (its zero
// value when none is open), the screen it was opened from, and the modern
// form as it was when its round was sent, until the send returns. Its
// methods are handed the mode on screen and return the mode to show: the
// mode is the root's.
type answering struct {
	form answer.Model
	from mode
	// sent is the modern form as its round went out, shown again if the
	// round could not be sent (roundFailed).
	sent *answer.Model
}

// show puts the form on screen over cur, the mode shown now, and returns
// the form's mode; closing the form goes back to cur.
func (a *answering) show(cur mode) mode {
	if cur != keymap.ModeAnswer {
		a.from = cur
	}
	return keymap.ModeAnswer
}

// close drops the form and returns the mode to show instead of cur: the
// screen the form was opened from when the form is on screen (the list,
// rather than the form again or the composer).
func (a *answering) close(cur mode) mode {
	if cur == keymap.ModeAnswer {
		cur = a.from
		if cur == keymap.ModeAnswer || cur == keymap.ModeComposer {
			cur = keymap.ModeList
		}
	}
	a.form = answer.Model{}
	return cur
}

// on reports whether the form answers the legacy question q.
func (a *answering) on(q *serverQuestion) bool { return a.form.Legacy() == q }

// closeOn closes the form if it answers one of qs (questions taken from
// the queue, to be declined), returning the mode to show instead of cur
// and whether it did.
func (a *answering) closeOn(qs []*serverQuestion, cur mode) (mode, bool) {
	if !slices.ContainsFunc(qs, a.on) {
		return cur, false
	}
	return a.close(cur), true
}

// openRound opens the form on r's round (roots answers roots/list without
// a prompt), over cur when one of its questions needs the user.
func (a *answering) openRound(env screen.Env, r *session.Request, roots json.RawMessage, cur mode) (mode, screen.Action) {
	asked, _ := r.Asked()
	if r.IsTask() {
		// A modern task's questions are its inputRequests, answered with
		// tasks/update.
		asked = r.TaskAsks()
	}
	var act screen.Action
	a.form, act = answer.OpenRound(env, r.ID, asked, roots)
	if a.form.Shown() {
		cur = a.show(cur)
	}
	return cur, act
}

// openQuestion opens the form on the legacy question q, over cur.
func (a *answering) openQuestion(env screen.Env, q *serverQuestion, cur mode) (mode, screen.Action) {
	var during wire.ID
	if s := q.record(env.Tracker); s != nil {
		during = s.During
	}
	var act screen.Action
	a.form, act = answer.OpenQuestion(env, answer.Question{ID: q.id, Method: q.method, Params: q.params, Ref: q}, during)
	return a.show(cur), act
}

// notSent opens q's form again, as the user typed it, saying why its
// answer could not be sent (enter sends it again), when cur is the list
// or a detail; elsewhere the form would pull the user away from what
// they are doing, and it reports false: the status line says so, and a
// answers it again.
func (a *answering) notSent(q *serverQuestion, why string, cur mode) (mode, bool) {
	if q.form == nil || (cur != keymap.ModeList && cur != keymap.ModeDetail) {
		return cur, false
	}
	a.form = q.form.Failed(why + " — enter sends it again, esc answers later")
	return a.show(cur), true
}

// sentAs keeps kept, the modern form as last shown (nil: none was), under
// id, the ID its round was sent with, until the send returns.
func (a *answering) sentAs(kept *answer.Model, id wire.ID) {
	if kept != nil {
		sent := kept.SentAs(id)
		a.sent = &sent
	}
}

// roundFailed shows the modern form again, as the user typed it, when
// the round it sent could not be sent (id is the round's): the request
// failed with it (session's verdict), so the form says so and sends
// nothing more; the status line already says why. It shows only over the
// list or a detail, and returns the mode to show instead of cur.
func (a *answering) roundFailed(id wire.ID, err error, cur mode) mode {
	f := a.sent
	if f == nil || f.ID() != id {
		return cur
	}
	a.sent = nil
	if cur != keymap.ModeList && cur != keymap.ModeDetail {
		return cur
	}
	a.form = f.Dead(fmt.Sprintf("this answer could not be sent: %v — the request failed with it (esc closes)", err))
	return a.show(cur)
}
