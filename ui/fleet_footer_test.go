package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/keymap"
	"inflight/ui/list"
)

// fleetOf is a fleet over harnesses' models (already connected), named
// as given, sized w×h.
func fleetOf(t *testing.T, w, h int, names []string, hs ...*harness) *Fleet {
	t.Helper()
	f := &Fleet{zoom: -1, spoke: -1, keys: keymap.Default(), list: list.NewMerged(), opts: FleetOptions{Now: func() time.Time { return hs[0].now }}}
	f.theme.set(true)
	for i, h := range hs {
		f.members = append(f.members, &member{name: names[i], m: h.m})
	}
	f.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return f
}

// lastLine is the frame's footer.
func lastLine(f *Fleet) string {
	lines := strings.Split(ansi.Strip(f.frame()), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

// The merged list's footer is the selected row's keys as that server's
// own list enables them: c on a request in flight, not on a finished one
// (where enter and l still act), and the merged list's f and /; at 80
// columns the keys without which one is stuck (? help, q quit) stay. The
// header counts one server in the singular.
func TestFleetFooterFollowsTheSelectedRow(t *testing.T) {
	h := newHarness(t, 120, 30)
	h.connect()
	id := startSlow(h)
	f := fleetOf(t, 120, 30, []string{"alpha"}, h)
	foot := lastLine(f)
	for _, want := range []string{"c cancel", "enter details", "f filter", "/ search servers", "v lanes", "? help", "q quit"} {
		if !strings.Contains(foot, want) {
			t.Errorf("footer on a request in flight lacks %q: %q", want, foot)
		}
	}
	if strings.Contains(foot, "new request on its server") {
		t.Errorf("footer still has the fixed line: %q", foot)
	}
	if top := strings.Split(ansi.Strip(f.frame()), "\n")[0]; !strings.Contains(top, "1 server · 2 requests") {
		t.Errorf("header %q, want one server in the singular", top)
	}

	h.answer(id, `{"content":[{"type":"text","text":"done"}]}`)
	f.layout()
	foot = lastLine(f)
	if strings.Contains(foot, "c cancel") {
		t.Errorf("footer offers c on a finished request: %q", foot)
	}
	for _, want := range []string{"enter details", "l protocol log", "? help", "q quit"} {
		if !strings.Contains(foot, want) {
			t.Errorf("footer on a finished request lacks %q: %q", want, foot)
		}
	}

	f.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	foot = lastLine(f)
	if !strings.HasSuffix(foot, "? help • q quit") || strings.Contains(foot, "…") {
		t.Errorf("footer at 80 columns %q, want it whole and ending in ? help • q quit", foot)
	}
}

// Before any server joined (attach --all with no proxy yet), the footer
// offers no key that needs a server or a request.
func TestFleetFooterWithNoServer(t *testing.T) {
	f := &Fleet{zoom: -1, spoke: -1, keys: keymap.Default(), list: list.NewMerged(), opts: FleetOptions{Now: time.Now}}
	f.theme.set(true)
	f.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	foot := lastLine(f)
	for _, no := range []string{"n new", "c cancel", "a answer", "R reconnect"} {
		if strings.Contains(foot, no) {
			t.Errorf("footer with no server offers %q: %q", no, foot)
		}
	}
	if !strings.HasSuffix(foot, "? help • q quit") {
		t.Errorf("footer with no server %q, want it to end in ? help • q quit", foot)
	}
	if top := strings.Split(ansi.Strip(f.frame()), "\n")[0]; !strings.Contains(top, "0 servers · 0 requests") {
		t.Errorf("header %q", top)
	}
}
