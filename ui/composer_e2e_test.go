package ui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"inflight/session"
	"inflight/wire"
)

// The composer against the real demo server: a resource and a prompt
// picked from the server's own lists, the raw request typed as issue 10
// typed it (tools/call, Tab, JSON, Enter), and that request edited and
// sent again.
func TestEndToEndComposerOnTheDemoServer(t *testing.T) {
	d := &demoDialer{}
	defer d.close()
	m, err := New(Options{Target: "demo", Transport: "stdio", Dial: d.dial, Tracker: session.DefaultConfig(), Dark: true})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 35))
	scr := newScreen(t, tm, 120, 35)
	typeIn := func(s string) {
		for _, r := range s {
			tm.Send(keyMsg(string(r)))
		}
	}
	scr.waitFor(t, "17 tools", 5*time.Second)

	// A resource from resources/list.
	tm.Send(keyMsg("n"))
	scr.waitFor(t, "↑/↓ tool · ←/→ kind", 2*time.Second)
	tm.Send(keyMsg("right"))
	scr.waitFor(t, "demo://clock · Demo clock", 5*time.Second)
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "tab/↓ next field", 2*time.Second)
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "4 done", 3*time.Second)

	// A prompt from prompts/list, its argument a field. n opens on the
	// tool call again, whatever was sent last.
	tm.Send(keyMsg("n"))
	scr.waitFor(t, "↑/↓ tool · ←/→ kind", 2*time.Second)
	tm.Send(keyMsg("right"))
	tm.Send(keyMsg("right"))
	scr.waitFor(t, "explain_cancellation  args transport", 5*time.Second)
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "stdio, http (2026-07-28) or legacy-http", 2*time.Second)
	typeIn("stdio")
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "6 done", 3*time.Second)

	// The raw request: the focus is in the method field.
	tm.Send(keyMsg("n"))
	scr.waitFor(t, "↑/↓ tool", 2*time.Second)
	tm.Send(keyMsg("left"))
	scr.waitFor(t, "any JSON-RPC method", 2*time.Second)
	typeIn("tools/call")
	tm.Send(keyMsg("tab"))
	typeIn(`{"name":"slow","arguments":{"seconds":0.2,"steps":2}}`)
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "7 done", 3*time.Second)

	// E opens it again (a tool the server listed: in its form), enter sends
	// the copy.
	tm.Send(keyMsg("E"))
	scr.waitFor(t, "editing a copy of", 2*time.Second)
	tm.Send(keyMsg("enter"))
	scr.waitFor(t, "8 done", 5*time.Second)

	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	tr := final.Tracker()
	count := map[string]int{}
	for i := 0; i < tr.Len(); i++ {
		r := tr.At(i)
		if r.State == session.StateCompleted {
			count[r.Method+" "+r.Target]++
		}
	}
	for _, want := range []string{wire.MethodResourcesList + " ", wire.MethodPromptsList + " ", wire.MethodResourcesRead + " demo://clock", wire.MethodPromptsGet + " explain_cancellation"} {
		if count[want] != 1 {
			t.Errorf("%q completed %d times; all: %v", want, count[want], count)
		}
	}
	if count[wire.MethodToolsCall+" slow"] < 1 {
		t.Errorf("the raw tools/call did not complete: %v", count)
	}
}
