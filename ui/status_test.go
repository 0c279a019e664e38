package ui

import (
	"testing"
	"time"

	"inflight/keymap"
	"inflight/session"
	"inflight/wire"
)

func TestStatusLineExpiresAndFollowsItsRequest(t *testing.T) {
	var s statusLine
	s.set(levelInfo, "sent #3", t0)
	s.expire(t0.Add(statusLife - time.Millisecond))
	if s.text == "" {
		t.Fatal("the message went before its time")
	}
	s.expire(t0.Add(statusLife))
	if s.text != "" {
		t.Fatalf("the message outlived its time: %q", s.text)
	}

	three, four := wire.IntID(3), wire.IntID(4)
	about := func() statusLine {
		s := statusLine{}
		s.set(levelInfo, "#3: cancellation requested", t0)
		s.about = three
		return s
	}
	s = about()
	s.settled([]session.Change{{Kind: session.ChangeState, ID: four, To: session.StateCancelled}})
	s.settled([]session.Change{{Kind: session.ChangeState, ID: three, To: session.StateCancelRequested}})
	if s.text == "" {
		t.Fatal("another request's fate, or a state that is not one, cleared the message")
	}
	s.settled([]session.Change{{Kind: session.ChangeState, ID: three, To: session.StateCancelled}})
	if s.text != "" {
		t.Fatalf("#3 settled and the message stayed: %q", s.text)
	}

	for _, tc := range []struct {
		name                                   string
		mode                                   keymap.Mode
		selected, shown, nowSelected, nowShown wire.ID
		kept                                   bool
	}{
		{"list moved to another request", keymap.ModeList, three, wire.ID{}, four, wire.ID{}, false},
		{"list moved onto the request", keymap.ModeList, four, wire.ID{}, three, wire.ID{}, true},
		{"list did not move", keymap.ModeList, four, wire.ID{}, four, wire.ID{}, true},
		{"detail of another request", keymap.ModeDetail, three, three, three, four, false},
		{"back from the detail to the same selection", keymap.ModeList, four, three, four, wire.ID{}, true},
		{"another screen", keymap.ModeLog, three, wire.ID{}, four, wire.ID{}, true},
	} {
		s := about()
		s.followSelection(tc.mode, tc.selected, tc.shown, tc.nowSelected, tc.nowShown)
		if kept := s.text != ""; kept != tc.kept {
			t.Errorf("%s: kept %v, want %v", tc.name, kept, tc.kept)
		}
	}
}
