package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/ui/composer"
	"inflight/wire"
)

// everythingTools is a tools/list answer like the TypeScript reference
// server's, whose names are longer than the picker once allowed.
const everythingTools = `{"resultType":"complete","tools":[` +
	`{"name":"echo","description":"Echoes back the input","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}},` +
	`{"name":"add","description":"Adds two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},` +
	`{"name":"trigger-long-running-operation","description":"Demonstrates a long running operation with progress updates","inputSchema":{"type":"object","properties":{"duration":{"type":"number","default":10},"steps":{"type":"number","default":5}}}},` +
	`{"name":"get-tiny-image","description":"Returns a tiny image","inputSchema":{"type":"object"}},` +
	`{"name":"annotated-message","description":"Demonstrates how annotations can be used","inputSchema":{"type":"object","properties":{"messageType":{"type":"string"},"includeImage":{"type":"boolean"}},"required":["messageType"]}}]}`

const catalogResources = `{"resultType":"complete","resources":[{"uri":"demo://clock","name":"clock","title":"Demo clock","description":"A clock that ticks.","mimeType":"text/plain"},{"uri":"file:///etc/motd","name":"motd","mimeType":"text/plain"}]}`
const catalogTemplates = `{"resultType":"complete","resourceTemplates":[{"uriTemplate":"demo://static/resource/{id}{?format}","name":"static","description":"A static resource by number."}]}`
const catalogPrompts = `{"resultType":"complete","prompts":[{"name":"simple_prompt","description":"A prompt without arguments"},{"name":"complex_prompt","description":"A prompt with arguments","arguments":[{"name":"temperature","description":"Temperature setting","required":true},{"name":"style","description":"Output style"}]}]}`

// withCatalog connects to a server whose tools, resources, templates and
// prompts are the ones above, and opens the composer on kind (answering
// the lists the composer asks for as it goes).
func withCatalog(t *testing.T, w, hgt int, rights int) *harness {
	h := newHarness(t, w, hgt)
	h.fake.info.Capabilities = []byte(`{"tools":{},"resources":{},"prompts":{}}`)
	info := h.fake.info
	h.events(clientConnected(&info))
	h.answer(1, everythingTools)
	h.key("n")
	for i := 0; i < rights; i++ {
		h.key("right")
		answerCatalog(h)
	}
	return h
}

func answerCatalog(h *harness) {
	h.t.Helper()
	for _, r := range h.fake.sent {
		if rr, ok := h.m.tracker.Get(r.ID); !ok || !rr.IsActive() {
			continue
		}
		id, _ := r.ID.Int()
		switch r.Method {
		case wire.MethodResourcesList:
			h.answer(id, catalogResources)
		case "resources/templates/list":
			h.answer(id, catalogTemplates)
		case wire.MethodPromptsList:
			h.answer(id, catalogPrompts)
		}
	}
}

func TestComposerPickerNamesFollowTheWidth(t *testing.T) {
	h := withCatalog(t, 120, 35, 0)
	if !strings.Contains(h.screen(), "trigger-long-running-operation  Demonstrates") {
		t.Fatalf("the tool's name is cut at 120 columns:\n%s", h.screen())
	}
	h.send(tea2size(80, 24))
	if !strings.Contains(h.screen(), "trigger-long-running-operation") {
		t.Fatalf("the tool's name is cut at 80 columns:\n%s", h.screen())
	}
}

