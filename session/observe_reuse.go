package session

import (
	"strconv"
	"strings"
	"time"

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

// modernFor reports whether r is judged by the modern era's rules: a
// host's request by its own era (a proxy may see hosts of either, one
// after another: a modern request carries its version in _meta, a legacy
// one none), any other by the connection's.
func (t *Tracker) modernFor(r *Request) bool {
	if r != nil && r.ByHost {
		return r.hostModern
	}
	return t.conn.Era == event.EraModern
}

// hostMayUse reports whether the host's request m may use its ID, and,
// when a finished request had it, retires that one's ID. A duplicate is
// a request in flight with that ID, or, in the legacy era, one of the
// same session (or evicted from it): dup. A request of an earlier session
// still in flight with that ID is no fault of the host's (the sessions
// may be two hosts'), but the tracker follows one request per ID: the new
// one is not followed, and note says so.
func (t *Tracker) hostMayUse(m *wire.Message, sessionID string, at time.Time) (ok bool, note string) {
	id := m.ID
	// The request's own era rules: a proxy may see a legacy host after a
	// modern one, and a modern request carries its version in _meta.
	modern := modernMessage(m)
	old, dup := t.byID[id]
	if !dup {
		return !t.wasEvictedIn(id, sessionID) || modern, ""
	}
	if !old.ByHost {
		return false, ""
	}
	// Another session's (both known: an HTTP proxy's hosts; requests of
	// two eras are two hosts'), or the host began a new one since (its
	// initialize).
	other := otherSession(sessionID, old.hostSession) || old.hostModern != modern
	sameSession := sessionID != "" && sessionID == old.hostSession
	newSession := other || m.Method == wire.MethodInitialize || (!sameSession && old.seq < t.hostSession)
	if old.State.IsActive() {
		if other || (newSession && !modern) {
			return false, "the host's " + m.Method + " " + id.String() + " has the ID of " + old.Method +
				", still in flight from another session or POST (another host, or this one using the ID again): it is forwarded, not followed (one request per ID is followed)"
		}
		return false, ""
	}
	if !modern && !newSession {
		return false, ""
	}
	t.retireHostID(old, at)
	return true, ""
}

// maxHostSessions bounds the host sessions whose evicted IDs are kept.
const maxHostSessions = 1024

// otherSession reports whether a and b are two host sessions, both known.
func otherSession(a, b string) bool { return a != "" && b != "" && a != b }

// PostSession begins the session name the HTTP proxy gives a modern
// host's POST ("post 17"; proxy/http.go): the modern era has no sessions,
// and each exchange is its own (its cancel is closing its own stream), so
// two modern hosts using one ID at once are told apart. A legacy POST
// without an Mcp-Session-Id (an initialize, a stateless server's host)
// has no session known: its cancel is another POST.
const PostSession = "post "

// retireHostID renames old, a finished host request, so that its ID is
// free for the host's next request with it.
func (t *Tracker) retireHostID(old *Request, at time.Time) {
	if t.retired == nil {
		t.retired = map[string]int{}
	}
	from := old.ID
	// The integer 3 and the string "3" are two IDs with one text: a name
	// already taken is skipped (found in review).
	base := strings.Trim(from.String(), `"`)
	var to wire.ID
	for {
		t.retired[base]++
		if to = wire.StringID(base + "·" + strconv.Itoa(t.retired[base])); t.byID[to] == nil {
			break
		}
	}
	delete(t.byID, from)
	t.byID[to] = old
	old.ID = to
	t.changes.add(Change{Kind: ChangeRenamed, ID: to, Was: from, At: at})
	for _, k := range []rawKind{rawRequest, rawResponse, rawTaskOutcome} {
		t.raw.rename(rawKey{from, k}, rawKey{to, k})
	}
	if t.tokens[old.ProgressToken] == old {
		delete(t.tokens, old.ProgressToken)
	}
	// What the log and the violations say of it (the entry being
	// written now, t.curLog, is the new request's), newest first, back to
	// a little before it began: nothing older can be its, and a host that
	// reuses an ID on every request must not pay a walk of the whole log
	// each time. (Entries come in nearly time order; a closure, reported
	// 250ms late with its own time, is the latest out of order.)
	// (A flag raised at the end of a resumption wait carries the
	// closure's time, a late window earlier than it was written.)
	since := old.Created.Add(-renameMargin - t.resumeWait(old))
	for i := t.log.ring.len() - 1; i >= 0; i-- {
		e := t.log.ring.at(i)
		if e.Time.Before(since) {
			break
		}
		if e.ID == from && !(t.curLog >= 0 && &t.log.ring.buf[t.curLog] == e) {
			e.ID = to
		}
	}
	for i := t.violations.ring.len() - 1; i >= 0; i-- {
		v := t.violations.ring.at(i)
		if v.Time.Before(since) {
			break
		}
		if v.RequestID == from {
			v.RequestID = to
		}
	}
}

// renameMargin is how far before a renamed request began its log entries
// are looked for.
const renameMargin = 10 * time.Second
