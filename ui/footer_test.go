package ui

import (
	"testing"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"inflight/keymap"
)

// The footer measures each candidate line on its words instead of drawing
// it: the measure must be the width bubbles draws it in, in every state,
// or the footer would choose a line that does not fit.
func TestShortHelpWidthIsTheDrawnWidth(t *testing.T) {
	h := help.New()
	for _, st := range []keymap.State{
		{Mode: keymap.ModeList},
		{Mode: keymap.ModeList, HasSelection: true, HasRequests: true, Connected: true, AnyActive: true, SelectedActive: true},
		{Mode: keymap.ModeList, HasRequests: true, Waterfall: true},
		{Mode: keymap.ModeDetail, HasSelection: true, Connected: true},
		{Mode: keymap.ModeLog, HasEntry: true},
		{Mode: keymap.ModeList, Lost: true, HasRequests: true},
	} {
		k := keymap.Default()
		k.SetState(st)
		for _, line := range [][]key.Binding{k.ShortHelp(), k.CompactHelp(), k.EssentialHelp(), k.BareHelp()} {
			if got, want := shortHelpWidth(line, lipgloss.Width(h.ShortSeparator)), lipgloss.Width(h.ShortHelpView(line)); got != want {
				t.Errorf("%+v: measured %d, drawn %d", st, got, want)
			}
		}
	}
}
