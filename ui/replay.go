package ui

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/source"
	"inflight/ui/screen"
	"inflight/ui/scrubber"
)

// This file is the TUI on a recorded run (`inflight replay FILE` on a
// terminal): the screens of a live session — the list, the detail, the
// log — drawn from the tracker as it stood at a moment of the run, with
// the clock under the user's hand. source.Replay holds the run and
// brings its tracker to any moment (every item up to it applied at its
// recorded time, from the nearest checkpoint); the UI shows that tracker
// and reads the moment as its clock, so elapsed timers, countdowns and
// late windows read as they did then. Nothing is sent: the connection is
// the attach view's read-only one, and the keys that would send say so.

// Replay makes the UI a player of a recorded run instead of a client.
type Replay struct {
	// Trace is the run, opened (source.OpenReplay). The UI moves it and
	// shows its tracker; no one else may.
	Trace *source.Replay
}

// replayState is the player's own: the scrubber, and while the run
// plays, the wall time the play was anchored at with the moment it
// stood at then.
type replayState struct {
	scrub      scrubber.Model
	wall, from time.Time
	// gen tags the play's ticks: a pause or a new anchor makes the
	// pending one stale.
	gen int
}

// replayTickMsg moves a playing run on.
type replayTickMsg struct{ gen int }

// replaying reports whether the UI plays a recorded run.
func (o Options) replaying() bool { return o.Replay != nil }

// replayNow is the replay's clock: the moment shown.
func (o Options) replayNow() time.Time {
	_, at := o.Replay.Trace.Position()
	return at
}

// initReplay shows the run at its end, the whole story.
func (m *Model) initReplay() tea.Cmd {
	m.conn.client = readOnlyConn{}
	rp := m.opts.Replay.Trace
	flags := make([]time.Time, 0, len(rp.Flags()))
	for _, f := range rp.Flags() {
		flags = append(flags, rp.ItemTime(f.Item))
	}
	m.screens.replay.scrub = scrubber.New(rp.Start(), rp.End(), rp.Len()).WithFlags(flags)
	if d := rp.Damage(); d != nil {
		m.screens.replay.scrub = m.screens.replay.scrub.WithNote(d.Error())
	}
	// The model's own copy of the key map: a replay has nothing to cancel
	// when it quits.
	m.keys.Interrupt.SetHelp("ctrl+c", "quit")
	m.replayMoved()
	return tea.RequestBackgroundColor
}

