package ui

import (
	"image/color"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The detail's body is built once per change of what it shows: progress
// (shown in the header) leaves it alone, and each thing the body does show
// — the response, a violation, the palette — rebuilds it, so it is never
// stale.
func TestDetailBodyRebuiltOnlyWhenItsSourceChanges(t *testing.T) {
	h := newHarness(t, 120, 40)
	h.connect()
	id := startSlow(h)
	h.key("enter")
	body := func() string { return h.m.detail.content }
	built := h.m.detail.built
	first := body()
	if !strings.Contains(first, "REQUEST") || !strings.Contains(first, "(none)") {
		t.Fatalf("body before the answer:\n%s", first)
	}

	for v := 1.0; v <= 5; v++ {
		h.progress(id, v, 10, "step")
	}
	if !h.m.detail.built.same(&built) || body() != first {
		t.Fatal("progress rebuilt the body, which does not show it")
	}
	if !strings.Contains(h.screen(), "5 progress (┼)") {
		t.Fatalf("the header does not show the progress:\n%s", h.screen())
	}

	h.progress(id, 2, 10, "backwards") // a violation the body lists
	if !strings.Contains(body(), "VIOLATIONS") || !strings.Contains(body(), "progress_not_increasing") {
		t.Fatalf("the body does not list the new violation:\n%s", body())
	}

	h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"the answer"}]}`)
	if !strings.Contains(body(), `"the answer"`) || !strings.Contains(h.screen(), "RESPONSE") {
		t.Fatalf("the body does not show the response:\n%s", body())
	}

	dark := body()
	h.send(tea.BackgroundColorMsg{Color: color.White}) // a light terminal
	if h.m.detail.built.dark || body() == dark {
		t.Fatal("the body kept the dark palette's styling on a light terminal")
	}

	// A resize cuts the same body to the new width without building it.
	built = h.m.detail.built
	h.send(tea.WindowSizeMsg{Width: 50, Height: 40})
	if !h.m.detail.built.same(&built) || h.m.detail.wrapped != 50 {
		t.Fatalf("a resize rebuilt the body (or did not rewrap it: %d)", h.m.detail.wrapped)
	}
}
