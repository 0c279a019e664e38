package session

import (
	"inflight/event"
	"inflight/wire"
)

// Violations the client reports as facts of its own (an event kind), which
// the tracker judges here. Kept apart from violation.go so that adding one
// touches only Apply's dispatch.
const (
	// ViolationServerRequestFlood: a legacy server had more of its own
	// requests waiting for inflight's answer than inflight allows, so one
	// was refused with a JSON-RPC error (event.ServerRequestRefused). A
	// server that floods requests (issue 14, item 5) is not waiting for
	// answers the way the protocol expects of a peer.
	ViolationServerRequestFlood = "server_request_flood"
)

// onServerRequestRefused records the refusal of a server's request. The
// server's request ID is its own, not one of ours, so the violation is
// attributed to no request.
func (t *Tracker) onServerRequestRefused(ev *event.Event) {
	t.violate(ViolationServerRequestFlood, ev.Text, nil, wire.ID{}, ev)
}
