package proxy

import (
	"strings"
	"testing"
	"time"
)

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		text   string
		want   Rule
		does   string
		errHas string
	}{
		{text: "tools/call slow: delay 30s", want: Rule{Method: "tools/call", Name: "slow", Action: ActDelay, After: 30 * time.Second}, does: "delay 30s"},
		{text: "  tools/call   stubborn :hold ", want: Rule{Method: "tools/call", Name: "stubborn", Action: ActHold}, does: "hold"},
		{text: "tools/call: drop", want: Rule{Method: "tools/call", Action: ActDrop}, does: "drop"},
		{text: "tools/call *: race", want: Rule{Method: "tools/call", Action: ActRace}, does: "race"},
		{text: "*: cancel", want: Rule{Method: "*", Action: ActCancel}, does: "cancel"},
		{text: "tools/call slow: cancel 1.5s", want: Rule{Method: "tools/call", Name: "slow", Action: ActCancel, After: 1500 * time.Millisecond}, does: "cancel 1.5s"},
		{text: "tools/call slow: cancel-silent 200ms", want: Rule{Method: "tools/call", Name: "slow", Action: ActCancelSilent, After: 200 * time.Millisecond}, does: "cancel-silent 200ms"},
		// The action follows the last colon: a URI may hold colons.
		{text: "resources/read demo://clock: delay 1m", want: Rule{Method: "resources/read", Name: "demo://clock", Action: ActDelay, After: time.Minute}, does: "delay 1m0s"},
		{text: "initialize: delay 2s", want: Rule{Method: "initialize", Action: ActDelay, After: 2 * time.Second}, does: "delay 2s"},

		{text: "tools/call slow delay 30s", errHas: "no ':' before the action"},
		{text: ": drop", errHas: "no method before ':'"},
		{text: "tools/call a b: drop", errHas: "3 words before ':'"},
		{text: "slow: drop", errHas: `"slow" is not a request method`},
		{text: "notifications/progress: drop", errHas: "is not a request method"},
		{text: "tools/call slow:", errHas: "no action after ':'"},
		{text: "tools/call slow: wait 3s", errHas: `unknown action "wait"`},
		{text: "tools/call slow: delay", errHas: "delay needs one duration"},
		{text: "tools/call slow: delay soon", errHas: `"soon" is not a duration`},
		{text: "tools/call slow: delay -1s", errHas: `"-1s" is not a duration`},
		{text: "tools/call slow: delay 0s", errHas: "delay 0 does nothing"},
		{text: "tools/call slow: hold 3s", errHas: "hold takes no argument"},
		{text: "tools/call slow: cancel 1s 2s", errHas: "cancel takes at most one duration"},
		{text: "initialize: cancel", errHas: "initialize must never be cancelled"},
	} {
		r, err := ParseRule(tc.text)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("ParseRule(%q) = %+v, %v; want an error saying %q", tc.text, r, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tc.text, err)
			continue
		}
		tc.want.Text = strings.TrimSpace(tc.text)
		if r != tc.want || r.Does() != tc.does {
			t.Errorf("ParseRule(%q) = %+v (does %q), want %+v (does %q)", tc.text, r, r.Does(), tc.want, tc.does)
		}
	}
}

func TestParseRulesJoinsErrors(t *testing.T) {
	rules, err := ParseRules([]string{"tools/call a: drop", "x: y", "tools/call b: hold", "tools/call: z"})
	if len(rules) != 2 || err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("ParseRules = %d rules, %v; want 2 and both errors", len(rules), err)
	}
}

func TestMatchFirstRuleWins(t *testing.T) {
	rules, err := ParseRules([]string{"tools/call slow: delay 1s", "tools/call: drop", "*: cancel"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, target, want string
	}{
		{"tools/call", "slow", "delay 1s"},
		{"tools/call", "other", "drop"},
		{"prompts/get", "x", "cancel"},
		// * never cancels initialize.
		{"initialize", "", ""},
	} {
		got := ""
		if r := match(rules, tc.method, tc.target); r != nil {
			got = r.Does()
		}
		if got != tc.want {
			t.Errorf("match(%s %s) = %q, want %q", tc.method, tc.target, got, tc.want)
		}
	}
}
