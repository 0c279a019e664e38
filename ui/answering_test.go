package ui

import (
	"errors"
	"testing"

	"inflight/keymap"
	"inflight/ui/answer"
	"inflight/wire"
)

// The form goes back to where it was opened from, never to itself or
// the composer, and closes only when it is on one of the questions taken.
func TestAnsweringGoesBackWhereItCameFrom(t *testing.T) {
	var a answering
	if got := a.show(keymap.ModeDetail); got != keymap.ModeAnswer {
		t.Fatalf("show = %v", got)
	}
	a.show(keymap.ModeAnswer) // shown again over itself: still back to the detail
	if got := a.close(keymap.ModeAnswer); got != keymap.ModeDetail {
		t.Errorf("close = %v, want the detail", got)
	}
	a.show(keymap.ModeComposer)
	if got := a.close(keymap.ModeAnswer); got != keymap.ModeList {
		t.Errorf("close over the composer = %v, want the list", got)
	}
	if got := a.close(keymap.ModeLog); got != keymap.ModeLog {
		t.Errorf("close while not shown = %v, want the mode unchanged", got)
	}
	q := &serverQuestion{id: wire.IntID(3), method: wire.MethodElicitationCreate}
	if _, closed := a.closeOn([]*serverQuestion{q}, keymap.ModeList); closed {
		t.Error("closeOn closed a form that answers none of them")
	}
}

// A round that could not be sent shows its form again, dead, over the
// list, and only for the round it sent.
func TestAnsweringShowsAFailedRoundAgain(t *testing.T) {
	var a answering
	kept := answer.Model{}
	a.sentAs(&kept, wire.IntID(9))
	if got := a.roundFailed(wire.IntID(8), errors.New("reset"), keymap.ModeList); got != keymap.ModeList || a.sent == nil {
		t.Fatalf("another round's failure: mode %v, kept %v", got, a.sent)
	}
	if got := a.roundFailed(wire.IntID(9), errors.New("reset"), keymap.ModeList); got != keymap.ModeAnswer || a.sent != nil || a.form.Err() == "" {
		t.Fatalf("its failure: mode %v, kept %v, form says %q", got, a.sent, a.form.Err())
	}
}
