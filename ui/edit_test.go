package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/keymap"
	"inflight/ui/composer"
	"inflight/wire"
)

// E on a tool call opens its form filled in, with the settings it began
// with; what is changed goes out as a new request.
func TestEditReissueToolCall(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter")
	h.typeText("3")
	h.key("tab")
	h.typeText("4")
	h.key("tab")
	h.typeText("20s")
	h.key("tab")
	h.typeText("2s")
	h.key("enter")
	h.sentEvent(2)
	h.key("-") // shortened: the edit starts from what it began with
	h.key("E")
	c := &h.m.screens.composer
	if _, json := c.JSON(); h.m.focus.mode != keymap.ModeComposer || c.Kind() != composer.KindTool || c.Picking() || json {
		t.Fatalf("E opened mode %v kind %v on the list %v json %v", h.m.focus.mode, c.Kind(), c.Picking(), json)
	}
	i, f := c.SettingsStart(), c.Fields()
	if f[0].Input.Value() != "3" || f[1].Input.Value() != "4" || f[i].Input.Value() != "20s" || f[i+1].Input.Value() != "2s" {
		t.Fatalf("fields %q %q %q %q", f[0].Input.Value(), f[1].Input.Value(), f[i].Input.Value(), f[i+1].Input.Value())
	}
	if !strings.Contains(h.screen(), "editing a copy of #2 tools/call: enter sends it as a new request") {
		t.Fatalf("the status does not say what is edited:\n%s", h.screen())
	}
	h.key("tab", "backspace")
	h.typeText("9")
	h.key("enter")
	_, p := lastSent(t, h)
	args := p["arguments"].(map[string]any)
	if p["name"] != "slow" || args["seconds"] != float64(3) || args["steps"] != float64(9) {
		t.Fatalf("sent %v", p)
	}
	if r := h.request(3); r.Timeout.Timeout != 20*time.Second || r.LateWindow != 2*time.Second {
		t.Fatalf("the edited request's settings: %+v, late window %s", r.Timeout, r.LateWindow)
	}
}

// Arguments the form cannot hold (a key the schema does not have) open in
// the JSON editor, as they were.
func TestEditReissueOpensJSONWhenTheFormCannotHoldIt(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.run(h.m.send(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{"seconds":1,"extra":[1,2]}}`), sessionDefaults()))
	h.sentEvent(2)
	h.key("E")
	c := &h.m.screens.composer
	if v, open := c.JSON(); !open || !strings.Contains(v, `"extra"`) {
		t.Fatalf("json %v %q", open, v)
	}
	h.key("ctrl+s")
	if _, p := lastSent(t, h); p["arguments"].(map[string]any)["extra"] == nil {
		t.Fatalf("sent %v", p)
	}
}

// Any other method, from the detail view too, opens as a raw request.
func TestEditReissueRawFromDetail(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.run(h.m.send("custom/method", json.RawMessage(`{"x":1}`), sessionDefaults()))
	h.sentEventFor(2, "custom/method")
	h.key("enter") // the detail
	if h.m.focus.mode != keymap.ModeDetail {
		t.Fatalf("mode %v", h.m.focus.mode)
	}
	h.key("E")
	c := &h.m.screens.composer
	if f := c.Fields(); c.Kind() != composer.KindRaw || f[0].Input.Value() != "custom/method" || f[1].Input.Value() != `{"x":1}` {
		t.Fatalf("kind %v fields %q %q", c.Kind(), f[0].Input.Value(), f[1].Input.Value())
	}
	h.key("enter")
	if m, p := lastSent(t, h); m != "custom/method" || p["x"] != float64(1) {
		t.Fatalf("sent %s %v", m, p)
	}
}

// A resource read and a prompt get open in their own forms.
func TestEditReissueResourceAndPrompt(t *testing.T) {
	h := withCatalog(t, 120, 35, 2)
	h.key("down", "enter")
	h.typeText("0.7")
	h.key("enter")
	id := h.m.screens.list.Selected()
	n, _ := id.Int()
	h.sentEventFor(n, wire.MethodPromptsGet)
	h.key("E")
	c := &h.m.screens.composer
	if c.Kind() != composer.KindPrompt || c.Prompt() != "complex_prompt" || c.Fields()[0].Input.Value() != "0.7" {
		t.Fatalf("kind %v prompt %q fields %v", c.Kind(), c.Prompt(), c.Fields())
	}
	h.key("esc", "esc", "esc")
	h.run(h.m.send(wire.MethodResourcesRead, json.RawMessage(`{"uri":"demo://clock"}`), sessionDefaults()))
	id = h.m.tracker.At(h.m.tracker.Len() - 1).ID
	h.m.screens.list = h.m.screens.list.Select(id, false)
	n, _ = id.Int()
	h.sentEventFor(n, wire.MethodResourcesRead)
	h.key("E")
	if c.Kind() != composer.KindResource || c.Fields()[0].Input.Value() != "demo://clock" {
		t.Fatalf("kind %v uri %q", c.Kind(), c.Fields()[0].Input.Value())
	}
}

// sentEventFor reports request id as sent, with the params the UI asked
// the client to send.
func (h *harness) sentEventFor(id int64, method string) {
	h.t.Helper()
	var params json.RawMessage
	for _, r := range h.fake.sent {
		if r.ID == wire.IntID(id) {
			params = r.Params
		}
	}
	raw := wire.Request(wire.IntID(id), method, params)
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: wire.IntID(id), Raw: raw, Msg: msg})
}

// r re-issues as is: with the late window the request was sent with.
func TestReissueKeepsTheLateWindow(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter", "tab", "tab", "tab")
	h.typeText("1.5")
	h.key("enter")
	h.sentEvent(2)
	h.key("r")
	if r := h.request(3); r.LateWindow != 1500*time.Millisecond {
		t.Fatalf("the re-issue's late window is %s", r.LateWindow)
	}
	if got := h.fake.sent[len(h.fake.sent)-1].LateWindow; got != 1500*time.Millisecond {
		t.Fatalf("the client was told %s", got)
	}
}
