package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/ui/composer"
	"inflight/wire"
)

// lastSent decodes the params of the last request the fake client sent.
func lastSent(t *testing.T, h *harness) (string, map[string]any) {
	t.Helper()
	r := h.fake.sent[len(h.fake.sent)-1]
	var p map[string]any
	if len(r.Params) > 0 {
		if err := json.Unmarshal(r.Params, &p); err != nil {
			t.Fatalf("params %s: %v", r.Params, err)
		}
	}
	return r.Method, p
}

func TestComposerFormArgumentsAreTyped(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter")
	h.typeText("2.5") // seconds: a number
	h.key("tab")
	h.typeText("4") // steps: an integer
	h.key("enter")
	method, p := lastSent(t, h)
	args, _ := p["arguments"].(map[string]any)
	if method != wire.MethodToolsCall || p["name"] != "slow" || args["seconds"] != 2.5 || args["steps"] != float64(4) {
		t.Fatalf("sent %s %v", method, p)
	}
}

func TestComposerRejectsBadInputAndStaysOpen(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter", "tab")
	h.typeText("four") // steps must be an integer
	n := len(h.fake.sent)
	h.key("enter")
	if len(h.fake.sent) != n {
		t.Fatal("an invalid form was sent")
	}
	if !strings.Contains(h.screen(), `steps: "four" is not an integer`) {
		t.Fatalf("no clear error:\n%s", h.screen())
	}
}

func TestComposerJSONModeValidatesAndSends(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter")
	h.typeText("3")
	h.key("ctrl+e")
	if !strings.Contains(h.screen(), `"seconds": 3`) {
		t.Fatalf("the JSON editor does not carry the form's value:\n%s", h.screen())
	}
	if !strings.Contains(h.screen(), "JSON: enter new line · ctrl+s send") {
		t.Fatalf("the hint does not say how the editor sends:\n%s", h.screen())
	}
	h.typeText("{")
	if !strings.Contains(h.screen(), "not a JSON object") {
		t.Fatalf("invalid JSON is not flagged while typing:\n%s", h.screen())
	}
	h.key("backspace", "ctrl+s")
	_, p := lastSent(t, h)
	if args, _ := p["arguments"].(map[string]any); args["seconds"] != float64(3) {
		t.Fatalf("sent %v", p)
	}
}

func TestComposerTimeoutsBecomeDefaults(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter", "tab", "tab")
	h.typeText("15s")
	h.key("tab")
	h.typeText("2")              // the late window: a bare number is seconds
	h.key("tab", "space", "tab") // reset on progress off
	h.typeText("2m")
	h.key("enter")
	r := h.request(2)
	if r.Timeout.Timeout != 15*time.Second || r.Timeout.Max != 2*time.Minute || r.Timeout.ResetOnProgress || r.LateWindow != 2*time.Second {
		t.Fatalf("timeouts %+v, late window %s", r.Timeout, r.LateWindow)
	}
	// The client is told too: its legacy HTTP stream stays open that long.
	if got := h.fake.sent[len(h.fake.sent)-1].LateWindow; got != 2*time.Second {
		t.Fatalf("client.Request.LateWindow = %s", got)
	}
	h.key("n", "enter", "enter")
	if r := h.request(3); r.Timeout.Timeout != 15*time.Second || r.Timeout.ResetOnProgress || r.LateWindow != 2*time.Second {
		t.Fatalf("the next request did not get the new defaults: %+v, late window %s", r.Timeout, r.LateWindow)
	}
}

func TestComposerOtherKinds(t *testing.T) {
	cases := []struct {
		name   string
		rights int
		fill   func(h *harness)
		method string
		check  func(t *testing.T, p map[string]any)
	}{
		// The typed forms (the lists are empty): focus starts in the
		// first field, so typing goes where it shows.
		{"resource read", 1, func(h *harness) { h.key("enter") }, wire.MethodResourcesRead, func(t *testing.T, p map[string]any) {
			if p["uri"] != "demo://clock" {
				t.Fatalf("uri %v", p["uri"])
			}
		}},
		{"prompt get", 2, func(h *harness) { h.key("enter", "tab"); h.typeText(`{"transport":"stdio"}`) }, wire.MethodPromptsGet, func(t *testing.T, p map[string]any) {
			if p["name"] != "explain_cancellation" || p["arguments"].(map[string]any)["transport"] != "stdio" {
				t.Fatalf("params %v", p)
			}
		}},
		{"subscriptions/listen", 3, func(h *harness) { h.key("space") }, wire.MethodSubscriptionsListen, func(t *testing.T, p map[string]any) {
			f := p["notifications"].(map[string]any)
			if f["toolsListChanged"] != true || f["resourceSubscriptions"].([]any)[0] != "demo://clock" {
				t.Fatalf("filter %v", f)
			}
		}},
		// issue 10: type tools/call, Tab, JSON, Enter.
		{"raw", 4, func(h *harness) {
			h.typeText("tools/call")
			h.key("tab")
			h.typeText(`{"name":"slow","arguments":{}}`)
		}, wire.MethodToolsCall, func(t *testing.T, p map[string]any) {
			if p["name"] != "slow" {
				t.Fatalf("params %v", p)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 120, 35)
			h.fake.info.ServerName = composer.DemoServerName // its resource and prompt are the examples
			h.connect()
			h.key("n")
			for i := 0; i < c.rights; i++ {
				h.key("right")
			}
			answerLists(h)
			c.fill(h)
			h.key("enter")
			method, p := lastSent(t, h)
			if method != c.method {
				t.Fatalf("sent %s, want %s (screen:\n%s)", method, c.method, h.screen())
			}
			c.check(t, p)
		})
	}
}