func TestComposerToolFilter(t *testing.T) {
	h := withCatalog(t, 120, 35, 0)
	h.typeText("long")
	if tool, _ := h.m.screens.composer.Tool(); tool.Name != "trigger-long-running-operation" {
		t.Fatalf("filtering for long selected %q", tool.Name)
	}
	if s := h.screen(); strings.Contains(s, "get-tiny-image") || !strings.Contains(s, "1 of 5 tools match") {
		t.Fatalf("the filter did not narrow the list:\n%s", s)
	}
	h.typeText("zzz")
	h.key("enter")
	if !h.m.screens.composer.Picking() || !strings.Contains(h.screen(), `nothing matches "longzzz"`) {
		t.Fatalf("enter on an empty match did not say why:\n%s", h.screen())
	}
	h.key("esc") // clears the filter, keeps the composer
	if h.m.focus.mode != 4 || h.m.screens.composer.Filter(composer.KindTool) != "" {
		t.Fatalf("esc with a filter: mode %v, filter %q", h.m.focus.mode, h.m.screens.composer.Filter(composer.KindTool))
	}
	h.typeText("add")
	h.key("enter")
	h.typeText("1")
	h.key("tab")
	h.typeText("2")
	h.key("enter")
	_, p := lastSent(t, h)
	if args := p["arguments"].(map[string]any); p["name"] != "add" || args["a"] != float64(1) || args["b"] != float64(2) {
		t.Fatalf("sent %v", p)
	}
}

func TestComposerResourcePicker(t *testing.T) {
	h := withCatalog(t, 120, 35, 1)
	var asked []string
	for _, r := range h.fake.sent {
		asked = append(asked, r.Method)
	}
	if got := strings.Join(asked, " "); got != "tools/list resources/list resources/templates/list" {
		t.Fatalf("the composer asked %s", got)
	}
	s := h.screen()
	for _, want := range []string{"clock", "demo://clock", "template demo://static/resource/{id}{?format}", "✎ type a URI", "2 resources, 1 template"} {
		if !strings.Contains(s, want) {
			t.Fatalf("no %q in the picker:\n%s", want, s)
		}
	}
	h.key("down", "enter") // motd
	h.key("enter")
	if _, p := lastSent(t, h); p["uri"] != "file:///etc/motd" {
		t.Fatalf("read %v", p)
	}
	// Once per connection: the lists are not asked again.
	n := len(h.fake.sent)
	h.key("n")
	if len(h.fake.sent) != n {
		t.Fatal("the lists were asked for again on the same connection")
	}
}

func TestComposerTemplateVariablesAreFields(t *testing.T) {
	h := withCatalog(t, 120, 35, 1)
	h.typeText("static")
	h.key("enter")
	if f := h.m.screens.composer.Fields(); f[0].Name != "id" || !f[0].Required || f[1].Name != "format" || f[1].Required {
		t.Fatalf("fields %v", f)
	}
	n := len(h.fake.sent)
	h.key("enter")
	if len(h.fake.sent) != n || !strings.Contains(h.screen(), "id is required") {
		t.Fatalf("an empty path variable was sent:\n%s", h.screen())
	}
	h.typeText("4 2")
	if !strings.Contains(h.screen(), "reads demo://static/resource/4%202") {
		t.Fatalf("the form does not show the URI it reads:\n%s", h.screen())
	}
	h.key("tab")
	h.typeText("json")
	h.key("enter")
	if _, p := lastSent(t, h); p["uri"] != "demo://static/resource/4%202?format=json" {
		t.Fatalf("read %v", p)
	}
}

func TestComposerTypedURIKeepsTheFilter(t *testing.T) {
	h := withCatalog(t, 120, 35, 1)
	h.typeText("file:///tmp/x")
	h.key("enter") // only the typed entry matches
	if v := h.m.screens.composer.Fields()[0].Input.Value(); v != "file:///tmp/x" {
		t.Fatalf("the typed URI became %q", v)
	}
	h.key("enter")
	if m, p := lastSent(t, h); m != wire.MethodResourcesRead || p["uri"] != "file:///tmp/x" {
		t.Fatalf("sent %s %v", m, p)
	}
}

func TestComposerPromptArgumentsForm(t *testing.T) {
	h := withCatalog(t, 120, 35, 2)
	if s := h.screen(); !strings.Contains(s, "args temperature*, style") {
		t.Fatalf("the picker does not list the arguments:\n%s", s)
	}
	h.key("down", "enter")
	if f := h.m.screens.composer.Fields(); f[0].Name != "temperature" || !f[0].Required || f[1].Required {
		t.Fatalf("fields %v", f)
	}
	if !strings.Contains(h.screen(), "temperature*") {
		t.Fatalf("the required argument is not marked:\n%s", h.screen())
	}
	n := len(h.fake.sent)
	h.key("enter")
	if len(h.fake.sent) != n || !strings.Contains(h.screen(), "temperature is required") {
		t.Fatalf("a missing required argument was sent:\n%s", h.screen())
	}
	h.typeText("0.7")
	h.key("enter")
	_, p := lastSent(t, h)
	args := p["arguments"].(map[string]any)
	if p["name"] != "complex_prompt" || args["temperature"] != "0.7" || args["style"] != nil {
		t.Fatalf("sent %v", p)
	}
}

