package composer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/internal/testkit/screentest"
	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// testEnv is an Env over a tracker connected to a server with caps.
func testEnv(caps string) screen.Env {
	tr := session.NewTracker(session.DefaultConfig())
	info := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ServerName: "probe", Capabilities: json.RawMessage(caps)}
	tr.Apply(event.Event{Kind: event.Connected, Info: &info, Time: t0})
	keys := keymap.Default()
	return screen.Env{Tracker: tr, Now: t0, Styles: look.NewStyles(true), Keys: &keys, Line: termsafe.Line, Block: termsafe.Line}
}

// flatten lists the actions of act, batches opened, commands left out.
func flatten(act screen.Action) []screen.Action {
	switch a := act.(type) {
	case nil, screen.Run:
		return nil
	case screen.Batch:
		var out []screen.Action
		for _, one := range a {
			out = append(out, flatten(one)...)
		}
		return out
	}
	return []screen.Action{act}
}

// The composer asks the root to send and to close; it sends nothing
// itself and leaves the root's state alone.
func TestUpdateReturnsSendAndClose(t *testing.T) {
	env := testEnv(`{"tools":{}}`)
	c, _ := New("info").Open(env)
	c, _ = c.Update(env, screentest.Press("left")) // raw: the form of a method
	if c.Kind() != KindRaw {
		t.Fatalf("← opened kind %v", c.Kind())
	}
	for _, r := range "ping" {
		c, _ = c.Update(env, screentest.Press(string(r)))
	}
	n := env.Tracker.Len()
	c, act := c.Update(env, screentest.Press("enter"))
	send, ok := act.(Send)
	if !ok {
		t.Fatalf("enter returned %#v, want a Send", act)
	}
	if send.Method != "ping" || send.Params != nil || send.LogLevel != "info" || send.Options.Timeout != session.DefaultConfig().DefaultTimeout {
		t.Fatalf("send %+v", send)
	}
	if env.Tracker.Len() != n {
		t.Fatal("the composer began a request itself")
	}
	c, _ = c.Open(env)
	if _, act = c.Update(env, screentest.Press("esc")); act != (screen.Close{}) {
		t.Fatalf("esc on the tool list returned %#v, want Close", act)
	}
}

// A list's pages are asked through the root: a Fetch, then Asked with the
// request the root sent, then Received with its answer, which asks for the
// next page with its cursor.
func TestFetchFollowsTheCursor(t *testing.T) {
	env := testEnv(`{"prompts":{}}`)
	c, _ := New("").Open(env)
	c, act := c.Update(env, screentest.Press("right"))
	c, act = c.Update(env, screentest.Press("right")) // prompts
	acts := flatten(act)
	if len(acts) != 1 {
		t.Fatalf("→ to prompts asked %#v", acts)
	}
	f, ok := acts[0].(Fetch)
	if !ok || f.Method != wire.MethodPromptsList || f.Params != nil {
		t.Fatalf("asked %#v", acts[0])
	}
	id := env.Tracker.Begin(f.Method, f.Params, session.RequestOptions{}, t0).ID
	c = c.Asked(f, id)
	page := `{"prompts":[{"name":"one"}],"nextCursor":"p2"}`
	raw := wire.ResultResponse(id, json.RawMessage(page))
	msg, _ := wire.Decode(raw)
	c, act = c.Received(env, &event.Event{Kind: event.Received, RequestID: id, Raw: raw, Msg: msg})
	next, ok := act.(Fetch)
	if !ok || next.Method != wire.MethodPromptsList || string(next.Params) != `{"cursor":"p2"}` {
		t.Fatalf("the next page was asked as %#v", act)
	}
	if s := c.View(env, 120, 30); !strings.Contains(s, "one") {
		t.Fatalf("the first page is not listed:\n%s", s)
	}
	// The same list is not asked again on this connection.
	c, _ = c.Update(env, screentest.Press("left"))
	if _, act = c.Update(env, screentest.Press("right")); len(flatten(act)) != 0 {
		t.Fatalf("asked again: %#v", flatten(act))
	}
}
