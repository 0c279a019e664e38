package composer

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/internal/testkit/screentest"
	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// legacyEnv is an Env over a tracker connected to a legacy server.
func legacyEnv() screen.Env {
	tr := session.NewTracker(session.DefaultConfig())
	info := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraLegacy, ServerName: "probe", Capabilities: json.RawMessage(`{"tools":{}}`)}
	tr.Apply(event.Event{Kind: event.Connected, Info: &info, Time: t0})
	keys := keymap.Default()
	return screen.Env{Tracker: tr, Now: t0, Styles: look.NewStyles(true), Keys: &keys, Line: termsafe.Line, Block: termsafe.Line}
}

// withTools is c with the tools of a tools/list answer (result).
func withTools(t *testing.T, env screen.Env, c Model, result string) Model {
	t.Helper()
	id := env.Tracker.Begin(wire.MethodToolsList, nil, session.RequestOptions{}, t0).ID
	c = c.ToolsAsked(id)
	raw := wire.ResultResponse(id, json.RawMessage(result))
	msg, _ := wire.Decode(raw)
	c, _ = c.Received(env, &event.Event{Kind: event.Received, RequestID: id, Raw: raw, Msg: msg})
	if len(c.Tools()) == 0 {
		t.Fatalf("no tools read from %s", result)
	}
	return c
}

// typeKeys types text into the composer, one key at a time.
func typeKeys(env screen.Env, c Model, text string) Model {
	for _, r := range text {
		c, _ = c.Update(env, screentest.Press(string(r)))
	}
	return c
}

// sentTask reports whether the Send in act asks for a task.
func sentTask(t *testing.T, act screen.Action) bool {
	t.Helper()
	var send *Send
	for _, a := range flatten(act) {
		if s, ok := a.(Send); ok {
			send = &s
		}
	}
	if send == nil {
		t.Fatalf("no Send in %#v", act)
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(send.Params, &p); err != nil {
		t.Fatal(err)
	}
	_, task := p["task"]
	return task
}

// ctrl+t is for the form it was pressed in: the next composition starts
// from its tool's own taskSupport, whichever tool it is.
func TestAsTaskDoesNotCarryOver(t *testing.T) {
	env := legacyEnv()
	c, _ := New("").Open(env)
	c = withTools(t, env, c, `{"tools":[
		{"name":"alpha","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
		{"name":"beta","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`)
	ctrlT := tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}

	c = typeKeys(env, c, "alpha")
	c, _ = c.Update(env, screentest.Press("enter"))
	c, _ = c.Update(env, ctrlT)
	if v := c.View(env, 120, 30); !strings.Contains(v, "runs as a task · ctrl+t") {
		t.Fatalf("ctrl+t did not make alpha a task:\n%s", v)
	}
	c, act := c.Update(env, screentest.Press("enter"))
	if !sentTask(t, act) {
		t.Fatal("alpha, asked as a task, went as an ordinary call")
	}

	for _, name := range []string{"beta", "alpha"} {
		c, _ = c.Open(env)
		c = typeKeys(env, c, name)
		c, _ = c.Update(env, screentest.Press("enter"))
		if v := c.View(env, 120, 30); !strings.Contains(v, "an ordinary request · ctrl+t to run it as a task") {
			t.Errorf("%s opened after a task call does not start as an ordinary request:\n%s", name, v)
		}
		c, act = c.Update(env, screentest.Press("enter"))
		if sentTask(t, act) {
			t.Errorf("%s went as a task without ctrl+t", name)
		}
	}
}

// A tool's enum is a picker in the composer too, as in the answer form:
// ←/→ choose (they do not switch kinds there), the value is sent, and an
// edited copy comes back with its choice.
func TestComposerEnumIsAPicker(t *testing.T) {
	env := testEnv(`{"tools":{}}`)
	c, _ := New("").Open(env)
	c = withTools(t, env, c, `{"tools":[{"name":"paint","inputSchema":{"type":"object","properties":{"colour":{"type":"string","oneOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"}]}}}}]}`)
	c, _ = c.Update(env, screentest.Press("enter"))
	if v := c.View(env, 120, 30); !strings.Contains(v, "( ) Red") || !strings.Contains(v, "( ) Green") {
		t.Fatalf("the enum is not a picker:\n%s", v)
	}
	c, _ = c.Update(env, screentest.Press("right"))
	if c.Kind() != KindTool || !strings.Contains(c.View(env, 120, 30), "(•) Red") {
		t.Fatalf("→ on the picker did not choose (kind %v):\n%s", c.Kind(), c.View(env, 120, 30))
	}
	_, act := c.Update(env, screentest.Press("enter"))
	var send *Send
	for _, a := range flatten(act) {
		if s, ok := a.(Send); ok {
			send = &s
		}
	}
	if send == nil || string(send.Params) != `{"arguments":{"colour":"#f00"},"name":"paint"}` {
		t.Fatalf("sent %#v", act)
	}
	r := env.Tracker.Begin(send.Method, send.Params, session.RequestOptions{}, t0)
	c, _ = c.Edit(env, r, send.Params)
	if f := c.Fields()[0]; f.Pick != 0 || f.Input.Value() != "" {
		t.Errorf("the edited copy did not keep the choice: pick %d, text %q", f.Pick, f.Input.Value())
	}
}
