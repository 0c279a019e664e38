package session

import (
	"testing"

	"inflight/event"
)

// TestCancelledErrorCode: an error answering a cancelled request is
// flagged apart from an ordinary late answer when its code is no
// JSON-RPC code (python-sdk v1 answers {"code":0,"message":"Request
// cancelled"}); a reserved code or the well-known RequestCancelled is
// only late. A timely error with code 0 is the request's own.
func TestCancelledErrorCode(t *testing.T) {
	for _, c := range []struct {
		name    string
		code    int
		flagged bool
	}{
		{"code 0", 0, true},
		{"an application code", 5, true},
		{"below the reserved range", -40000, true},
		{"internal error", -32603, false},
		{"RequestCancelled", -32800, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newStdio(t, event.EraLegacy)
			r := h.begin(0, "tools/call", `{"name":"slow"}`)
			h.cancel(100, r, CauseUser)
			h.cancelSent(100, r, event.SignalNotification)
			h.recv(400, rpcError(1, c.code, "Request cancelled"))
			expect(t, "late", r.Late.Response, true)
			n := h.tr.Violations().Count(ViolationCancelledErrorCode)
			if (n == 1) != c.flagged {
				t.Errorf("%s violations = %d, flagged want %v", ViolationCancelledErrorCode, n, c.flagged)
			}
		})
	}
	h := newStdio(t, event.EraLegacy)
	h.begin(0, "tools/call", `{"name":"slow"}`)
	h.recv(400, rpcError(1, 0, "failed"))
	expect(t, "a timely error's code is its own", h.tr.Violations().Count(ViolationCancelledErrorCode), 0)
}
