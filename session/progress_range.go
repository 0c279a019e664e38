package session

import (
	"math"

	"inflight/event"
	"inflight/wire"
)

// ViolationProgressOutOfRange: a progress value or total that no work can
// have — negative, or beyond 2^53 (where a float64 stops counting one by
// one), such as a progress of 1e308. JSON cannot carry infinities or NaN,
// but a total that small numbers divide into one (1e-300) makes the same
// nonsense of a percentage; views show such values bounded either way.
const ViolationProgressOutOfRange = "progress_out_of_range"

// maxProgress is the largest progress value or total taken as sane.
const maxProgress = 1 << 53

// minTotal is the smallest positive total taken as sane: a total below it
// turns any progress into a percentage past every bound.
const minTotal = 1e-9

// checkProgressRange records a progress notification whose value or total
// is out of range. The progress is still applied as sent (the views bound
// what they show); the violation says the server sent nonsense.
func (t *Tracker) checkProgressRange(r *Request, p wire.Progress, ev *event.Event) {
	what, v := "", 0.0
	switch {
	case progressOutOfRange(p.Progress):
		what, v = "progress", p.Progress
	case p.Total != nil && (progressOutOfRange(*p.Total) || *p.Total > 0 && *p.Total < minTotal):
		what, v = "total", *p.Total
	default:
		return
	}
	t.violate(ViolationProgressOutOfRange, what+" "+number(v)+" is out of range", r, r.ID, ev)
}

func progressOutOfRange(v float64) bool {
	return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxProgress
}
