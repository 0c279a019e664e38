package ui

import (
	"time"

	"inflight/keymap"
	"inflight/session"
	"inflight/wire"
)

// statusLine is a transient message. It expires at until, which the one
// clock checks: a newer message moves until, so an older expiry never clears
// it. Under it stands a warning that holds for the rest of the run (the
// OTLP export's spans being lost): shown whenever no message is.
type statusLine struct {
	text  string
	level statusLevel
	until time.Time
	// about, when set, is a request whose news the message is ("sent #3 —
	// press c", "#3: cancellation requested"): it goes as soon as that
	// request reaches its fate, which the row then tells.
	about wire.ID
	// standing is the warning that stays (already redacted); "" for none.
	standing string
}

type statusLevel uint8

const (
	levelInfo statusLevel = iota
	levelWarn
	levelError
)

// statusLife is how long a message stays when nothing replaces it.
const statusLife = 6 * time.Second

// reconnecting is the status line while R redials.
const reconnecting = "reconnecting…"

// set shows text (already redacted) from now on, for statusLife.
func (s *statusLine) set(level statusLevel, text string, now time.Time) {
	*s = statusLine{text: text, level: level, until: now.Add(statusLife), standing: s.standing}
}

// stand shows text (already redacted) as a warning for the rest of the
// run: now, as a message, and then whenever no other message is shown.
func (s *statusLine) stand(text string, now time.Time) {
	s.standing = text
	s.set(levelWarn, text, now)
}

// shown is the message to draw: the transient one, else the standing
// warning.
func (s statusLine) shown() (text string, level statusLevel) {
	if s.text == "" && s.standing != "" {
		return s.standing, levelWarn
	}
	return s.text, s.level
}

// notice is a message for the status line, worked out by what knows it
// (a refused action, a key that did nothing): its level, its text (not
// yet redacted) and the request it is news of (zero: none).
type notice struct {
	level statusLevel
	text  string
	about wire.ID
}

// say shows n from now on: its text redacted, and about the request it
// names. A notice with no text says nothing, and leaves the line as it is.
func (s *statusLine) say(n notice, redact func(string) string, now time.Time) {
	if n.text == "" {
		return
	}
	s.set(n.level, redact(n.text), now)
	s.about = n.about
}

// clear removes the message; the standing warning stays.
func (s *statusLine) clear() { *s = statusLine{standing: s.standing} }

// expire clears the message once its time is over at now (the clock's
// tick).
func (s *statusLine) expire(now time.Time) {
	if !s.until.IsZero() && !now.Before(s.until) {
		s.clear()
	}
}

// clearIf clears the message when it says exactly text (the connection's
// own "reconnecting…" once it is up again).
func (s *statusLine) clearIf(text string) {
	if s.text == text {
		s.clear()
	}
}

// settled clears a message about a request whose fate one of changes
// (what the tracker just changed) decided.
func (s *statusLine) settled(changes []session.Change) {
	if s.about.IsZero() {
		return
	}
	for _, ch := range changes {
		if ch.Kind == session.ChangeState && ch.ID == s.about && ch.To.IsFinal() {
			s.clear()
			return
		}
	}
}

// dropSettled clears a message about a request that has reached its fate
// already, for a message that may come after it (the acknowledgement of a
// cancel a closed stream settled first).
func (s *statusLine) dropSettled(t *session.Tracker) {
	if s.about.IsZero() {
		return
	}
	if r, ok := t.Get(s.about); !ok || r.State.IsFinal() {
		s.clear()
	}
}

// followSelection clears a message about one request once another request
// is on screen ("sent #18 — press c to cancel it" is wrong once #17 is
// selected; "#2: stopped watching" is not about the detail of #4):
// whatever moved it, a key, the mouse wheel, the filter or a new request
// the list follows. selected and shown are the list's selection and the
// detail's request (zero when the detail is not on screen) before a
// message; mode, nowSelected and nowShown are the screen and the same two
// after it.
func (s *statusLine) followSelection(mode keymap.Mode, selected, shown, nowSelected, nowShown wire.ID) {
	if s.about.IsZero() {
		return
	}
	now := nowSelected
	switch {
	case mode == keymap.ModeList && nowSelected != selected:
	case mode == keymap.ModeDetail && nowShown != shown:
		now = nowShown
	default:
		return
	}
	if !now.IsZero() && s.about != now {
		s.clear()
	}
}
