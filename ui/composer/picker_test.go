package composer

import (
	"fmt"
	"strings"
	"testing"

	"inflight/internal/testkit/screentest"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Typing a tool's name finds that tool before the ones that merely
// contain it: enter after "simulate" opens simulate-research-query, not
// toggle-simulated-logging, which comes first in the server's list.
func TestPickerRanksWholeWordsAndPrefixesFirst(t *testing.T) {
	env := testEnv(`{"tools":{}}`)
	c, _ := New("").Open(env)
	c = withTools(t, env, c, `{"tools":[
		{"name":"echo","description":"says it back"},
		{"name":"toggle-simulated-logging"},
		{"name":"resimulate"},
		{"name":"simulated-annealing"},
		{"name":"simulate-research-query"},
		{"name":"plain","description":"a simulate in its description only"}]}`)
	c = typeKeys(env, c, "simulate")
	var names []string
	for _, i := range c.pickers[KindTool].matches(c.items(KindTool)) {
		names = append(names, c.tools[i].Name)
	}
	want := "simulate-research-query simulated-annealing toggle-simulated-logging resimulate"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("ranked %q, want %q", got, want)
	}
	c, _ = c.Update(env, screentest.Press("enter"))
	if tool, ok := c.Tool(); !ok || c.Picking() || tool.Name != "simulate-research-query" {
		t.Fatalf("enter after simulate opened %q (picking %v)", tool.Name, c.Picking())
	}
}

// The name column is as wide as the longest name of the whole list: the
// descriptions do not jump sideways as the wheel brings a longer name
// into the window.
func TestPickerNameColumnStaysAsTheWheelScrolls(t *testing.T) {
	env := testEnv(`{"tools":{}}`)
	c, _ := New("").Open(env)
	var tools []string
	for i := range 12 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"desc%d"}`, i, i))
	}
	tools = append(tools, `{"name":"a-much-longer-tool-name","description":"desclong"}`)
	c = withTools(t, env, c, `{"tools":[`+strings.Join(tools, ",")+`]}`)
	column := func(view, desc string) int {
		for _, l := range strings.Split(ansi.Strip(view), "\n") {
			if i := strings.Index(l, desc); i >= 0 && !strings.HasPrefix(strings.TrimSpace(l), desc) {
				return ansi.StringWidth(l[:i])
			}
		}
		t.Fatalf("no row shows %s:\n%s", desc, ansi.Strip(view))
		return 0
	}
	top := c.View(env, 120, 12)
	if strings.Contains(top, "a-much-longer-tool-name") {
		t.Fatalf("the long name is in the first window; the test needs it below:\n%s", ansi.Strip(top))
	}
	before := column(top, "desc1")
	for range 12 {
		c, _ = c.Update(env, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	bottom := c.View(env, 120, 12)
	if after := column(bottom, "desc11"); after != before {
		t.Errorf("the descriptions moved from column %d to %d as the wheel scrolled:\n%s\n%s", before, after, ansi.Strip(top), ansi.Strip(bottom))
	}
	if want := 2 + len("a-much-longer-tool-name") + 2; before != want {
		t.Errorf("descriptions at column %d, want %d (the longest name's width)", before, want)
	}
}
