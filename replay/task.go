package replay

import (
	"fmt"
	"strconv"

	"inflight/termsafe"
	"inflight/trace"
	"inflight/wire"
)

// A task's own requests (tasks/get, tasks/result, tasks/cancel) are shown
// in the table of the request whose task they serve, not as requests of
// their own, and a run of polls that said the same thing is one line with
// a count: a task polled every second for an hour is a few lines, not
// seven thousand.

// taskChild is one of a task's requests.
type taskChild struct {
	parent wire.ID
	method string
}

// routeTask sends a task request's line (or a task status notification)
// to its parent's table, and reports whether it did.
func (rp *replay) routeTask(rec *trace.Record) bool {
	if rp.children == nil {
		rp.children = map[wire.ID]*taskChild{}
		rp.taskOwner = map[string]wire.ID{}
	}
	if id, ok := rec.RequestID(); ok {
		if rec.Parent != nil {
			if rp.children[id] == nil {
				rp.children[id] = &taskChild{parent: *rec.Parent}
			}
			switch m, ok := rec.Message(); {
			case rec.Method != "":
				rp.children[id].method = rec.Method
			case ok && m.Kind == wire.KindRequest:
				rp.children[id].method = m.Method
			}
		}
		c := rp.children[id]
		if c == nil {
			return false
		}
		if prq := rp.byID[c.parent]; prq != nil {
			prq.addTaskLine(rec, c)
			return true
		}
		return false
	}
	m, ok := rec.Message()
	if !ok || rec.Dir != trace.DirIn || (m.Method != wire.NotifyTaskStatus && m.Method != wire.NotifyTasks) {
		return false
	}
	ts, err := wire.DecodeTask(m.Params)
	if err != nil {
		return false
	}
	owner, ok := rp.taskOwner[ts.ID]
	if !ok || rp.byID[owner] == nil {
		return false
	}
	rp.byID[owner].taskStatus = ts.Status
	rp.byID[owner].table.addPoll(rec.MS, "status notification: "+taskWords(ts))
	return true
}

// noteHandle remembers which request a task handle answered, for the
// task's status notifications.
func (rp *replay) noteHandle(rec *trace.Record, id wire.ID) {
	if rec.Dir != trace.DirIn || rp.conn == nil {
		return
	}
	m, ok := rec.Message()
	if !ok || m.Kind != wire.KindResult {
		return
	}
	if ts, ok := wire.TaskHandle(m.Result, rp.conn.era == "modern"); ok {
		if rp.taskOwner == nil {
			rp.taskOwner = map[string]wire.ID{}
			rp.children = map[wire.ID]*taskChild{}
		}
		rp.taskOwner[ts.ID] = id
		if rq := rp.byID[id]; rq != nil {
			rq.taskID = ts.ID
			if rq.taskStatus == "" {
				rq.taskStatus = ts.Status // until a poll says otherwise
			}
		}
	}
}

// addTaskLine puts a line of one of the task's requests in the table.
func (rq *replayRequest) addTaskLine(rec *trace.Record, c *taskChild) {
	if rec.State != "" {
		// A poll's own states are noise, but one that did not complete
		// (timed out, lost) is news.
		if isFinalState(rec.State) && rec.State != "completed" {
			rq.table.push(row{ms: rec.MS, dir: trace.DirLocal, what: termsafe.Line(c.method) + " " + rec.State})
		}
		return
	}
	m, ok := rec.Message()
	if !ok {
		return
	}
	if c.method != wire.MethodTasksGet {
		if rec.Method == "" && c.method != "" {
			// Its answer is worded for what it answers (`task t-1
			// cancelled`), not as bare JSON.
			cp := *rec
			cp.Method = c.method
			rec = &cp
		}
		rq.table.add(rec)
		if c.method == wire.MethodTasksCancel && rec.Dir == trace.DirIn && m.Kind == wire.KindResult {
			// A legacy tasks/cancel result is the task as it now stands
			// (cancelled, most often): the last status the server gave.
			if ts, err := wire.DecodeTask(m.Result); err == nil && ts.Status != "" {
				rq.taskStatus = ts.Status
			}
		}
		if c.method == wire.MethodTasksCancel && rec.Dir == trace.DirOut && rq.cancelMS < 0 {
			rq.cancelMS = rec.MS
		}
		if c.method == wire.MethodTasksCancel && rec.Dir == trace.DirOut {
			rq.signal = wire.MethodTasksCancel
		}
		return
	}
	if rec.Dir == trace.DirOut {
		return // the answer says it all
	}
	rq.polls++
	if m.Kind == wire.KindError {
		rq.table.addPoll(rec.MS, "poll: error "+strconv.Itoa(m.Error.Code)+" "+quoteClip(m.Error.Message, 80))
		return
	}
	ts, err := wire.DecodeTask(m.Result)
	if err != nil {
		rq.table.addPoll(rec.MS, "poll: not a task")
		return
	}
	rq.taskStatus = ts.Status
	rq.table.addPoll(rec.MS, "poll: "+taskWords(ts))
}

// taskWords is a task status in a few words: status and message.
func taskWords(ts wire.TaskState) string {
	s := termsafe.Line(clipText(ts.Status, 32))
	if ts.Message != "" {
		s += " " + quoteClip(ts.Message, 80)
	}
	return s
}

// addPoll adds a poll's row, or counts it into the row before when that
// said the same.
func (t *table) addPoll(ms float64, what string) {
	t.endRun()
	if n := len(t.rows); n > 0 && t.pollRow == n-1 && t.pollWhat == what {
		t.pollN++
		t.rows[n-1].what = fmt.Sprintf("%s ×%d, until %s", what, t.pollN, termsafe.Fixed(ms, 3))
		return
	}
	t.push(row{ms: ms, dir: trace.DirIn, what: what})
	t.pollRow, t.pollWhat, t.pollN = len(t.rows)-1, what, 1
}
