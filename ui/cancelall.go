package ui

import (
	"fmt"

	"inflight/ui/look"

	tea "charm.land/bubbletea/v2"
)

// declineAfterAll runs cancels one after another, then declines qs: as
// for c, the server learns that its calls are abandoned before it reads
// the declines. Their messages are delivered as a batch.
func declineAfterAll(cancels []tea.Cmd, qs []*serverQuestion) tea.Cmd {
	if len(qs) == 0 {
		return tea.Batch(cancels...)
	}
	decline := declineCmd(qs)
	return func() tea.Msg {
		var out tea.BatchMsg
		for _, c := range cancels {
			if msg := c(); msg != nil {
				out = append(out, func() tea.Msg { return msg })
			}
		}
		decline()
		if len(out) == 0 {
			return nil
		}
		return out
	}
}

// cancelAllStatus says what X did: n requests cancelled, declined of the
// server's questions declined.
func cancelAllStatus(n, declined int) string {
	s := fmt.Sprintf("cancelling %d %s", n, look.CountNoun(n, "request", "requests"))
	if declined > 0 {
		s += fmt.Sprintf("; %d %s of the server declined", declined, look.CountNoun(declined, "question", "questions"))
	}
	return s
}
