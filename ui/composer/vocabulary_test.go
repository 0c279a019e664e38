package composer

import (
	"encoding/json"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"inflight/internal/testkit/screentest"
	"inflight/session"
	"inflight/wire"
)

// The JSON editor's enter is a new line: the banner of an edited copy
// names the key that sends it there, as the hint does.
func TestEditBannerNamesTheKeyThatSends(t *testing.T) {
	env := testEnv(`{"tools":{}}`)
	c, _ := New("").Open(env)
	c = withTools(t, env, c, `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer"}}}}]}`)
	// An argument the form has no field for: the copy opens as JSON.
	params := json.RawMessage(`{"name":"add","arguments":{"a":1,"extra":{"x":1}}}`)
	r := env.Tracker.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, t0)
	c, _ = c.Edit(env, r, params)
	if _, open := c.JSON(); !open {
		t.Fatal("the copy did not open as JSON")
	}
	v := ansi.Strip(c.View(env, 120, 30))
	if !strings.Contains(v, "ctrl+s sends it as a new request") || strings.Contains(v, "enter sends") {
		t.Errorf("the banner does not name the JSON editor's send key:\n%s", v)
	}
	if !strings.Contains(v, "ctrl+s send") {
		t.Errorf("the hint does not say ctrl+s send:\n%s", v)
	}
}

// The composer's hints and notes name keys as its key map does: rebound,
// they say the new keys, and one word for the kinds wherever they are
// named.
func TestComposerKeyWordsComeFromTheKeyMap(t *testing.T) {
	env := testEnv(`{"tools":{}}`)
	c := New("")
	c.keys.PrevKind = key.NewBinding(key.WithKeys("left"), key.WithHelp("⇠", "previous kind"))
	c.keys.NextKind = key.NewBinding(key.WithKeys("right"), key.WithHelp("⇢", "next kind"))
	c.keys.Send = key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+g", "send"))
	c, _ = c.Open(env)
	views := []string{ansi.Strip(c.View(env, 120, 30))} // the tool list
	c, _ = c.Update(env, screentest.Press("left"))      // the raw request's form
	views = append(views, ansi.Strip(c.View(env, 120, 30)))
	c = typeKeys(env, c, "ping") // ←/→ move through the text now
	views = append(views, ansi.Strip(c.View(env, 120, 30)))
	for i, v := range views {
		if !strings.Contains(v, "⇠/⇢ kind") {
			t.Errorf("view %d does not name the kinds' keys from the key map:\n%s", i, v)
		}
		for _, literal := range []string{"←", "→", "ctrl+s", "kinds"} {
			if strings.Contains(v, literal) {
				t.Errorf("view %d names %q, not the key map's word:\n%s", i, literal, v)
			}
		}
	}
	if !strings.Contains(views[0], "ctrl+g send") {
		t.Errorf("the list's hint does not name the rebound send key:\n%s", views[0])
	}
}
