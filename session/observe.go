package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"inflight/event"
	"inflight/wire"
)

// This file is the tracker seen from the middle: `inflight proxy` sits
// between a host and a server and records the host's requests, which the
// tracker did not begin. Observe takes the proxy's events — Sent for what
// the host wrote to the server, Received for what the server wrote back, as
// inflight's own client would call them — and follows the host's requests
// through the same lifecycle, progress and late judgement as inflight's own
// (crossing.go decides crossed or late for both). What is the host's
// business stays the host's: a host request has no deadline here, since
// only the host knows its timeout, and the tracker never cancels one.
//
// The host's own cancels are judged as they pass. On stdio (the only
// transport the proxy speaks yet) notifications/cancelled is the right
// signal in both eras; what is wrong is what it names, or its absence.

// Violations of the host a proxy watches.
const (
	// ViolationHostCancelledInitialize: the host sent notifications/cancelled
	// for its initialize, which "MUST NOT be cancelled by clients".
	ViolationHostCancelledInitialize = "host_cancelled_initialize"
	// ViolationHostCancelledUnknown: the host cancelled an ID it sent no
	// request with.
	ViolationHostCancelledUnknown = "host_cancelled_unknown_id"
	// ViolationHostAbandoned: the host stopped waiting for a request with
	// no cancel sent for it: it went away (it closed the proxy's stdin),
	// ended its HTTP session (DELETE) or began a new one (initialize).
	ViolationHostAbandoned = "host_abandoned"
	// ViolationHostDuplicateID: the host sent a request with the ID of one
	// it had already sent ("MUST NOT have been previously used by the
	// requestor within the same session"). The second is not tracked.
	ViolationHostDuplicateID = "host_duplicate_id"
)

// Observe applies one event of a proxied connection: Sent is a message the
// host sent the server, Received one the server sent the host (ev.Time is
// when the proxy read it; on stdio ev.StreamEnd is where a server message
// ends in the server's stdout, and, on the host's notifications/cancelled,
// how much the server had written when the proxy passed it on). A host
// request starts being tracked here, pending; a host cancel is judged;
// everything else is Apply's. It returns what changed, as Apply does.
func (t *Tracker) Observe(ev event.Event) []Change {
	t.observing = true
	if ev.Kind != event.Sent || ev.Internal {
		changes := t.Apply(ev)
		if ev.Kind == event.Received && ev.Msg.Kind == wire.KindResult {
			t.observeInitialized(&ev)
		}
		if ev.Kind == event.Received && !ev.Internal {
			switch {
			case ev.Msg.Kind == wire.KindRequest:
				t.questionsSeen = true
				t.observeQuestion(&ev)
			case ev.Msg.IsResponse():
				if r := t.byID[ev.Msg.ID]; r != nil {
					t.serverWorkedOn(r, &ev)
				}
			}
		}
		return changes
	}
	var judge func(*event.Event)
	switch {
	case ev.Msg.Kind == wire.KindRequest:
		judge = t.observeRequest
	case ev.Msg.Kind == wire.KindNotification && ev.Msg.Method == wire.NotifyCancelled:
		judge = t.hostCancel
	case ev.Msg.IsResponse():
		judge = t.observeAnswer
	default:
		return t.Apply(ev)
	}
	t.changes.reset()
	t.curLog = t.log.append(&ev)
	judge(&ev)
	t.curLog = -1
	return t.changes.buf
}

// observeRequest starts tracking a request the host sent.
func (t *Tracker) observeRequest(ev *event.Event) {
	m := &ev.Msg
	id := m.ID
	t.observeEra(m)
	if ok, note := t.hostMayUse(m, ev.SessionID, ev.Time); !ok {
		if note != "" {
			t.log.append(&event.Event{Kind: event.Note, Time: ev.Time, Text: note})
			t.unfollowed(m, ev.SessionID)
			return
		}
		t.violate(ViolationHostDuplicateID, "the host sent another request with ID "+id.String()+
			", which it had already used; inflight follows the first", nil, id, ev)
		return
	}
	var token wire.ID
	if raw, ok := wire.MetaValue(m.Params, wire.MetaProgressToken); ok {
		if tok, err := wire.ParseID(raw); err == nil {
			token = tok
		}
	}
	t.lastID++
	r := &Request{
		ID:            id,
		Method:        m.Method,
		Target:        wire.Target(m.Method, m.Params),
		ProgressToken: token,
		ByHost:        true,
		Created:       ev.Time,
		Sent:          ev.Time,
		State:         StatePending,
		LateWindow:    t.cfg.LateWindow,
		seq:           t.lastID,
		listen:        m.Method == wire.MethodSubscriptionsListen,
		hostModern:    modernMessage(m),
		hostSession:   ev.SessionID,
	}
	if m.Method == wire.MethodInitialize && !r.hostModern && t.conn.Transport == event.TransportStdio {
		// A new session on the one host's stdio (over HTTP sessions
		// without IDs may be two hosts'): what the old one left in
		// flight is abandoned.
		for _, o := range t.hist {
			if abandonable(o) && o.hostSession == ev.SessionID && !o.hostModern {
				t.hostAbandoned(o, "began a new session (initialize)", ev)
			}
		}
	}
	t.byID[id] = r
	if m.Method == wire.MethodInitialize {
		t.hostSession = r.seq
		delete(t.hostEvicted, ev.SessionID) // a new session's IDs start over
	}
	if !token.IsZero() && token != id {
		if t.tokens == nil {
			t.tokens = map[wire.ID]*Request{}
		}
		t.tokens[token] = r
		// A host may use a token again once its request is over, and
		// that request's ID may be the token: the token is this one's now.
		if prev := t.byID[token]; prev != nil && prev.ProgressToken == token && !prev.State.IsActive() {
			prev.tokenTaken = true
		}
	}
	t.hist = append(t.hist, r)
	r.activePos = int32(len(t.active))
	t.active = append(t.active, r)
	t.counts.InFlight++
	t.raw.put(rawKey{id, rawRequest}, ev.Raw)
	t.evict()
	t.boundFollowed()
}

