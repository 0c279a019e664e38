package session

import (
	"encoding/json"

	"inflight/wire"
)

// logParams is what the tracker reads of a notifications/message.
type logParams struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger"`
	Data   json.RawMessage `json:"data"`
	Meta   struct {
		ProgressToken *wire.ID `json:"progressToken"`
	} `json:"_meta"`
}

// logLevels ranks the syslog levels notifications/message uses, least
// severe first.
var logLevels = map[string]int{"debug": 1, "info": 2, "notice": 3, "warning": 4, "error": 5, "critical": 6, "alert": 7, "emergency": 8}

// logOwner is the request a log line that came on no request's stream
// belongs to, and how that is known; nil when it cannot be told. A
// stdio server (or a legacy HTTP server's GET stream) sends its lines
// with nothing that names a request, so with several requests in flight
// the tracker ties a line only by what singles one out: the only request
// in flight; the progress token its _meta names; its logger, when that
// is the name of exactly one request in flight (a server that logs under
// the tool's name, as the demo's chatty does); or the only request in
// flight that asked for lines at its level. Anything else is untied,
// counted, and never guessed.
func (t *Tracker) logOwner(m *logParams) (*Request, TiedBy) {
	if r := t.onlyInFlight(); r != nil {
		return r, TiedOnly
	}
	if tok := m.Meta.ProgressToken; tok != nil {
		if r := t.byToken(*tok); r != nil && r.IsActive() && !r.ByHost {
			return r, TiedProgressToken
		}
	}
	if r := t.onlyActive(func(r *Request) bool { return m.Logger != "" && r.Target == m.Logger }); r != nil {
		return r, TiedLogger
	}
	level, known := logLevels[m.Level]
	asked := func(r *Request) bool {
		want, ok := logLevels[r.Conv.levelAsked()]
		return ok && (!known || level >= want)
	}
	if r := t.onlyActive(asked); r != nil {
		return r, TiedLevel
	}
	return nil, TiedNone
}

// onlyActive is the one request in flight of the user's own (as
// onlyInFlight counts them) for which match holds; nil when none or
// several do.
func (t *Tracker) onlyActive(match func(*Request) bool) *Request {
	var only *Request
	for _, r := range t.active {
		if r.Role != RoleNone || r.listen || r.ByHost || !match(r) {
			continue
		}
		if only != nil {
			return nil
		}
		only = r
	}
	return only
}

// levelAsked is the log level the request asked for ("" when none, or
// for a request with no conversation).
func (c *Conversation) levelAsked() string {
	if c == nil {
		return ""
	}
	return c.LogLevel
}
