package question

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/ui/screen"
)

// RowKey is what msg does on s, one of the server's requests, wherever
// keys act on it: in its detail, or on its row in the list (inList).
// asks says whether s waits for the user's answer. a answers it (Answer),
// and so does enter on its row when it asks; enter on its row otherwise
// opens its detail (Open); c and C decline it (Decline); the keys that
// act only on inflight's own requests say so rather than do nothing
// (screen.Status). Any other key is nil: RowKey leaves it alone.
func RowKey(env screen.Env, s *session.ServerRequest, msg tea.KeyPressMsg, inList, asks bool) screen.Action {
	k := env.Keys
	what := "↘ " + env.Line(s.Method) + " is the server's request"
	enter := inList && msg.String() == "enter"
	switch {
	case pressed(msg, k.Answer) || (enter && asks):
		if !asks {
			return info(what + ", " + Fate(s, asks) + ": nothing to answer")
		}
		return Answer{Request: s}
	case enter:
		return Open{Request: s}
	case pressed(msg, k.Cancel) || pressed(msg, k.CancelReason):
		// The natural cancel of a question is to decline it (its request,
		// if any, goes on: c on that row cancels it).
		if !asks {
			return info(what + ", " + Fate(s, asks) + ": there is nothing to decline")
		}
		return Decline{Request: s}
	case pressed(msg, k.Reissue) || pressed(msg, k.Edit):
		return info(what + ": only inflight's own requests can be re-issued")
	case pressed(msg, k.StopWatching), pressed(msg, k.Longer), pressed(msg, k.Shorter):
		return info(what + ": inflight runs no timeout or watch on it (the server times out its own)")
	case pressed(msg, k.Copy), pressed(msg, k.Pager), pressed(msg, k.Editor):
		if inList {
			return info(what + ": enter shows its params in the detail")
		}
		return info(what + ": its params are in this view; y, o and O work on inflight's own requests")
	}
	return nil
}

// pressed reports whether msg is one of b's keys, enabled or not: the
// key map disables the keys that act on inflight's own requests while one
// of the server's is selected, and they still say why they do nothing.
func pressed(msg tea.KeyPressMsg, b key.Binding) bool {
	for _, k := range b.Keys() {
		if msg.String() == k {
			return true
		}
	}
	return false
}

func info(text string) screen.Status { return screen.Status{Level: screen.Info, Text: text} }
