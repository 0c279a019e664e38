package waterfall

import (
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// trails is what the protocol log says of each request that its Request
// does not keep: when each message judged late or crossed (other than a
// response, whose time the request holds) came, and when each of a
// task's polls went out. Layout reads the log's new entries into it; View
// only reads it. It is shared by the copies of a Model, like a cache.
type trails struct {
	t       *session.Tracker
	scanned int64 // the log's Total when last read
	byID    map[wire.ID]*trail
}

// trail is one request's.
type trail struct {
	after []arrival
	polls []time.Time
}

// arrival is one message after a cancel.
type arrival struct {
	at      time.Time
	crossed bool
}

// maxTrail bounds each list of a trail: the newest are kept (a task
// polled every second for an hour would otherwise keep 3600).
const maxTrail = 256

// of is id's trail (nil: none).
func (x *trails) of(id wire.ID) *trail {
	if x == nil {
		return nil
	}
	return x.byID[id]
}

// read takes in the entries t's log gained since the last read. A new
// tracker, or a log that restarted (a replay gone back to a checkpoint),
// starts the trails again.
func (x *trails) read(t *session.Tracker) {
	lg := t.Log()
	if x.t != t || lg.Total() < x.scanned {
		*x = trails{t: t, byID: map[wire.ID]*trail{}}
	}
	first := lg.Total() - int64(lg.Len())
	for abs := max(x.scanned, first); abs < lg.Total(); abs++ {
		e := lg.At(int(abs - first))
		x.take(&e)
	}
	x.scanned = lg.Total()
	if len(x.byID) > 2*t.Len()+64 {
		// The requests history let go of take their trails with them.
		for id := range x.byID {
			if _, ok := t.Get(id); !ok {
				delete(x.byID, id)
			}
		}
	}
}

// take reads one entry: a task's poll leaving, or a message the tracker
// judged late or crossed.
func (x *trails) take(e *session.LogEntry) {
	switch {
	case e.Kind == event.Sent && !e.Parent.IsZero() && e.Method == wire.MethodTasksGet:
		tr := x.get(e.Parent)
		tr.polls = keepNewest(tr.polls, e.Time)
	case e.Kind == event.Received && e.Verdict != "" && e.MsgKind == wire.KindNotification:
		tr := x.get(e.ID)
		tr.after = keepNewest(tr.after, arrival{at: e.Time, crossed: e.Verdict == session.VerdictCrossed})
	}
}

func (x *trails) get(id wire.ID) *trail {
	tr := x.byID[id]
	if tr == nil {
		tr = &trail{}
		x.byID[id] = tr
	}
	return tr
}

// keepNewest appends v, dropping the oldest past maxTrail.
func keepNewest[T any](s []T, v T) []T {
	if len(s) == maxTrail {
		copy(s, s[1:])
		s = s[:maxTrail-1]
	}
	return append(s, v)
}
