package session

import "inflight/wire"

// A host may leave any number of requests unanswered (a million over
// stdio, a batch of thousands over HTTP to a server that answers 202): a
// proxy's tracker follows the open ones up to Config.MaxFollowed, and the
// newest done ones up to HistoryLimit (evict). Past MaxFollowed the oldest
// open host requests are dropped, in batches as evict drops, and counted
// (Counts.Unfollowed); what the server or the host then says of them is
// old news, as of an evicted request. The bound is on what the tracker
// remembers: the proxy forwards every byte regardless.

// boundFollowed drops the oldest open host requests past MaxFollowed. A
// batch is a sixteenth of the limit, so that each request costs O(1)
// amortised (one walk of history per batch).
func (t *Tracker) boundFollowed() {
	limit := t.cfg.MaxFollowed
	over := len(t.active) - limit
	if over <= 0 {
		return
	}
	drop := over + max(1, limit/16) - 1
	n := 0
	for _, r := range t.hist {
		if drop > 0 && r.ByHost && r.State.IsActive() && r.Role == RoleNone {
			drop--
			t.unfollow(r)
			continue
		}
		t.hist[n] = r
		n++
	}
	clear(t.hist[n:])
	t.hist = t.hist[:n]
}

// unfollow forgets r, a host request still open, and everything kept for
// it, remembering its ID and token as no longer followed.
func (t *Tracker) unfollow(r *Request) {
	if r.activePos >= 0 {
		last := t.active[len(t.active)-1]
		t.active[r.activePos] = last
		last.activePos = r.activePos
		t.active[len(t.active)-1] = nil
		t.active = t.active[:len(t.active)-1]
		r.activePos = -1
	}
	t.count(r.State, -1)
	if t.byID[r.ID] == r {
		delete(t.byID, r.ID)
	}
	t.forgetRounds(r)
	if r.Task != nil && t.tasks[r.Task.ID] == r {
		delete(t.tasks, r.Task.ID)
	}
	t.raw.remove(rawKey{r.ID, rawRequest})
	t.raw.remove(rawKey{r.ID, rawResponse})
	t.raw.remove(rawKey{r.ID, rawTaskOutcome})
	t.forgetHost(r)
	if r.flagged {
		t.counts.Flagged--
	}
	t.counts.Unfollowed++
	if t.dropped == nil || len(t.dropped) >= 2*t.cfg.MaxFollowed {
		t.dropped = map[wire.ID]struct{}{} // bounded: the oldest go
	}
	t.dropped[r.ID] = struct{}{}
	if !r.ProgressToken.IsZero() {
		t.dropped[r.ProgressToken] = struct{}{}
	}
}

// wasDropped reports whether id named a host request (its ID or its
// progress token) no longer followed, as far as the bounded memory of
// them goes.
func (t *Tracker) wasDropped(id wire.ID) bool {
	_, ok := t.dropped[id]
	return ok
}
