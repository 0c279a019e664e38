package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// logLevels are the syslog levels a client may ask a server to log at
// (server/utilities/logging.mdx), least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// parseLogLevel reads a log level as the user typed it: one of logLevels,
// or "none" (or "off", or nothing) for a request that asks for no logs.
func parseLogLevel(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "", "none", "off":
		return "", nil
	}
	for _, l := range logLevels {
		if s == l {
			return s, nil
		}
	}
	return "", fmt.Errorf("log level: %q is not one of %s or none", s, strings.Join(logLevels, ", "))
}

// fmtLogLevel is a level as the composer shows it.
func fmtLogLevel(l string) string {
	if l == "" {
		return "none"
	}
	return l
}

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
// last set (the command it returns sends it, a request of its own). A
// request of the client's own housekeeping is left as it is.
func (m *Model) withLogLevel(method string, params json.RawMessage, level string) (json.RawMessage, tea.Cmd) {
	if method == wire.MethodLoggingSetLevel {
		return params, nil
	}
	info, ok := m.tracker.Conn()
	if !ok {
		return params, nil
	}
	if info.Era == event.EraModern {
		if level == "" {
			return params, nil
		}
		if p, err := wire.SetMeta(params, map[string]any{wire.MetaLogLevel: level}); err == nil {
			return p, nil
		}
		return params, nil
	}
	if level == "" || level == m.legacyLogLevel || !serverLogs(info) {
		return params, nil
	}
	m.legacyLogLevel = level
	lp, _ := json.Marshal(map[string]string{"level": level})
	return params, m.send(wire.MethodLoggingSetLevel, lp, session.RequestOptions{})
}

// sendLogged sends a request asking for logs at level: a legacy
// logging/setLevel, when one is needed, goes first.
func (m *Model) sendLogged(method string, params json.RawMessage, opts session.RequestOptions, level string) tea.Cmd {
	params, set := m.withLogLevel(method, params, level)
	cmd := m.send(method, params, opts)
	return inOrder(set, cmd)
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

// composerLogLevel is the level requests ask for now: the composer's once
// it was opened, --log-level before.
func (m *Model) composerLogLevel() string {
	if m.composer.timeout != 0 {
		return m.composer.logLevel
	}
	return m.opts.LogLevel
}

// ParseLogLevel reads a --log-level flag: a level, or none.
func ParseLogLevel(s string) (string, error) { return parseLogLevel(s) }
