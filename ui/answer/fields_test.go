package answer

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/session"
	"inflight/wire"
)

// ask opens the form on one elicitation whose requested schema is schema.
func ask(t *testing.T, schema string) Model {
	t.Helper()
	params := `{"message":"Tell me","requestedSchema":` + schema + `}`
	m, _ := OpenRound(testEnv(), wire.IntID(4), []session.InputRequest{{Key: "q", Method: wire.MethodElicitationCreate, Params: json.RawMessage(params)}}, nil)
	if !m.Shown() {
		t.Fatal("the form is not shown")
	}
	return m.Sized(120)
}

// sentContent is the content the Send of act answers with.
func sentContent(t *testing.T, act any) string {
	t.Helper()
	send, ok := act.(SendRound)
	if !ok {
		t.Fatalf("no round sent: %#v", act)
	}
	var a struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(send.Answers["q"], &a); err != nil {
		t.Fatal(err)
	}
	return string(a.Content)
}

func arrow(name string) tea.KeyPressMsg {
	if name == "left" {
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	}
	return tea.KeyPressMsg{Code: tea.KeyRight}
}

// An enum is a picker that lists its choices by their titles (a oneOf of
// consts, or enumNames), none cut; ←/→ choose, and the value is sent.
func TestEnumIsAPickerWithTitles(t *testing.T) {
	for _, c := range []struct{ name, schema, want string }{
		{"oneOf", `{"type":"object","properties":{"colour":{"type":"string","oneOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"},{"const":"#00f","title":"Blue"}]}}}`, `{"colour":"#0f0"}`},
		{"enumNames", `{"type":"object","properties":{"colour":{"type":"string","enum":["r","g","b"],"enumNames":["Red","Green","Blue"]}}}`, `{"colour":"g"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := testEnv()
			m := ask(t, c.schema)
			v := ansi.Strip(m.View(env, 80, 24))
			for _, title := range []string{"( ) Red", "( ) Green", "( ) Blue"} {
				if !strings.Contains(v, title) {
					t.Errorf("the picker does not list %q:\n%s", title, v)
				}
			}
			m, _ = m.Update(env, arrow("right"))
			m, _ = m.Update(env, arrow("right"))
			if v := ansi.Strip(m.View(env, 80, 24)); !strings.Contains(v, "(•) Green") {
				t.Errorf("→ → did not choose Green:\n%s", v)
			}
			_, act := press(t, env, m, "enter")
			if got := sentContent(t, act); got != c.want {
				t.Errorf("sent %s, want %s", got, c.want)
			}
		})
	}
}

// A multi-select (an array of enum items) is a set of checkboxes: →
// moves, space ticks, and the values ticked are sent as an array; left
// alone, its default is.
func TestMultiSelectIsCheckboxes(t *testing.T) {
	env := testEnv()
	schema := `{"type":"object","properties":{"colours":{"type":"array","items":{"anyOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"},{"const":"#00f","title":"Blue"}]},"default":["#f00"]}}}`
	m := ask(t, schema)
	v := ansi.Strip(m.View(env, 80, 24))
	if !strings.Contains(v, "[x] Red (default)") || !strings.Contains(v, "[ ] Green") || strings.Contains(v, "[\"#f00\"]") {
		t.Fatalf("the multi-select is not checkboxes with its default:\n%s", v)
	}
	if _, act := press(t, env, m, "enter"); sentContent(t, act) != `{"colours":["#f00"]}` {
		t.Errorf("left alone, it sent %s, want its default", sentContent(t, act))
	}
	m, _ = m.Update(env, arrow("right"))
	m, _ = m.Update(env, arrow("right"))
	m, _ = press(t, env, m, "space") // Blue
	if v := ansi.Strip(m.View(env, 80, 24)); !strings.Contains(v, "[x] Blue") || !strings.Contains(v, "[x] Red") {
		t.Errorf("space did not tick Blue beside the default's Red:\n%s", v)
	}
	_, act := press(t, env, m, "enter")
	if got := sentContent(t, act); got != `{"colours":["#f00","#00f"]}` {
		t.Errorf("sent %s", got)
	}
}

// A default is a placeholder: typing replaces it (not "AdaBob"), an
// empty field sends it, and ctrl+u clears the field so that nothing is
// sent; the form says so.
func TestDefaultIsAPlaceholderReplacedByTyping(t *testing.T) {
	env := testEnv()
	schema := `{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}`
	m := ask(t, schema)
	v := ansi.Strip(m.View(env, 100, 24))
	if !strings.Contains(v, "Ada (default)") || !strings.Contains(v, "ctrl+u clears a field") {
		t.Fatalf("the default or how to clear is not shown:\n%s", v)
	}
	if _, act := press(t, env, m, "enter"); sentContent(t, act) != `{"name":"Ada"}` {
		t.Errorf("an empty field sent %s, want its default", sentContent(t, act))
	}
	typed, _ := press(t, env, m, "B", "o", "b")
	if _, act := press(t, env, typed, "enter"); sentContent(t, act) != `{"name":"Bob"}` {
		t.Errorf("typing over the default sent %s", sentContent(t, act))
	}
	cleared, _ := press(t, env, m, "ctrl+u")
	if v := ansi.Strip(cleared.View(env, 100, 24)); !strings.Contains(v, "(nothing sent)") {
		t.Errorf("a cleared field does not say so:\n%s", v)
	}
	if _, act := press(t, env, cleared, "enter"); sentContent(t, act) != `{}` {
		t.Errorf("a cleared field sent %s", sentContent(t, act))
	}
}

// The form says how defaults and clearing work only when a field has a
// default; a picker says typing goes off its list rather than inviting a
// value of one's own.
func TestFormSaysOnlyWhatApplies(t *testing.T) {
	env := testEnv()
	m := ask(t, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	if v := ansi.Strip(m.View(env, 100, 24)); strings.Contains(v, "(default)") || strings.Contains(v, "clears a field") {
		t.Errorf("a form with no default speaks of defaults:\n%s", v)
	}
	m = ask(t, `{"type":"object","properties":{"colour":{"type":"string","enum":["red","green"]}}}`)
	v := ansi.Strip(m.View(env, 100, 24))
	if strings.Contains(v, "of your own") || !strings.Contains(v, "typing sends a value off the list") {
		t.Errorf("the picker invites a value of one's own:\n%s", v)
	}
	if strings.Contains(v, "clears a field") {
		t.Errorf("a picker with no default speaks of defaults:\n%s", v)
	}
}
