package detail

import (
	"time"

	"inflight/event"
	"inflight/msgtext"
	"inflight/session"
	"inflight/wire"
)

// source is everything the body reads. Progress is not in it: the body
// does not show progress (the header does), so a flood of progress never
// rebuilds the body. The width is not in it either: cutting the body to
// the width is a step of its own (Model.wrapped), which a resize redoes
// without building the body again.
type source struct {
	id         wire.ID
	late       bool // a late (or crossed) response
	crossed    bool
	localError string
	// violations counts the request's violations, and kept how many of
	// them the bounded violation log still holds (it drops the oldest).
	violations, kept int
	// request and response are the raw bytes shown, compared by identity:
	// the store's bytes are never changed in place, and holding them here
	// keeps their address from being reused by other bytes.
	request, response     []byte
	haveRequest, haveResp bool
	dark                  bool
	// updates counts the subscription updates the body lists.
	updates int
	// logs counts the request's log lines, untied the lines tied to no
	// request that came while it was in flight (its LOGS heading says
	// both).
	logs, untied int
	// task is what the body's TASK section shows of the request's task.
	task taskSig
	// conv is what the CONVERSATION section shows.
	conv  convSig
	valid bool // false: nothing built yet
}

// taskSig is what the body shows of a task, to know when to build it
// again.
type taskSig struct {
	changes, polls, input int
	sent, acked, refused  bool
	after                 string
	outcome               bool
}

// convSig is what the body's CONVERSATION section is built from.
type convSig struct {
	rounds, answered, serverReqs, serverEnded int
	last                                      session.State
	stopped                                   string
}

// sourceOf is what the body of r would be built from now.
func (m *Model) sourceOf(t *session.Tracker, r *session.Request, dark bool) source {
	src := source{
		id: r.ID, late: r.Late.Response, crossed: r.Late.Crossed,
		localError: r.LocalError, violations: r.Violations, dark: dark, valid: true,
	}
	if r.Violations > 0 {
		src.kept = len(t.Violations().ForRequest(r.ID))
	}
	src.request, src.haveRequest = t.RawRequest(r.ID)
	src.response, src.haveResp = t.RawResponse(r.ID)
	if m.trail.id == r.ID {
		src.updates, src.untied = m.trail.updatesSeen, m.trail.untied
	}
	if r.Conv != nil {
		src.logs = r.Conv.LogCount
	}
	src.conv = convSigOf(r)
	if tk := r.Task; tk != nil {
		_, _, outcome := t.TaskOutcome(r.ID)
		src.task = taskSig{changes: len(tk.History) + tk.HistoryDropped, polls: tk.Polls, sent: !tk.CancelSentAt.IsZero(),
			acked: !tk.CancelAckAt.IsZero(), refused: tk.CancelError != nil, after: tk.EndedAfterCancel, outcome: outcome, input: len(tk.InputRequests)}
	}
	return src
}

func convSigOf(r *session.Request) convSig {
	c := r.Conv
	if c == nil {
		return convSig{}
	}
	s := convSig{rounds: len(c.Rounds), serverReqs: len(c.ServerRequests), stopped: c.Stopped}
	for _, rd := range c.Rounds {
		if !rd.AnsweredAt.IsZero() {
			s.answered++
		}
		s.last = rd.Outcome
	}
	for _, sr := range c.ServerRequests {
		if !sr.Open() {
			s.serverEnded++
		}
	}
	return s
}

