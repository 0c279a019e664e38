package composer

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/ui/screen"
)

// Send asks the root to send the composed request, close the composer and
// follow the new request in the list.
type Send struct {
	Method string
	Params json.RawMessage
	// Options are this request's timeouts and late window; LogLevel the
	// level it asks the server to log at ("": no logs).
	Options  session.RequestOptions
	LogLevel string
	// Objection is why the tool's schema refuses the arguments ("" when it
	// does not): the request goes anyway (a probe may mean it), and the
	// status line says so with it, since the answer may be about it.
	Objection string
}

// Fetch asks the root to send a request for a page of one of the lists the
// composer picks from (resources/list, resources/templates/list,
// prompts/list), and then to tell the composer which request it is
// (Asked): its answer comes back through Received.
type Fetch struct {
	Method string
	Params json.RawMessage
	list   catalogList
}

// run is a command as an action (nil for none).
func run(cmd tea.Cmd) screen.Action {
	if cmd == nil {
		return nil
	}
	return screen.Run{Cmd: cmd}
}

// batch is the actions that are not nil, in order: nil when none is left,
// the one when one is.
func batch(acts ...screen.Action) screen.Action {
	var out screen.Batch
	for _, a := range acts {
		if a != nil {
			out = append(out, a)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}
