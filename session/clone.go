package session

import (
	"maps"
	"slices"

	"inflight/wire"
)

// Clone returns a deep copy of the tracker: every request, task,
// conversation, server request, log and store is copied, so that applying
// events to the clone changes nothing the original holds, and the other
// way round. A replay keeps clones as checkpoints and plays a trace on
// from the nearest one.
//
// Bytes are shared, not copied: the raw messages, params and results a
// tracker keeps are never written after they are stored (events' bytes are
// immutable once emitted, and the tracker replaces a slice rather than
// write into it), as are a connection's ConnInfo, once applied, and
// errors. Sharing them keeps a checkpoint to the size of the tracker's
// bookkeeping rather than of every message it keeps.
func (t *Tracker) Clone() *Tracker {
	c := *t
	cl := cloner{reqs: make(map[*Request]*Request, len(t.hist)), srv: map[*ServerRequest]*ServerRequest{}}
	c.cfg = t.Config()
	c.hist = cloneList(t.hist, cl.request)
	c.active = cloneList(t.active, cl.request)
	c.byID = cloneMap(t.byID, cl.request)
	c.tasks = cloneMap(t.tasks, cl.request)
	c.tokens = cloneMap(t.tokens, cl.request)
	c.roundOf = cloneMap(t.roundOf, cl.request)
	c.serverOpen = cloneMap(t.serverOpen, cl.server)
	c.serverAbandoned = cloneMap(t.serverAbandoned, cl.server)
	c.serverReqs = cloneList(t.serverReqs, cl.server)
	c.hostEvicted = maps.Clone(t.hostEvicted)
	c.retired = maps.Clone(t.retired)
	c.hostResumes = maps.Clone(t.hostResumes)
	c.unfollowedTokens = maps.Clone(t.unfollowedTokens)
	c.dropped = maps.Clone(t.dropped)
	c.hostQuestions = maps.Clone(t.hostQuestions)
	c.hostAnswered = maps.Clone(t.hostAnswered)
	// The changes buffer is scratch space, reused by the next call: the
	// clone gets its own (holding what the last call returned, as the
	// original's does).
	c.changes.buf = slices.Clone(t.changes.buf)
	c.raw = t.raw.clone()
	c.log = t.log.clone()
	c.stderr.ring = t.stderr.ring.clone()
	c.violations.ring = t.violations.ring.clone()
	c.violations.counts = maps.Clone(t.violations.counts)
	return &c
}

// cloner copies requests and server requests once each, so that every
// place that points at one request points at its one copy.
type cloner struct {
	reqs map[*Request]*Request
	srv  map[*ServerRequest]*ServerRequest
}

func (cl *cloner) request(r *Request) *Request {
	if r == nil {
		return nil
	}
	if c, ok := cl.reqs[r]; ok {
		return c
	}
	c := new(Request)
	*c = *r
	cl.reqs[r] = c
	c.Timeline = slices.Clone(r.Timeline)
	if r.Cancel != nil {
		cn := *r.Cancel
		c.Cancel = &cn
	}
	c.Error = cloneError(r.Error)
	if r.aside != nil {
		as := *r.aside
		c.aside = &as
	}
	if r.Task != nil {
		tk := *r.Task
		tk.History = slices.Clone(r.Task.History)
		tk.LastPollError = cloneError(r.Task.LastPollError)
		tk.CancelError = cloneError(r.Task.CancelError)
		c.Task = &tk
	}
	if r.Conv != nil {
		c.Conv = cl.conversation(r.Conv)
	}
	return c
}

func (cl *cloner) conversation(cv *Conversation) *Conversation {
	c := *cv
	c.Rounds = slices.Clone(cv.Rounds)
	for i := range c.Rounds {
		c.Rounds[i].Asked = slices.Clone(cv.Rounds[i].Asked)
		c.Rounds[i].Answers = maps.Clone(cv.Rounds[i].Answers)
	}
	c.ServerRequests = cloneList(cv.ServerRequests, cl.server)
	c.Logs = slices.Clone(cv.Logs)
	return &c
}

func (cl *cloner) server(s *ServerRequest) *ServerRequest {
	if s == nil {
		return nil
	}
	if c, ok := cl.srv[s]; ok {
		return c
	}
	c := new(ServerRequest)
	*c = *s
	c.Error = cloneError(s.Error)
	cl.srv[s] = c
	c.pauses = cl.request(s.pauses)
	return c
}

// cloneList copies a slice (its capacity too), each element through
// clone; nil stays nil.
func cloneList[V any](vs []V, clone func(V) V) []V {
	if vs == nil {
		return nil
	}
	out := make([]V, len(vs), cap(vs))
	for i, v := range vs {
		out[i] = clone(v)
	}
	return out
}

// cloneMap copies a map, each value through clone; nil stays nil.
func cloneMap[K comparable, V any](m map[K]V, clone func(V) V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = clone(v)
	}
	return out
}

func cloneError(e *wire.Error) *wire.Error {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

// clone copies the ring's slots (their values; what they point at is
// shared, as Clone says).
func (r ring[T]) clone() ring[T] {
	r.buf = slices.Clip(slices.Clone(r.buf))
	return r
}

func (s rawStore) clone() rawStore {
	s.items = maps.Clone(s.items)
	s.outcomes = maps.Clone(s.outcomes)
	s.fifo = slices.Clone(s.fifo)
	return s
}
