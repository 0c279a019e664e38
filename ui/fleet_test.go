package ui

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"inflight/session"
	"inflight/wire"
)

// The TUI over three servers of a config: the demo over stdio twice under
// different names, and one that cannot start. Both demos' requests are in
// the one list (their IDs collide: each has its #1 and #2), the failed one
// is said in the header and on the status line, and a key on a row acts on
// that row's server only.
func TestFleetOverThreeServers(t *testing.T) {
	alphaDemo, betaDemo := &demoDialer{}, &demoDialer{}
	defer alphaDemo.close()
	defer betaDemo.close()
	slow := []Call{{Method: wire.MethodToolsCall, Params: json.RawMessage(`{"name":"slow","arguments":{"seconds":30,"steps":30}}`)}}
	member := func(name string, dial Dialer) Member {
		return Member{Name: name, Options: Options{Target: name, Transport: "stdio", Dial: dial, Tracker: session.DefaultConfig(), Calls: slow, Dark: true}}
	}
	f, err := NewFleet([]Member{
		member("alpha", alphaDemo.dial),
		member("beta", betaDemo.dial),
		member("broken", func() (Client, error) { return nil, errors.New("start server: no such file") }),
	}, FleetOptions{Dark: true})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, f, teatest.WithInitialTermSize(120, 30))
	scr := newScreen(t, tm, 120, 30)
	scr.waitFor(t, "broken ✗ could not connect", 5*time.Second)
	scr.waitFor(t, "alpha ● 2 (1 in flight)", 5*time.Second)
	scr.waitFor(t, "beta ● 2 (1 in flight)", 5*time.Second)
	scr.waitFor(t, "broken: start server: no such file", 2*time.Second)
	rows := regexp.MustCompile(`(?m)^..(alpha|beta)\s+(\d)\s+(tools/list|slow)\b`)
	if got := rows.FindAllString(scr.vt.String(), -1); len(got) != 4 {
		t.Fatalf("want four rows, #1 and #2 of each server; the screen shows:\n%s", scr.vt.String())
	}

	// The newest row is selected; c cancels it on its own server. Which
	// server's row that is is read off the screen (the program owns the
	// model while it runs).
	selected := regexp.MustCompile(`(?m)^▌\s*(alpha|beta)\s+2\s`).FindStringSubmatch(scr.vt.String())
	if selected == nil {
		t.Fatalf("no #2 row selected:\n%s", scr.vt.String())
	}
	cancelled, other := selected[1], map[string]string{"alpha": "beta", "beta": "alpha"}[selected[1]]
	tm.Send(keyMsg("c"))
	scr.waitFor(t, cancelled+": #2: cancellation requested", 3*time.Second)
	scr.waitFor(t, other+" ● 2 (1 in flight)", 2*time.Second)

	// / searches: only the other server's rows stay.
	tm.Send(keyMsg("/"))
	for _, r := range other[:3] {
		tm.Send(keyMsg(string(r)))
	}
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "· /"+other[:3], 2*time.Second)
	if got := rows.FindAllString(scr.vt.String(), -1); len(got) != 2 || strings.Contains(strings.Join(got, ""), cancelled) {
		t.Errorf("the search kept %q", got)
	}

	// enter opens the selected row's detail on its server; esc comes back.
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "tools/call slow", 2*time.Second)
	scr.waitFor(t, "inflight · "+other+" · stdio", 2*time.Second)
	tm.Send(keyMsg("esc"))
	scr.waitFor(t, "3 servers ·", 2*time.Second)

	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Fleet)
	// c cancelled the selected server's #2, and that one only: the other's
	// was cancelled later, by q.
	cancels := map[string]*session.Cancel{}
	for _, mb := range final.members[:2] {
		if r, ok := mb.m.tracker.Get(wire.IntID(2)); ok {
			cancels[mb.name] = r.Cancel
		}
	}
	if c, o := cancels[cancelled], cancels[other]; c == nil || o == nil || !c.At.Before(o.At) {
		t.Errorf("%s's #2 cancel %+v, %s's %+v: want c's on %s first, then q's", cancelled, c, other, o, cancelled)
	}
	for _, mb := range final.members[:2] {
		// q cancels what is in flight on every server before it quits
		// (the one cancelled already keeps its own cancel).
		if r, ok := mb.m.tracker.Get(wire.IntID(2)); !ok || r.Cancel == nil {
			t.Errorf("%s's slow was not cancelled by q: %+v", mb.name, r)
		}
	}
	if final.Interrupted() {
		t.Error("q is not an interrupt")
	}
}

// A proxy started again under its name joins as a server of its own,
// told apart from the one that ended.
func TestFleetNamesApart(t *testing.T) {
	dial := func() (Client, error) { return newFake(), nil }
	f, err := NewFleet([]Member{{Name: "demo", Options: Options{Dial: dial}}, {Name: "demo", Options: Options{Dial: dial}}, {Name: "demo", Options: Options{Dial: dial}}}, FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mb := range f.members {
		names = append(names, mb.name)
	}
	if strings.Join(names, ",") != "demo,demo·2,demo·3" {
		t.Errorf("names %q", names)
	}
}