// A server that declares no resources gets the typed field, said plainly,
// and is not asked for a list it does not have.
func TestComposerWithoutCapability(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.fake.info.Capabilities = []byte(`{"tools":{}}`)
	h.connect()
	h.key("n", "right")
	if h.m.screens.composer.Picking() || h.m.screens.composer.Focus() != 0 {
		t.Fatalf("on the list %v focus %d", h.m.screens.composer.Picking(), h.m.screens.composer.Focus())
	}
	if !strings.Contains(h.screen(), "this server declares no resources capability, so there is no list to pick from: type the URI") {
		t.Fatalf("not said:\n%s", h.screen())
	}
	for _, r := range h.fake.sent {
		if r.Method != wire.MethodToolsList {
			t.Fatalf("asked %s of a server without the capability", r.Method)
		}
	}
	h.typeText("x://y")
	h.key("enter")
	if _, p := lastSent(t, h); p["uri"] != "x://y" {
		t.Fatalf("read %v", p)
	}
}

// A list the server refuses is said, with the typed entry still there.
func TestComposerListError(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "right", "right")
	raw := wire.ErrorResponse(wire.IntID(4), -32601, "Method not found")
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(4), Raw: raw, Msg: msg})
	if s := h.screen(); !strings.Contains(s, "prompts/list failed: error -32601 Method not found") || !strings.Contains(s, "✎ type a prompt name") {
		t.Fatalf("the error is not said:\n%s", s)
	}
}

func TestComposerWheelScrollsThePicker(t *testing.T) {
	h := withCatalog(t, 120, 35, 0)
	before := h.m.screens.composer.Selection(composer.KindTool)
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if got := h.m.screens.composer.Selection(composer.KindTool); got != before+2 {
		t.Fatalf("two wheel notches moved the selection from %d to %d", before, got)
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if got := h.m.screens.composer.Selection(composer.KindTool); got != before+1 {
		t.Fatalf("wheel up left the selection at %d", got)
	}
}

// What the lists bring is the server's text: shown inert in the picker,
// the form and the errors.
func TestComposerListsAreInert(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "right")
	h.answer(2, `{"resultType":"complete","resources":[{"uri":"x://\u001b[2J","name":"evil\u001b]52;c;cHduZWQ=\u0007"}]}`)
	h.answer(3, `{"resultType":"complete","resourceTemplates":[{"uriTemplate":"x://{\u001b[31mv}","name":"t"}]}`)
	for _, keys := range [][]string{nil, {"down", "enter"}} {
		h.key(keys...)
		content := h.m.View().Content
		if strings.Contains(content, "\x1b]52") || strings.Contains(content, "\x1b[2J") || strings.Contains(content, "\x1b[31mv") {
			t.Fatalf("a list's string reached the terminal raw (after %v)", keys)
		}
	}
	if !strings.Contains(h.screen(), "␛[31mv") {
		t.Fatalf("the template's variable is not shown inert:\n%s", h.screen())
	}
}

// After a new connection the lists are asked again, and until then the
// picker does not call them empty.
func TestComposerListsAreAskedPerConnection(t *testing.T) {
	h := withCatalog(t, 120, 35, 1)
	h.m.screens.composer = h.m.screens.composer.NewConnection()
	if s := h.screen(); strings.Contains(s, "listed no") || !strings.Contains(s, "resources/list was not asked on this connection") {
		t.Fatalf("the picker claims what it did not see:\n%s", s)
	}
	n := len(h.fake.sent)
	h.key("left", "right")
	if len(h.fake.sent) != n+2 {
		t.Fatalf("← → asked %d requests, want the two lists", len(h.fake.sent)-n)
	}
}