// replayMoved makes the screens show the replay's moment: its tracker,
// the connection as it stood then, the scrubber, and the trace's verdicts
// the replay does not share so far.
func (m *Model) replayMoved() {
	rp := m.opts.Replay.Trace
	m.tracker = rp.Tracker()
	n, at := rp.Position()
	m.screens.replay.scrub = m.screens.replay.scrub.At(at, n)
	_, connected := m.tracker.Conn()
	closed, err := m.tracker.TransportClosed()
	switch {
	case closed:
		m.conn.state, m.conn.err = connLost, err
	case connected:
		m.conn.state, m.conn.err = connUp, nil
	default:
		m.conn.state, m.conn.err = connConnecting, nil
	}
	m.conn.everConnected = connected
	// The columns are as wide as what the run had shown by then, not as
	// what it showed later.
	m.screens.list = m.screens.list.ForgetWidths()
	m.screens.followNewest(m.tracker)
	if d, latest := rp.Disagreements(); d > 0 {
		m.setStatus(levelError, fmt.Sprintf("this replay judged %d %s otherwise than the trace; the latest: %s", d, plural(d, "line", "lines"), m.opts.line(latest)))
	} else if m.status.level == levelError {
		m.status.clear()
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// replayKeyState is what the keys may do in a replay: move its clock,
// and read; nothing that sends, cancels or changes a request.
func replayKeyState(st keymap.State) keymap.State {
	st.Replaying = true
	// It only watches, as a view on a proxy does: help lists no key that
	// acts on a request of one's own.
	st.Watching = true
	st.Connected, st.Lost = false, false
	st.AnyActive, st.SelectedActive, st.SelectedTimed, st.SelectedCancelling, st.SelectedAsks = false, false, false, false, false
	st.Acting = false
	return st
}

// replayKey takes the keys a replay answers itself: the scrubber's, q and
// Ctrl+C (which quit at once: nothing is in flight), and the keys that
// would send, which say why they do nothing. handled is false for the
// others, which the screens take as in a live session.
func (m *Model) replayKey(msg tea.KeyPressMsg) (cmd tea.Cmd, handled bool) {
	k := &m.keys
	if key.Matches(msg, k.Interrupt) {
		return m.clock.end(), true
	}
	if !k.PlayPause.Enabled() {
		// Text typed into the log's filter, a prompt, help: theirs.
		return nil, false
	}
	if key.Matches(msg, k.Quit) {
		return m.clock.end(), true
	}
	var act screen.Action
	m.screens.replay.scrub, act = m.screens.replay.scrub.Update(m.env(), msg)
	if _, unused := act.(screen.Unused); !unused {
		return m.replayAction(act), true
	}
	for _, b := range []key.Binding{k.Cancel, k.CancelReason, k.CancelAll, k.StopWatching, k.Longer, k.Shorter, k.New, k.Reissue, k.Edit,
		k.Answer, k.Reconnect, k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.CancelSilent, k.Race} {
		if pressed(msg, b) {
			m.setStatus(levelInfo, "a replay sends nothing: it shows what the recorded run did")
			return nil, true
		}
	}
	return nil, false
}

// replayAction carries out a move the scrubber asks for.
func (m *Model) replayAction(act screen.Action) tea.Cmd {
	rp := m.opts.Replay.Trace
	switch a := act.(type) {
	case scrubber.Seek:
		m.screens.replay.gen++
		rp.SeekTime(a.To)
	case scrubber.Step:
		m.screens.replay.gen++
		rp.Step(a.Delta)
	case scrubber.Flag:
		m.screens.replay.gen++
		var f source.Flag
		var ok bool
		if a.Forward {
			f, ok = rp.NextFlag()
		} else {
			f, ok = rp.PrevFlag()
		}
		m.replayMoved()
		m.status.say(flagNotice(f, ok, a.Forward, m.opts.line), m.opts.Redact, m.opts.moment())
		return nil
	case scrubber.Speed:
		if !m.screens.replay.scrub.Playing() {
			return nil
		}
		m.screens.replay.wall, m.screens.replay.from = m.opts.Now(), m.opts.replayNow()
		m.screens.replay.gen++
		return m.screens.replay.tick(m.clock, m.opts.FrameInterval)
	case scrubber.Play:
		m.screens.replay.gen++
		if !a.On {
			return nil
		}
		if n, _ := rp.Position(); n == rp.Len() {
			rp.SeekItem(0) // played to the end: play it again
			m.replayMoved()
		}
		m.screens.replay.wall, m.screens.replay.from = m.opts.Now(), m.opts.replayNow()
		return m.screens.replay.tick(m.clock, m.opts.FrameInterval)
	}
	m.replayMoved()
	return nil
}

// flagNotice says which flag a move to the next (forward) or previous
// one reached, or that there was none (ok false).
func flagNotice(f source.Flag, ok, forward bool, line func(string) string) notice {
	switch {
	case !ok && forward:
		return notice{level: levelInfo, text: "no flag after this moment"}
	case !ok:
		return notice{level: levelInfo, text: "no flag before this moment"}
	case f.ID.IsZero():
		return notice{level: levelWarn, text: fmt.Sprintf("⚑ %s: %s", f.Kind, line(f.Text))}
	}
	return notice{level: levelWarn, text: fmt.Sprintf("⚑ %s: #%s %s", f.Kind, line(f.ID.String()), line(f.Text))}
}

// tick schedules the play's next frame on the clock, every frame.
func (r replayState) tick(c *clock, frame time.Duration) tea.Cmd {
	gen := r.gen
	return c.tick(frame, func(time.Time) tea.Msg { return replayTickMsg{gen: gen} })
}

// handleReplayTick moves a playing run on to the moment the wall clock
// says, at the scrubber's speed, and pauses it at the end.
func (m *Model) handleReplayTick(msg replayTickMsg) tea.Cmd {
	if msg.gen != m.screens.replay.gen || !m.screens.replay.scrub.Playing() {
		return nil
	}
	rp := m.opts.Replay.Trace
	played := time.Duration(float64(m.opts.Now().Sub(m.screens.replay.wall)) * m.screens.replay.scrub.Speed())
	rp.SeekTime(m.screens.replay.from.Add(played))
	m.replayMoved()
	if !m.opts.replayNow().Before(rp.End()) {
		m.screens.replay.scrub = m.screens.replay.scrub.Paused()
		return nil
	}
	return m.screens.replay.tick(m.clock, m.opts.FrameInterval)
}

// scrubberLines is how many lines the scrubber takes above the footer.
func (o Options) scrubberLines() int {
	if o.replaying() {
		return 1
	}
	return 0
}

// view is the scrubber's line, with its newline ("" outside a replay).
func (r replayState) view(env screen.Env, replaying bool, width int) string {
	if !replaying {
		return ""
	}
	return r.scrub.View(env, width, 1) + "\n"
}