// hostCancel judges a notifications/cancelled the host sent.
func (t *Tracker) hostCancel(ev *event.Event) {
	c, err := wire.DecodeCancelled(ev.Msg.Params)
	if err != nil {
		t.violate(ViolationMalformedMessage, "the host's "+err.Error(), nil, wire.ID{}, ev)
		return
	}
	t.log.ring.buf[t.curLog].ID = c.RequestID
	r := t.byID[c.RequestID]
	if r != nil && otherSession(cancelSession(ev.SessionID), r.hostSession) {
		// Another host session's cancel of its own request with this ID
		// (over, or not followed): not this one's.
		return
	}
	switch {
	case r == nil && (t.wasEvictedIn(c.RequestID, cancelSession(ev.SessionID)) || t.wasDropped(c.RequestID)):
		// Old news about a request long settled, or no longer followed.
	case r == nil:
		t.violate(ViolationHostCancelledUnknown, "the host cancelled "+c.RequestID.String()+
			", an ID it sent no request with", nil, c.RequestID, ev)
	case r.Method == wire.MethodInitialize:
		t.violate(ViolationHostCancelledInitialize, "the host cancelled its initialize "+r.ID.String()+
			", which must never be cancelled", r, r.ID, ev)
	case r.State.IsFinal():
		// A cancel that crossed the answer the spec expects; one long
		// after it passed is the host's.
		t.hostCancelledAnswered(r, ev)
	case r.State == StateCancelRequested:
		// A second cancel changes nothing.
	default:
		t.beginCancel(r, c.Reason, CauseHost, ev.Time)
		r.Cancel.Signal = event.SignalNotification
		r.Cancel.SignalAt = ev.Time
		r.Cancel.SignalStreamEnd = ev.StreamEnd
		t.hostGaveUp(r, "cancelled", c.Reason, ev.Time, ev)
	}
}

// HostGone records that the host went away at now (it closed the proxy's
// stdin): every request it left in flight without cancelling it is
// flagged, since the server was never told that its answer is no longer
// wanted. (An initialize is not: it must never be cancelled.) The requests
// stay as they are until the server's end closes the connection.
func (t *Tracker) HostGone(now time.Time) []Change {
	t.changes.reset()
	ev := event.Event{Time: now}
	for _, r := range t.hist {
		if abandonable(r) {
			t.hostAbandoned(r, "went away", &ev)
		}
	}
	return t.changes.buf
}

// modernMessage reports whether a host's request carries a modern
// protocol version in its _meta.
func modernMessage(m *wire.Message) bool {
	raw, ok := wire.MetaValue(m.Params, wire.MetaProtocolVersion)
	var v string
	return ok && json.Unmarshal(raw, &v) == nil && wire.IsModernVersion(v)
}

// observeEra learns the era from the host's first request that shows it:
// a modern request carries its protocol version in _meta.
func (t *Tracker) observeEra(m *wire.Message) {
	raw, ok := wire.MetaValue(m.Params, wire.MetaProtocolVersion)
	if !ok {
		return
	}
	var v string
	if json.Unmarshal(raw, &v) != nil || !wire.IsModernVersion(v) {
		return
	}
	t.sawEra(event.EraModern, v)
	if t.conn.Era == event.EraUnknown {
		t.conn.Era, t.conn.ProtocolVersion = event.EraModern, v
	}
}

// maxErasSeen bounds the eras and versions a tracker keeps seen: a host
// naming a new version in each request must not grow it.
const maxErasSeen = 4

// sawEra notes that a host spoke era at version (a proxy's hosts may
// differ: one modern, then one legacy).
func (t *Tracker) sawEra(era event.Era, version string) {
	version = clip(version, 64)
	for _, e := range t.erasSeen {
		if e.Era == era && e.Version == version {
			return
		}
	}
	if len(t.erasSeen) < maxErasSeen {
		t.erasSeen = append(t.erasSeen, EraSeen{Era: era, Version: version})
	}
}

// EraSeen is an era and protocol version a host spoke.
type EraSeen struct {
	Era     event.Era
	Version string
}

