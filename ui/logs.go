package ui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/session"
	"inflight/ui/composer"
	"inflight/wire"
)

// serverLogs reports whether the connection's server declared the logging
// capability (it must, to accept logging/setLevel).
func serverLogs(info event.ConnInfo) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(info.Capabilities, &caps) != nil {
		return false
	}
	_, ok := caps["logging"]
	return ok
}

// withLogLevel asks for the server's log lines at level for a request
// about to be sent: in the modern era in the request's _meta
// (io.modelcontextprotocol/logLevel); in the legacy era the level is the
// connection's, set with logging/setLevel when it differs from the one
// last set (set is the level to set first, with a request of its own;
// "" when none is needed). A request of the client's own housekeeping is
// left as it is.
func (c *connection) withLogLevel(t *session.Tracker, method string, params json.RawMessage, level string) (json.RawMessage, string) {
	if method == wire.MethodLoggingSetLevel {
		return params, ""
	}
	info, ok := t.Conn()
	if !ok {
		return params, ""
	}
	if info.Era == event.EraModern {
		if level == "" {
			return params, ""
		}
		if p, err := wire.SetMeta(params, map[string]any{wire.MetaLogLevel: level}); err == nil {
			return p, ""
		}
		return params, ""
	}
	if level == "" || level == c.legacyLogLevel || !serverLogs(info) {
		return params, ""
	}
	c.legacyLogLevel = level
	return params, level
}

// sendLogged sends a request asking for logs at level: a legacy
// logging/setLevel, when one is needed, goes first.
// setLogLevel sends logging/setLevel at level ("": nothing to send).
func (m *Model) setLogLevel(level string) tea.Cmd {
	if level == "" {
		return nil
	}
	lp, _ := json.Marshal(map[string]string{"level": level})
	return m.send(wire.MethodLoggingSetLevel, lp, session.RequestOptions{})
}

func (m *Model) sendLogged(method string, params json.RawMessage, opts session.RequestOptions, level string) tea.Cmd {
	params, set := m.conn.withLogLevel(m.tracker, method, params, level)
	cmd := m.send(method, params, opts)
	return inOrder(m.setLogLevel(set), cmd)
}

// inOrder runs a, then b, in one command: a logging/setLevel reaches the
// client before the request it is for. Their messages (a send that
// failed) are delivered as a batch.
func inOrder(a, b tea.Cmd) tea.Cmd {
	if a == nil || b == nil {
		return tea.Batch(a, b)
	}
	return func() tea.Msg {
		var out tea.BatchMsg
		for _, c := range []tea.Cmd{a, b} {
			if msg := c(); msg != nil {
				out = append(out, func() tea.Msg { return msg })
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
}

// ParseLogLevel reads a --log-level flag: a level, or none.
func ParseLogLevel(s string) (string, error) { return composer.ParseLogLevel(s) }
