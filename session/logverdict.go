package session

import (
	"math"
	"strconv"
	"time"
)

// Verdicts as log entries and traces carry them (Verdict, LogEntry.Verdict).
const (
	VerdictLate    = "late"
	VerdictCrossed = "crossed"
)

// markLogVerdict puts the tracker's verdict on the log entry of the event
// being applied, so that the protocol log shows late and crossed traffic
// as judged here and no view judges it again.
func (t *Tracker) markLogVerdict(r *Request, what Arrival, crossed bool, at time.Time) {
	if t.curLog < 0 {
		return
	}
	e := t.log.ring.buf[t.curLog].extra()
	e.Verdict = VerdictLate
	if crossed {
		e.Verdict = VerdictCrossed
	}
	if c := r.Cancel; c != nil {
		e.AfterCancel = at.Sub(c.At)
	} else {
		e.AfterCancel = at.Sub(r.Ended)
	}
	if what == ArrivalResponse {
		r.side().lateLogAt = t.log.ring.total
	}
}

// relabelLateResponse marks r's response entry late: it was judged crossed
// for want of the cancel's send time, and the time, known now, says late.
func (t *Tracker) relabelLateResponse(r *Request) {
	if at := r.peek().lateLogAt; at > 0 {
		if i, ok := t.log.slot(at); ok {
			t.log.ring.buf[i].extra().Verdict = VerdictLate
		}
	}
}

// number is a peer's number as a violation's detail says it: an integer as
// an integer ("1000000", where %v says "1e+06"), a fraction with the digits
// it has, and a value no work can have (beyond 2^53, or too small to write
// in a few digits) with an exponent, so that it stays short.
func number(v float64) string {
	a := math.Abs(v)
	if math.IsNaN(v) || a > maxProgress || (a != 0 && a < 1e-6) {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