// answerLists answers every list request the composer sent with an empty
// list.
func answerLists(h *harness) {
	h.t.Helper()
	for _, r := range h.fake.sent {
		if rr, ok := h.m.tracker.Get(r.ID); !ok || !rr.IsActive() {
			continue
		}
		id, _ := r.ID.Int()
		switch r.Method {
		case wire.MethodResourcesList:
			h.answer(id, `{"resultType":"complete","resources":[]}`)
		case "resources/templates/list":
			h.answer(id, `{"resultType":"complete","resourceTemplates":[]}`)
		case wire.MethodPromptsList:
			h.answer(id, `{"resultType":"complete","prompts":[]}`)
		}
	}
}

// Switching to another kind and back leaves the tool list working: ↓
// moves to the next tool and enter opens it (the kind row used to keep
// the keys, so the first ↓ was lost and enter sent the wrong tool).
func TestComposerKindRoundTripKeepsToolKeys(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n")
	before := h.m.screens.composer.Selection(composer.KindTool)
	h.key("right", "left", "down")
	if got := h.m.screens.composer.Selection(composer.KindTool); got != (before+1)%len(h.m.screens.composer.Tools()) {
		t.Fatalf("↓ after → ← moved the selection from %d to %d", before, got)
	}
	want := h.m.screens.composer.Tools()[h.m.screens.composer.Selection(composer.KindTool)].Name
	h.key("enter")
	if tool, _ := h.m.screens.composer.Tool(); h.m.screens.composer.Picking() || tool.Name != want {
		t.Fatalf("enter opened %q (on the list: %v), want the form of %q", tool.Name, h.m.screens.composer.Picking(), want)
	}
}

// Another server's composer offers no demo values: an empty resource URI or
// prompt name is an error, and listen subscribes to nothing by default.
func TestComposerNoDemoValuesForOtherServers(t *testing.T) {
	for _, c := range []struct {
		rights int
		want   string
	}{{1, "uri is required"}, {2, "name is required"}} {
		h := newHarness(t, 120, 35)
		h.connect()
		h.key("n")
		for i := 0; i < c.rights; i++ {
			h.key("right")
		}
		answerLists(h)
		h.key("enter") // the typed entry
		n := len(h.fake.sent)
		h.key("enter")
		if len(h.fake.sent) != n {
			_, p := lastSent(t, h)
			t.Fatalf("sent %v with demo values to another server", p)
		}
		if !strings.Contains(h.screen(), c.want) {
			t.Fatalf("no %q:\n%s", c.want, h.screen())
		}
	}
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "right", "right", "right", "enter")
	if _, p := lastSent(t, h); p["notifications"].(map[string]any)["resourceSubscriptions"] != nil {
		t.Fatalf("listen subscribed to a demo resource: %v", p)
	}
}

func TestComposerEscGoesBackThenCloses(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter", "esc")
	if !h.m.screens.composer.Picking() {
		t.Fatal("esc in the form did not go back to the tool list")
	}
	h.key("esc")
	if h.m.focus.mode != 0 {
		t.Fatal("esc on the tool list did not close the composer")
	}
}

func TestToolDescriptionsAreInert(t *testing.T) {
	h := newHarness(t, 120, 35)
	info := h.fake.info
	h.events(clientConnected(&info))
	h.answer(1, `{"resultType":"complete","tools":[{"name":"evil\u001b[2J","description":"\u001b]52;c;cHduZWQ=\u0007steals your clipboard","inputSchema":{"type":"object"}}]}`)
	h.key("n")
	content := h.m.View().Content
	if strings.Contains(content, "\x1b]52") || strings.Contains(content, "\x1b[2J") {
		t.Fatal("a tool's name or description reached the terminal raw")
	}
	if !strings.Contains(h.screen(), "␛]52;c;cHduZWQ=␇steals your clipboard") {
		t.Fatalf("the description is not shown inert:\n%s", h.screen())
	}
}

// A zero or negative timeout is refused with what is wrong with it, not
// as an unreadable duration.
func TestComposerTimeoutMustBePositive(t *testing.T) {
	for _, v := range []string{"0s", "0", "-3"} {
		h := newHarness(t, 120, 35)
		h.connect()
		h.key("n", "enter", "tab", "tab")
		h.typeText(v)
		n := len(h.fake.sent)
		h.key("enter")
		if len(h.fake.sent) != n {
			t.Fatalf("%q: a zero timeout was sent", v)
		}
		if want := "timeout: \"" + v + "\" must be longer than zero"; !strings.Contains(h.screen(), want) {
			t.Fatalf("%q: no %q on screen:\n%s", v, want, h.screen())
		}
	}
}