// same reports whether a body built from a is the body built from b.
func (a *source) same(b *source) bool {
	return a.valid && b.valid && a.id == b.id && a.late == b.late && a.crossed == b.crossed &&
		a.localError == b.localError && a.violations == b.violations && a.kept == b.kept && a.dark == b.dark && a.updates == b.updates && a.logs == b.logs && a.untied == b.untied && a.task == b.task && a.conv == b.conv &&
		a.haveRequest == b.haveRequest && a.haveResp == b.haveResp &&
		sameBytes(a.request, b.request) && sameBytes(a.response, b.response)
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// trail is what the protocol log says about one request, gathered as the
// log grows (each entry is read once).
type trail struct {
	id      wire.ID
	scanned int64 // log Total when last read
	// after is every message the tracker judged late or crossed, in
	// order, as long as the bounded log keeps it.
	after []arrival
	// updates are a subscription's notifications, the last
	// maxTrailUpdates of them; updatesSeen counts them all.
	updates     []arrival
	updatesSeen int
	// ackAt is when the subscription was acknowledged (zero: not seen).
	ackAt time.Time
	// polls are when a task's tasks/get went out, the last
	// maxTrailUpdates of them; pollsSeen counts them all.
	polls     []time.Time
	pollsSeen int
	// untied counts the log lines (notifications/message) tied to no
	// request that came while this one was in flight, as far as the
	// bounded log keeps them: with several in flight, any of them may
	// have been the one they were about.
	untied int
}

// arrival is one message of a trail.
type arrival struct {
	abs      int64 // its log position
	at       time.Time
	verdict  string
	progress bool // notifications/progress (else a response or an update)
	response bool
	text     string // msgtext's words for it, for updates
	after    time.Duration
}

// maxTrailUpdates bounds the updates a detail lists.
const maxTrailUpdates = 200

// readTrail brings the trail up to date with the log: the entries logged
// since it was last read.
func (m *Model) readTrail(t *session.Tracker, r *session.Request) {
	tr := &m.trail
	if tr.id != r.ID {
		*tr = trail{id: r.ID}
	}
	lg := t.Log()
	first := lg.Total() - int64(lg.Len())
	for len(tr.after) > 0 && tr.after[0].abs < first {
		tr.after = tr.after[1:]
	}
	for abs := max(tr.scanned, first); abs < lg.Total(); abs++ {
		e := lg.At(int(abs - first))
		tr.read(r, abs, &e)
	}
	tr.scanned = lg.Total()
	if r.Late.Response && !r.Late.Crossed {
		// A response judged crossed for want of the cancel's send time
		// and late once it was known: the tracker relabelled its entry.
		for i := range tr.after {
			if tr.after[i].response {
				tr.after[i].verdict = session.VerdictLate
			}
		}
	}
}

// read takes in one log entry, at position abs, about r or not.
func (tr *trail) read(r *session.Request, abs int64, e *session.LogEntry) {
	if e.Kind == event.Sent && e.Parent == r.ID && e.Method == wire.MethodTasksGet {
		tr.pollsSeen++
		if len(tr.polls) == maxTrailUpdates {
			copy(tr.polls, tr.polls[1:])
			tr.polls = tr.polls[:maxTrailUpdates-1]
		}
		tr.polls = append(tr.polls, e.Time)
		return
	}
	if e.ID.IsZero() && e.Kind == event.Received && e.MsgKind == wire.KindNotification && e.Method == wire.NotifyMessage &&
		!e.Time.Before(startOf(r)) && (r.IsActive() || !e.Time.After(r.Ended)) {
		tr.untied++
		return
	}
	if e.ID != r.ID || e.Kind != event.Received {
		return
	}
	a := arrival{abs: abs, at: e.Time, verdict: e.Verdict, after: e.AfterCancel,
		progress: e.Method == wire.NotifyProgress && e.MsgKind == wire.KindNotification,
		response: e.MsgKind == wire.KindResult || e.MsgKind == wire.KindError}
	if a.verdict != "" {
		tr.after = append(tr.after, a)
	}
	if !r.IsListen() || e.MsgKind != wire.KindNotification || a.progress {
		return
	}
	if e.Method == wire.NotifySubscriptionAck {
		if tr.ackAt.IsZero() {
			tr.ackAt = e.Time
		}
		return
	}
	a.text = msgtext.Raw(e.Raw, "")
	tr.updatesSeen++
	if len(tr.updates) == maxTrailUpdates {
		copy(tr.updates, tr.updates[1:])
		tr.updates = tr.updates[:maxTrailUpdates-1]
	}
	tr.updates = append(tr.updates, a)
}
