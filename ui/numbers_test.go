package ui

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// longNumber is a run of digits no sane number on screen has.
var longNumber = regexp.MustCompile(`[0-9]{25,}`)

// Issue 14 item 10: progress of 1e308 printed as 309 digits and its
// percentage as +Inf%. Every number a server sends is shown bounded, in the
// list's progress cell and in the detail's facts, and the violation is
// flagged.
func TestHugeProgressIsShownBounded(t *testing.T) {
	for _, c := range []struct {
		name         string
		value, total float64
		want         []string
	}{
		{"value far past its total", 1e308, 100, []string{"100%"}},
		{"vanishing total", 1, 1e-300, []string{"100%"}},
		{"a fraction past every bound", 1e308, 1e-300, []string{"100%"}},
		{"huge total", 1, 1.7e308, []string{"0%"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 120, 60) // tall enough for the detail's violations
			h.connect()
			id := h.sendTool("slow")
			h.progress(id, c.value, c.total, "working")
			list := h.screen()
			h.key("enter")
			detail := h.screen()
			for _, scr := range []string{list, detail} {
				if strings.Contains(scr, "Inf") || strings.Contains(scr, "NaN") || longNumber.MatchString(scr) {
					t.Errorf("an unbounded number on screen:\n%s", scr)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(list, w) {
					t.Errorf("the list does not show %q:\n%s", w, list)
				}
			}
			if !strings.Contains(list, "1 violation") {
				t.Errorf("the violation is not flagged:\n%s", list)
			}
			if !strings.Contains(detail, "progress_out_of_range") {
				t.Errorf("the detail does not name the violation:\n%s", detail)
			}
		})
	}
	// Without a total, the value itself is shown, bounded.
	h := newHarness(t, 120, 24)
	h.connect()
	id := h.sendTool("slow")
	h.progressNoTotal(id, 1e308)
	if scr := h.screen(); !strings.Contains(scr, "1e+308") {
		t.Errorf("the value is not shown bounded:\n%s", scr)
	}
}

// progressNoTotal reports progress without a total.
func (h *harness) progressNoTotal(id int64, v float64) {
	h.t.Helper()
	params, _ := json.Marshal(map[string]any{"progressToken": id, "progress": v})
	raw := wire.Notification(wire.NotifyProgress, params)
	msg, _ := wire.Decode(raw)
	p, _ := wire.DecodeProgress(msg.Params)
	h.events(event.Event{Kind: event.Received, Raw: raw, Msg: msg, Progress: &p})
}
