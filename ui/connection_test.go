package ui

import (
	"errors"
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/event"
)

func TestConnectionObserve(t *testing.T) {
	unreachable := fmt.Errorf("post: %w", client.ErrUnreachable)
	for _, tc := range []struct {
		name      string
		ev        event.Event
		quitting  bool
		wantLost  bool
		wantState connState
	}{
		{"closed transport", event.Event{Kind: event.TransportClosed, Err: errors.New("EOF")}, false, false, connLost},
		{"closed while quitting", event.Event{Kind: event.TransportClosed}, true, false, connUp},
		{"unreachable", event.Event{Kind: event.RequestFailed, Err: unreachable}, false, true, connLost},
		{"unreachable, housekeeping", event.Event{Kind: event.RequestFailed, Err: unreachable, Internal: true}, false, false, connUp},
		{"unreachable while quitting", event.Event{Kind: event.RequestFailed, Err: unreachable}, true, false, connUp},
		{"another failure", event.Event{Kind: event.RequestFailed, Err: errors.New("refused")}, false, false, connUp},
	} {
		c := connection{state: connUp}
		lost := c.observe(&tc.ev, tc.quitting)
		if lost != tc.wantLost || c.state != tc.wantState {
			t.Errorf("%s: lost %v state %v, want %v %v", tc.name, lost, c.state, tc.wantLost, tc.wantState)
		}
		if c.state == connLost && !errors.Is(c.err, tc.ev.Err) {
			t.Errorf("%s: the connection's error is %v, want the event's", tc.name, c.err)
		}
	}
}

func TestConnectionFirstRequestsWaitForTheHandshake(t *testing.T) {
	c := newConnection(nil)
	c.wait = func(<-chan event.Event, int) tea.Cmd { return nil }
	c.begin(newFake())
	up, startNow := c.connected(connectedMsg{gen: c.gen})
	if !up || startNow || !c.startPending || c.startDue() {
		t.Fatalf("connected before the handshake's event: up %v, start now %v, due %v", up, startNow, c.startDue())
	}
	c.observe(&event.Event{Kind: event.Connected}, false)
	if !c.startDue() {
		t.Fatal("the handshake's event was applied and the first requests still wait")
	}
	c.started()
	if c.startDue() {
		t.Error("the first requests are due again after they started")
	}
	// A reply of the connection before R is ignored.
	old := c.gen
	c.begin(newFake())
	if up, _ := c.connected(connectedMsg{gen: old}); up || c.state != connConnecting {
		t.Errorf("an older connection's reply counted: up %v, state %v", up, c.state)
	}
	if up, startNow := c.connected(connectedMsg{gen: c.gen}); !up || startNow {
		t.Errorf("after R the tracker's earlier handshake let the first requests out (up %v, start now %v)", up, startNow)
	}
}
