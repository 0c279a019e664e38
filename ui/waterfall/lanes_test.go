package waterfall

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"inflight/session"
)

// Lanes draws a lane per server on one axis: each server's name, then its
// requests (whose IDs collide across servers), the selected one marked in
// its own lane only.
func TestLanesOnePerServer(t *testing.T) {
	a, b := newRun(t, session.DefaultConfig()), newRun(t, session.DefaultConfig())
	ra := a.call(0, "slow", session.RequestOptions{})
	a.done(400, ra)
	a.call(500, "stubborn", session.RequestOptions{})
	rb := b.call(100, "fast", session.RequestOptions{})
	b.done(200, rb)
	a.now, b.now = at(1000), at(1000)
	env := a.env()
	lanes := []Lane{{Name: "alpha", Env: a.env()}, {Name: "beta", Env: b.env()}}
	screen := ansi.Strip(Lanes(env, lanes, 1, rb.ID, 120, 14))
	lines := strings.Split(screen, "\n")
	if len(lines) != 14 {
		t.Fatalf("%d lines, want 14:\n%s", len(lines), screen)
	}
	if !strings.Contains(lines[0], "waterfall · 2 servers · 3 requests") {
		t.Errorf("title %q", lines[0])
	}
	order := regexp.MustCompile(`(?s)── alpha 2 requests.*\n  \S+\s+1 tools/call slow .*\n  \S+\s+2 tools/call stubborn .*── beta 1 request +\n▌ \S+\s+1 tools/call fast`)
	if !order.MatchString(screen) {
		t.Errorf("lanes not drawn as alpha (1 slow, 2 stubborn) then beta (1 fast, selected):\n%s", screen)
	}
	// One axis: beta's bar, begun 100 ms in, starts right of alpha's.
	col := func(re string) int {
		for _, l := range lines {
			if regexp.MustCompile(re).MatchString(l) {
				for i, r := range []rune(l) {
					if r == '━' || r == '■' {
						return i
					}
				}
			}
		}
		return -1
	}
	if ca, cb := col(`1 tools/call slow`), col(`1 tools/call fast`); ca < 0 || cb <= ca {
		t.Errorf("alpha's bar at %d, beta's at %d: not on one axis", ca, cb)
	}
}
