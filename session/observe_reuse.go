package session

import (
	"strconv"
	"strings"

	"inflight/event"
	"inflight/wire"
)

// A host may use an ID again where the spec allows it: in the modern era
// an ID must only differ from those of the sender's requests still in
// flight; in the legacy era it must be new within the session, and a host
// that connects again (a new initialize: a restarted Claude Desktop, the
// next `inflight call` through an HTTP proxy) begins a new session, whose
// IDs start over. Such a reuse is no fault of the host's. The finished
// request that had the ID keeps everything kept about it — its row, its
// log entries, its raw bytes, its violations — under a name of its own,
// "ID·N" (N: the how-manyth request with that ID it was), and the ID names
// the new request from then on.

// hostMayUse reports whether the host's request m may use its ID, and,
// when a finished request had it, retires that one's ID. A duplicate is
// a request in flight with that ID, or, in the legacy era, one of the
// same session (or evicted from it): dup. A request of an earlier session
// still in flight with that ID is no fault of the host's (the sessions
// may be two hosts'), but the tracker follows one request per ID: the new
// one is not followed, and note says so.
func (t *Tracker) hostMayUse(m *wire.Message) (ok bool, note string) {
	id := m.ID
	// The request's own era rules (a proxy may see a modern host after a
	// legacy one), else the connection's.
	modern := modernMessage(m) || t.conn.Era == event.EraModern
	old, dup := t.byID[id]
	if !dup {
		return !t.wasEvicted(id) || modern, ""
	}
	if !old.ByHost {
		return false, ""
	}
	newSession := m.Method == wire.MethodInitialize || old.seq < t.hostSession
	if old.State.IsActive() {
		if newSession && !modern {
			return false, "the host's " + m.Method + " " + id.String() + " has the ID of " + old.Method +
				", still in flight from an earlier session: it is forwarded, not followed (one request per ID is followed)"
		}
		return false, ""
	}
	if !modern && !newSession {
		return false, ""
	}
	t.retireHostID(old)
	return true, ""
}

// retireHostID renames old, a finished host request, so that its ID is
// free for the host's next request with it.
func (t *Tracker) retireHostID(old *Request) {
	if t.retired == nil {
		t.retired = map[wire.ID]int{}
	}
	t.retired[old.ID]++
	from := old.ID
	to := wire.StringID(strings.Trim(from.String(), `"`) + "·" + strconv.Itoa(t.retired[from]))
	delete(t.byID, from)
	t.byID[to] = old
	old.ID = to
	for _, k := range []rawKind{rawRequest, rawResponse, rawTaskOutcome} {
		t.raw.rename(rawKey{from, k}, rawKey{to, k})
	}
	if t.tokens[old.ProgressToken] == old {
		delete(t.tokens, old.ProgressToken)
	}
	// What the log and the violations say of it (the entry being
	// written now, t.curLog, is the new request's).
	for i := 0; i < t.log.ring.len(); i++ {
		e := t.log.ring.at(i)
		if e.ID == from && !(t.curLog >= 0 && &t.log.ring.buf[t.curLog] == e) {
			e.ID = to
		}
	}
	for i := 0; i < t.violations.ring.len(); i++ {
		if v := t.violations.ring.at(i); v.RequestID == from {
			v.RequestID = to
		}
	}
}