// ErasSeen are the eras and versions the hosts the tracker observes spoke,
// first seen first (empty before any is known; only an observing
// tracker's, a proxy's, learns them).
func (t *Tracker) ErasSeen() []EraSeen { return t.erasSeen }

// requester names who sent the requests the tracker follows, for the
// words of a violation.
func (t *Tracker) requester() string {
	if t.observing {
		return "the host"
	}
	return "inflight"
}

// observeInitialized learns the legacy era, its version and the server from
// the result of the host's initialize, and the modern server from the
// result of the host's server/discover.
func (t *Tracker) observeInitialized(ev *event.Event) {
	r := t.byID[ev.Msg.ID]
	if r == nil || !r.ByHost {
		return
	}
	if r.Method == wire.MethodDiscover && t.conn.ServerName == "" {
		if raw, ok := wire.MetaValue(ev.Msg.Result, wire.MetaServerInfo); ok {
			var info struct{ Name, Version string }
			if json.Unmarshal(raw, &info) == nil {
				t.conn.ServerName, t.conn.ServerVersion = clip(info.Name, 256), clip(info.Version, 64)
			}
		}
		return
	}
	if r.Method != wire.MethodInitialize || !bytes.Contains(ev.Msg.Result, []byte(`"protocolVersion"`)) {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	if json.Unmarshal(ev.Msg.Result, &res) != nil {
		return
	}
	t.sawEra(event.EraLegacy, res.ProtocolVersion)
	if t.conn.Era != event.EraUnknown {
		return
	}
	t.conn.Era = event.EraLegacy
	t.conn.ProtocolVersion = clip(res.ProtocolVersion, 64)
	t.conn.ServerName = clip(res.ServerInfo.Name, 256)
	t.conn.ServerVersion = clip(res.ServerInfo.Version, 64)
}

// ByProgressToken returns the request a progress token names (a host's
// token need not be its ID), if it is in history.
func (t *Tracker) ByProgressToken(tok wire.ID) (*Request, bool) {
	r := t.byToken(tok)
	return r, r != nil
}

// byToken finds the active or kept request a progress token names (a
// request whose token a later host request took names that one).
func (t *Tracker) byToken(tok wire.ID) *Request {
	if r := t.byID[tok]; r != nil && r.ProgressToken == tok && !r.tokenTaken {
		return r
	}
	return t.tokens[tok]
}

// wasEvictedHost reports whether id is a host request's that history no
// longer keeps. Hosts number their requests upwards (go-sdk's and the
// TypeScript SDK's clients do), so an integer ID up to the largest
// evicted one is taken as evicted; a string ID is never known to be.
func (t *Tracker) wasEvictedHost(id wire.ID) bool {
	if _, kept := t.byID[id]; kept {
		return false
	}
	if _, gone := t.dropped[id]; gone {
		return true
	}
	n, ok := id.Int()
	if !ok {
		return false
	}
	for _, max := range t.hostEvicted {
		if n <= max {
			return true
		}
	}
	return false
}

// wasEvictedIn is wasEvictedHost within one host session ("" where none
// is known): another session's IDs are its own (found in review).
func (t *Tracker) wasEvictedIn(id wire.ID, sessionID string) bool {
	if _, kept := t.byID[id]; kept {
		return false
	}
	n, ok := id.Int()
	return ok && n > 0 && n <= t.hostEvicted[sessionID]
}

// forgetHost drops what only a host request has.
func (t *Tracker) forgetHost(r *Request) {
	if t.tokens[r.ProgressToken] == r {
		delete(t.tokens, r.ProgressToken)
	}
	// A modern POST's own session ("post N") is no one's to reuse IDs
	// in: its evicted IDs count as of no known session.
	s := cancelSession(r.hostSession)
	if n, ok := r.ID.Int(); ok && n > t.hostEvicted[s] {
		if t.hostEvicted == nil || len(t.hostEvicted) >= maxHostSessions {
			t.hostEvicted = map[string]int64{} // bounded: the oldest sessions' go
		}
		t.hostEvicted[s] = n
	}
}

// cancelSession is the host session a message POSTed apart from the
// request it names tells: a modern POST's own ("post N") tells none (a
// modern host's notifications/cancelled comes in a POST of its own).
func cancelSession(s string) string {
	if strings.HasPrefix(s, PostSession) {
		return ""
	}
	return s
}

// maxUnfollowed bounds the progress tokens of requests not followed.
const maxUnfollowed = 1024

// unfollowed remembers the progress token of a host request the tracker
// does not follow (another's with its ID is in flight), so that its
// progress is not the server's fault (unknown_progress_token).
func (t *Tracker) unfollowed(m *wire.Message, sessionID string) {
	raw, ok := wire.MetaValue(m.Params, wire.MetaProgressToken)
	if !ok {
		return
	}
	tok, err := wire.ParseID(raw)
	if err != nil {
		return
	}
	if t.unfollowedTokens == nil || len(t.unfollowedTokens) >= maxUnfollowed {
		t.unfollowedTokens = map[wire.ID]string{}
	}
	t.unfollowedTokens[tok] = sessionID
}
