package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/ui/composer"
)

// composerText is everything typed into the composer, and what it says
// about the last key.
func composerText(c *composer.Model) string {
	var b strings.Builder
	for k := composer.KindTool; k <= composer.KindRaw; k++ {
		b.WriteString(c.Filter(k) + "|")
	}
	for _, f := range c.Fields() {
		b.WriteString(f.Input.Value() + "|")
	}
	if v, open := c.JSON(); open {
		b.WriteString(v)
	}
	return b.String() + "note:" + c.Note()
}

// issue 10: in no state of the composer does a typed character vanish: it
// lands in a field, the filter or the editor, or the composer says why not.
func TestComposerNothingTypedVanishes(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"tool picker", nil},
		{"tool form", []string{"enter"}},
		{"tool JSON", []string{"enter", "ctrl+e"}},
		{"kind row", []string{"enter", "up"}},
		{"resource picker", []string{"right"}},
		{"resource form", []string{"right", "enter"}},
		{"prompt picker", []string{"right", "right"}},
		{"prompt form", []string{"right", "right", "down", "enter"}},
		{"listen checkbox", []string{"left", "left"}},
		{"listen text", []string{"left", "left", "tab", "tab", "tab"}},
		{"raw", []string{"left"}},
		{"settings checkbox", []string{"left", "tab", "tab", "tab", "tab"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := withCatalog(t, 120, 35, 0)
			for _, k := range c.keys {
				h.key(k)
				answerCatalog(h)
			}
			before := composerText(&h.m.screens.composer)
			h.typeText("q")
			if after := composerText(&h.m.screens.composer); after == before {
				t.Fatalf("q vanished:\n%s", h.screen())
			}
			h.send(tea.PasteMsg{Content: "pasted"})
			if after := composerText(&h.m.screens.composer); !strings.Contains(after, "pasted") && h.m.screens.composer.Note() == "" {
				t.Fatalf("a paste vanished:\n%s", h.screen())
			}
		})
	}
}

// Focus starts in the first field of a kind without a list, and ←/→
// keep switching kinds until something is typed.
func TestComposerFocusStartsInTheFirstField(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "left") // raw
	c := &h.m.screens.composer
	if c.Kind() != composer.KindRaw || c.OnKindRow() || c.Focus() != 0 || !c.Fields()[0].Input.Focused() {
		t.Fatalf("kind %v kindRow %v focus %d", c.Kind(), c.OnKindRow(), c.Focus())
	}
	h.typeText("tools/ca")
	h.key("left", "left") // now they move the cursor
	if c.Kind() != composer.KindRaw {
		t.Fatalf("← in a field with text switched the kind to %v", c.Kind())
	}
	h.typeText("xx")
	if v := c.Fields()[0].Input.Value(); v != "tools/xxca" {
		t.Fatalf("method %q", v)
	}
	// Switching kinds (from the row of kinds) and back keeps the form.
	h.key("up") // the row of kinds
	if !c.OnKindRow() {
		t.Fatal("↑ from the first field did not reach the row of kinds")
	}
	h.key("left", "right")
	if c.Kind() != composer.KindRaw || c.Fields()[0].Input.Value() != "tools/xxca" {
		t.Fatalf("kind %v, method %q after ← →", c.Kind(), c.Fields()[0].Input.Value())
	}
	// Typing on the row of kinds types into the first field.
	if !c.OnKindRow() {
		t.Fatal("not on the row of kinds")
	}
	h.typeText("!")
	if c.OnKindRow() || c.Fields()[0].Input.Value() != "tools/xxca!" {
		t.Fatalf("typed on the row of kinds: row %v, method %q", c.OnKindRow(), c.Fields()[0].Input.Value())
	}
}

// After a raw request, n opens on the tool call again, and the kind being
// composed reads in words on an uncoloured screen: a tool's name typed
// next filters the tools and is never sent as a method.
func TestComposerOpensOnToolCallAfterARawRequest(t *testing.T) {
	for _, w := range []int{120, 80} {
		h := newHarness(t, w, 35)
		h.connect()
		h.key("n", "left") // raw
		if !strings.Contains(h.screen(), "[raw]") && !strings.Contains(h.screen(), "[raw request]") {
			t.Fatalf("at %d the raw kind is not marked in words:\n%s", w, h.screen())
		}
		h.typeText("ping")
		h.key("enter")
		if sent, _ := h.fake.calls(); sent == 0 || h.m.focus.mode == keymap.ModeComposer {
			t.Fatalf("at %d the raw ping was not sent (sent %d, mode %v)", w, sent, h.m.focus.mode)
		}
		h.key("n")
		c := &h.m.screens.composer
		if c.Kind() != composer.KindTool {
			t.Fatalf("at %d n reopened on kind %v after a raw request", w, c.Kind())
		}
		tab := "[tool call]"
		if w < 100 {
			tab = "[tool]"
		}
		if s := h.screen(); !strings.Contains(s, tab) || strings.Contains(s, "[raw") {
			t.Fatalf("at %d the tool kind is not marked %s:\n%s", w, tab, s)
		}
	}
}
