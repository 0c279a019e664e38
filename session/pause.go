package session

import "time"

// While a legacy server's question (elicitation, sampling, roots) tied to
// one of the user's requests waits for the user, that request waits on the
// user, not on the server: its timeout pauses, as a modern request waiting
// for input has none, and resumes, with the time it had left, once the
// last of its questions is answered, withdrawn or lost. Nothing the user
// takes to answer can then time the request out and flag the server's
// answer as late.

// WaitingOnUser reports whether the request waits on the user rather than
// on the server: a question of the server's tied to it is still open
// (legacy), or it waits for input between rounds (modern). Its timeout
// does not run meanwhile.
func (r *Request) WaitingOnUser() bool {
	return r.peek().asking > 0 || r.State == StateWaitingInput
}

// questionOpened pauses the timeout of the request s is tied to, r, when
// s is its first open question.
func (t *Tracker) questionOpened(s *ServerRequest, r *Request, at time.Time) {
	if r == nil || s.pauses != nil || !r.State.IsActive() || r.State == StateCancelRequested {
		return
	}
	s.pauses = r
	a := r.side()
	if a.asking == 0 {
		a.pausedAt = at
	}
	a.asking++
}

// questionClosed resumes the timeout s paused once no other question of
// its request is open.
func (t *Tracker) questionClosed(s *ServerRequest, at time.Time) {
	r := s.pauses
	if r == nil {
		return
	}
	s.pauses = nil
	a := r.side()
	a.asking--
	if a.asking > 0 {
		return
	}
	r.resume(at)
}

// resume moves the request's deadlines on by the pause that ends at at:
// the time spent waiting on the user does not count against the server.
// Progress that reset the timeout during the pause leaves it the whole
// timeout from now.
func (r *Request) resume(at time.Time) {
	a := r.side()
	paused := at.Sub(a.pausedAt)
	if paused < 0 {
		paused = 0
	}
	r.PausedFor += paused
	tt := &r.Timeout
	tt.MaxDeadline = tt.MaxDeadline.Add(paused)
	if tt.ResetOnProgress && r.Progress.Count > 0 && r.Progress.Last.After(a.pausedAt) {
		tt.Deadline = at.Add(tt.Timeout)
	} else {
		tt.Deadline = tt.Deadline.Add(paused)
	}
	a.pausedAt = time.Time{}
}
