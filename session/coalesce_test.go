package session

import (
	"bytes"
	"fmt"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// A progress flood keeps the log's bound for everything else: after
// LogProgressPerRequest entries of its own, a request's timely progress is
// merged into one entry that counts it and shows the latest. Every
// notification is still applied to the request.
func TestProgressFloodIsCoalescedInTheLog(t *testing.T) {
	h := newStdio(t, event.EraModern)
	flood := h.begin(0, "tools/call", `{"name":"flood"}`)
	other := h.begin(0, "tools/call", `{"name":"slow"}`)
	const n = 5000
	for i := 1; i <= n; i++ {
		h.recv(1+i/100, progress(1, float64(i)))
		if i == 2500 {
			h.recv(30, progress(2, 1)) // another request's progress in the middle
		}
	}
	expect(t, "progress applied", flood.Progress.Count, n)
	expect(t, "latest value", flood.Progress.Value, float64(n))
	expect(t, "other request's progress", other.Progress.Count, 1)

	lg := h.tr.Log()
	var own, merged int
	var coalesced LogEntry
	for i := 0; i < lg.Len(); i++ {
		e := lg.At(i)
		if e.Method != wire.NotifyProgress || e.ID != flood.ID {
			continue
		}
		if e.Coalesced > 0 {
			merged++
			coalesced = e
		} else {
			own++
		}
	}
	// The first merged notification opens the entry (Coalesced 0 then), so
	// it counts among the entries of its own until a second joins it.
	expect(t, "entries logged one by one", own, LogProgressPerRequest)
	expect(t, "coalesced entries", merged, 1)
	expect(t, "merged into it", coalesced.Coalesced, n-LogProgressPerRequest-1)
	if !bytes.Contains(coalesced.Raw, []byte(fmt.Sprintf(`"progress":%d`, n))) {
		t.Errorf("the coalesced entry does not show the latest notification: %s", coalesced.Raw)
	}
	if !coalesced.LastTime.After(coalesced.Time) {
		t.Errorf("coalesced entry times: first %v, last %v", coalesced.Time, coalesced.LastTime)
	}
	if lg.Total() > int64(LogProgressPerRequest+20) {
		t.Errorf("the log grew to %d entries for %d notifications", lg.Total(), n)
	}
	checkInvariants(t, h.tr)
}

// Progress that breaks a rule is never merged away: each keeps its own
// entry with its violation, and late progress its own entry as evidence.
func TestRuleBreakingProgressIsNotCoalesced(t *testing.T) {
	h := newStdio(t, event.EraModern)
	r := h.begin(0, "tools/call", `{"name":"stubborn"}`)
	for i := 1; i <= LogProgressPerRequest+10; i++ {
		h.recv(1, progress(1, float64(i)))
	}
	before := h.tr.Log().Total()
	h.recv(2, progress(1, 3)) // not increasing
	h.cancel(3, r, CauseUser)
	h.cancelSent(3, r, event.SignalNotification)
	for i := 0; i < 5; i++ {
		h.recv(4, progress(1, float64(1000+i))) // late
	}
	lg := h.tr.Log()
	var violations, late int
	for i := 0; i < lg.Len(); i++ {
		if e := lg.At(i); e.Method == wire.NotifyProgress && lg.Total()-int64(lg.Len())+int64(i) >= before {
			if e.Violation == ViolationProgressNotIncreasing {
				violations++
			} else if e.Coalesced == 0 {
				late++
			}
		}
	}
	expect(t, "not-increasing progress logged with its violation", violations, 1)
	expect(t, "late progress logged one by one", late, 5)
	expect(t, "late progress counted", r.Late.ProgressAfterCancel, 5)
}

// Events built by hand, without the client's decoded Progress, still apply
// (the tracker decodes the params itself) and are never coalesced.
func TestProgressWithoutDecodedParams(t *testing.T) {
	h := newStdio(t, event.EraModern)
	r := h.begin(0, "tools/call", `{"name":"slow"}`)
	for i := 1; i <= LogProgressPerRequest+5; i++ {
		ev := msgEvent(t, event.Received, 1, progress(1, float64(i)))
		ev.Progress = nil
		h.apply(ev)
	}
	expect(t, "progress applied", r.Progress.Count, LogProgressPerRequest+5)
	for i := 0; i < h.tr.Log().Len(); i++ {
		if h.tr.Log().At(i).Coalesced > 0 {
			t.Fatal("hand-built progress was coalesced")
		}
	}
}
