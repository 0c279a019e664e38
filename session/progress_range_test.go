package session

import (
	"testing"

	"inflight/event"
)

// Issue 14 item 10: a progress of 1e308, a negative one or a total that
// makes any progress an infinite percentage is a violation; sane values,
// including fractions and a progress past its total, are not.
func TestProgressOutOfRange(t *testing.T) {
	cases := []struct {
		name   string
		params string
		flag   bool
	}{
		{"huge progress", `{"progressToken":1,"progress":1e308,"total":100}`, true},
		{"huge progress without a total", `{"progressToken":1,"progress":1e308}`, true},
		{"negative progress", `{"progressToken":1,"progress":-5,"total":100}`, true},
		{"huge total", `{"progressToken":1,"progress":1,"total":1.7976931348623157e308}`, true},
		{"vanishing total", `{"progressToken":1,"progress":1,"total":1e-300}`, true},
		{"negative total", `{"progressToken":1,"progress":1,"total":-1}`, true},
		{"beyond 2^53", `{"progressToken":1,"progress":1e16}`, true},
		{"ordinary", `{"progressToken":1,"progress":50,"total":100}`, false},
		{"a fraction", `{"progressToken":1,"progress":0.25,"total":1}`, false},
		{"past its total", `{"progressToken":1,"progress":150,"total":100}`, false},
		{"zero total (unknown)", `{"progressToken":1,"progress":3,"total":0}`, false},
		{"at 2^53", `{"progressToken":1,"progress":9007199254740992}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newStdio(t, event.EraModern)
			r := h.begin(0, "tools/call", `{"name":"slow"}`)
			h.recv(10, `{"jsonrpc":"2.0","method":"notifications/progress","params":`+c.params+`}`)
			vs := h.tr.Violations()
			got := vs.Count(ViolationProgressOutOfRange)
			if c.flag && (got != 1 || vs.Total() != 1) {
				t.Fatalf("violations = %v, want [%s]", codes(h.tr), ViolationProgressOutOfRange)
			}
			if !c.flag && vs.Total() != 0 {
				t.Fatalf("violations = %v, want none", codes(h.tr))
			}
			if c.flag {
				v := vs.At(0)
				expect(t, "request", v.RequestID, r.ID)
				if len(v.Detail) > 40 {
					t.Errorf("the detail is not bounded: %q", v.Detail)
				}
				expect(t, "flagged", h.tr.At(0).Flagged(), true)
			}
			// The progress is applied as sent: the views bound it.
			expect(t, "count", h.tr.At(0).Progress.Count, 1)
			checkInvariants(t, h.tr)
		})
	}
}
