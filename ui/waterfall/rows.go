package waterfall

import (
	"sort"

	"inflight/session"
	"inflight/wire"
)

// row is one row of the waterfall: the request at tracker index idx, or,
// with srv, a legacy server's question shown under the request at idx
// (the one it is tied to; for a question tied to none, the last request
// begun before it came, -1 before any), as the list places it.
type row struct {
	idx int
	srv *session.ServerRequest
}

// rowsKey is what the rows depend on: the tracker, its history's length
// and evictions, and the server's questions it keeps.
type rowsKey struct {
	t               *session.Tracker
	n, evicted, srv int
	unfollowed      int
	last            *session.ServerRequest
}

func keyOf(t *session.Tracker) rowsKey {
	srv := t.ServerRequests()
	k := rowsKey{t: t, n: t.Len(), evicted: t.Counts().Evicted, unfollowed: t.Counts().Unfollowed, srv: len(srv)}
	if len(srv) > 0 {
		k.last = srv[len(srv)-1]
	}
	return k
}

// rowIndex is the rows in order. When every request in history is a row
// of its own and nothing else is (no task's own requests, no questions),
// rows is nil and a row's position is its tracker index: nothing is
// built, and a history of any length costs nothing to index.
type rowIndex struct {
	key      rowsKey
	identity bool
	rows     []row
	// requests counts the requests' own rows.
	requests int
}

// buildRows indexes the rows of t: each request but a task's own
// (tasks/get, tasks/result, tasks/cancel, which its task's bar shows),
// each followed by the questions tied to it, and the untied questions
// where they came.
func buildRows(t *session.Tracker) rowIndex {
	x := rowIndex{key: keyOf(t)}
	if t.TaskRequestsBegun() == 0 && x.key.srv == 0 {
		x.identity, x.requests = true, t.Len()
		return x
	}
	untied := t.ServerRequestsUntied()
	u := 0
	addUntied := func(all bool, idx int) {
		for ; u < len(untied) && (all || t.ServerRequestPlace(untied[u]) <= idx); u++ {
			x.rows = append(x.rows, row{idx: idx, srv: untied[u]})
		}
	}
	for i := 0; i < t.Len(); i++ {
		r := t.At(i)
		addUntied(false, i-1)
		if r.Role != session.RoleNone {
			continue
		}
		x.rows = append(x.rows, row{idx: i})
		x.requests++
		if r.Conv != nil {
			for _, s := range r.Conv.ServerRequests {
				x.rows = append(x.rows, row{idx: i, srv: s})
			}
		}
	}
	addUntied(true, t.Len()-1)
	return x
}

// len is how many rows there are.
func (x *rowIndex) len(t *session.Tracker) int {
	if x.identity {
		return t.Len()
	}
	return len(x.rows)
}

// at is the row at position pos.
func (x *rowIndex) at(pos int) row {
	if x.identity {
		return row{idx: pos}
	}
	return x.rows[pos]
}

// posOf is the position of request id's own row.
func (x *rowIndex) posOf(t *session.Tracker, id wire.ID) (int, bool) {
	idx, ok := t.Index(id)
	if !ok {
		return 0, false
	}
	if x.identity {
		return idx, true
	}
	// The request's own row comes before the questions under it and
	// after the untied ones placed before it.
	pos := sort.Search(len(x.rows), func(i int) bool { return x.rows[i].idx >= idx })
	for ; pos < len(x.rows) && x.rows[pos].idx == idx; pos++ {
		if x.rows[pos].srv == nil {
			return pos, true
		}
	}
	return 0, false
}

// isRequest reports whether the row at pos is a request's own (the rows a
// selection rests on).
func (x *rowIndex) isRequest(pos int) bool { return x.identity || x.rows[pos].srv == nil }

// newest is the position of the newest request's own row.
func (x *rowIndex) newest(t *session.Tracker) (int, bool) {
	for pos := x.len(t) - 1; pos >= 0; pos-- {
		if x.isRequest(pos) {
			return pos, true
		}
	}
	return 0, false
}

// nearest is the request row nearest pos, looking in direction dir (+1
// later, -1 earlier) first, then the other way.
func (x *rowIndex) nearest(t *session.Tracker, pos, dir int) (int, bool) {
	n := x.len(t)
	if n == 0 {
		return 0, false
	}
	pos = min(max(pos, 0), n-1)
	for _, d := range []int{dir, -dir} {
		for p := pos; p >= 0 && p < n; p += d {
			if x.isRequest(p) {
				return p, true
			}
		}
	}
	return 0, false
}
