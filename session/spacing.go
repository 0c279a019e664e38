package session

import "time"

// Spacing is how far apart the messages for a request came: the mean gap
// between its timely progress notifications, or between what came after
// its cancel, whichever is wider; 0 when neither had two messages. It is
// what a watch's quiet end is weighed against: a second of quiet says
// nothing about a server that sends once a second.
func Spacing(p Progress, late Late) time.Duration {
	var d time.Duration
	if p.Count >= 2 {
		d = p.Last.Sub(p.First) / time.Duration(p.Count-1)
	}
	n := late.ProgressAfterCancel + late.ProgressCrossed
	if late.Response {
		n++
	}
	if n >= 2 && !late.FirstAt.IsZero() {
		d = max(d, late.LastAt.Sub(late.FirstAt)/time.Duration(n-1))
	}
	return d
}

// minQuiet is the least quiet at the end of a watch that may be taken for
// the server having stopped, however quickly its messages came.
const minQuiet = 250 * time.Millisecond

// StillSending reports whether a watch that ended quiet after the last
// message for a request cannot tell that the messages had stopped: the
// quiet is no longer than half again their spacing (Spacing), nor than a
// quarter of a second.
func StillSending(quiet, spacing time.Duration) bool {
	return quiet <= max(minQuiet, spacing*3/2)
}

// WatchEnded says, of a cancelled request whose fate is known, how long
// it was watched after its cancel and whether the server was still sending
// when the watch ended (late progress came until then, no response): what
// the views say instead of "nothing more came". ok is false for a request
// that was not cancelled or is still watched.
func (r *Request) WatchEnded() (watched time.Duration, stillSending, ok bool) {
	if r.Cancel == nil || !r.State.IsFinal() || r.Ended.IsZero() {
		return 0, false, false
	}
	watched = r.Ended.Sub(r.Cancel.At)
	if r.Late.Response || r.Late.ProgressAfterCancel == 0 || r.Late.LastAt.IsZero() {
		return watched, false, true
	}
	return watched, StillSending(r.Ended.Sub(r.Late.LastAt), Spacing(r.Progress, r.Late)), true
}
