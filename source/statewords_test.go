package source

import (
	"testing"

	"inflight/session"
)

// A disagreement speaks of states as the list does: the replay's status
// line said "this replay cancel_requested" where the row says cancelling.
func TestStateWordsAreTheLists(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{session.StateCancelRequested.String(), "cancelling"},
		{session.StateTimedOut.String(), "timed out"},
		{session.StateConnectionLost.String(), "connection lost"},
		{session.StateCancelled.String(), "cancelled"},
	} {
		if got := stateWords(c.name); got != c.want {
			t.Errorf("stateWords(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
