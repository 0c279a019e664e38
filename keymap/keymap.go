// Package keymap holds inflight's key bindings. The bindings are enabled and
// disabled with the state of the screen (SetState) so that help never lists
// a key that would do nothing right now.
package keymap

import (
	"strings"

	"charm.land/bubbles/v2/key"
)

// Mode is the screen the user is on.
type Mode uint8

// The screens.
const (
	ModeList Mode = iota
	ModeDetail
	ModeLog
	ModeStderr
	ModeComposer
	ModeHelp
	// ModePrompt covers the small dialogs: a confirmation or a cancel reason.
	ModePrompt
	// ModeAnswer is the answer form: the server's question (an
	// elicitation, a sampling request) answered by the user. Its keys type
	// text, like the composer's.
	ModeAnswer
	// ModeAuth is the auth view: the steps of the connection's OAuth
	// authorization, as they happened.
	ModeAuth
)

// State is what the key map needs to know to enable the right keys.
type State struct {
	Mode Mode
	// HasSelection: a request is selected (the list is not empty).
	HasSelection bool
	// SelectedActive: the selected request is still in flight.
	SelectedActive bool
	// SelectedTimed: the selected request has a running timeout (+ and -).
	SelectedTimed bool
	// SelectedCancelling: the selected request's cancel is waiting out its
	// late window (w stops watching).
	SelectedCancelling bool
	// HasRequests: the list has requests, shown or hidden (f and x).
	HasRequests bool
	// AnyActive: at least one request is in flight.
	AnyActive bool
	// Connected: requests can be sent.
	Connected bool
	// Lost: the connection is gone and can be re-established.
	Lost bool
	// HasStderr: the server is a stdio process (its stderr can be shown).
	HasStderr bool
	// Filtering: the log filter input has focus.
	Filtering bool
	// EntryOpen: the protocol log shows one entry whole (its viewer).
	EntryOpen bool
	// Chopped: the payload views cut long lines and scroll sideways
	// instead of wrapping them.
	Chopped bool
	// HasEntry: the log shows an entry to copy or open (y, o, O).
	HasEntry bool
	// SelectedAsks: the selected request waits for the user's answer (a
	// modern round's input requests, or a legacy server's own request
	// that arrived during it), or the server asks something tied to no
	// request (a).
	SelectedAsks bool
	// HasAuth: the connection went through OAuth steps (A shows them).
	HasAuth bool
	// Acting: a view on a proxy (inflight attach) that can act on the
	// host's requests (delay, hold, release, drop, cancel upstream, race).
	Acting bool
	// SelectedIncoming: the selection is one of a legacy server's own
	// requests (a row of its own): enter shows it, and c declines it
	// while it waits (SelectedAsks).
	SelectedIncoming bool
	// Watching: the view watches another's requests (a proxy's, through
	// inflight attach) and sends none itself: the keys that cancel, time
	// out or answer are not keys of its screen (the proxy's are, Acting).
	Watching bool
	// Waterfall: the list is drawn as a waterfall, every request a bar on
	// one time axis: its zoom, pan, fit, follow and summary keys act, and
	// the list's filter and clear (f, x) do not (it draws every request).
	Waterfall bool
	// Replaying: the screens show a recorded run (inflight replay FILE),
	// whose clock the scrubber's keys move.
	Replaying bool
}

// KeyMap is every binding of the main screens. The composer has its own
// bindings (ComposerKeyMap) because its keys type text.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding

	Cancel, CancelReason, CancelAll key.Binding
	StopWatching                    key.Binding
	Longer, Shorter                 key.Binding
	New, Reissue, Edit              key.Binding
	// Answer opens the answer form of the server's question.
	Answer key.Binding

	Detail, Open, Back key.Binding
	Log, Stderr        key.Binding
	// Auth opens the auth view (the OAuth steps of the connection).
	Auth                key.Binding
	Filter, ClearFilter key.Binding
	Export, Reconnect   key.Binding
	// Wrap toggles wrapping long lines in the payload views (the log
	// entry, the detail, stderr); Left and Right scroll sideways when
	// they are not wrapped.
	Wrap, Left, Right key.Binding
	// FilterList cycles the request list's filter; ClearFinished hides the
	// finished rows from it.
	FilterList, ClearFinished key.Binding
	// Copy, Pager and Editor act on the selected request's or entry's
	// JSON: the clipboard (OSC 52), $PAGER, $EDITOR.
	Copy, Pager, Editor key.Binding

	// Delay, Hold, Release, Drop, CancelUp, CancelSilent and Race act on
	// the selected host request through the proxy (inflight attach only).
	Delay, Hold, Release, Drop   key.Binding
	CancelUp, CancelSilent, Race key.Binding

	// Waterfall switches between the list and the waterfall (v). ZoomIn
	// and ZoomOut change the time a cell of the waterfall's axis stands
	// for, PanLeft and PanRight move the axis to earlier and later
	// traffic, FitAll fits the whole run into the width (and keeps it
	// fitted as it grows), FollowNow keeps now at the axis's right edge,
	// and Summary shows or hides the latency of each method.
	Waterfall, ZoomIn, ZoomOut, PanLeft, PanRight key.Binding
	FitAll, FollowNow, Summary                    key.Binding

	// The replay's scrubber (inflight replay FILE on a terminal): the
	// start and the end of the run, the next and previous flag (late
	// traffic, a violation, a timeout), one item back and forth, play
	// and pause, slower and faster.
	ReplayStart, ReplayEnd, NextFlag, PrevFlag key.Binding
	StepBack, StepForward, PlayPause           key.Binding
	Slower, Faster                             key.Binding

	Help, Quit, Interrupt key.Binding

	// state is the state of the last SetState, for ScreenHelp.
	state State
}

// Default returns the default bindings.
func Default() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "oldest")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "newest (follow)")),

		Cancel:       key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel")),
		CancelReason: key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "cancel with reason")),
		CancelAll:    key.NewBinding(key.WithKeys("X"), key.WithHelp("X", "cancel all")),
		StopWatching: key.NewBinding(key.WithKeys("W"), key.WithHelp("W", "stop watching")),
		Longer:       key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "timeout +10s")),
		Shorter:      key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "timeout -10s")),
		New:          key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new request")),
		Reissue:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "re-issue")),
		Edit:         key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "edit and re-issue")),
		Answer:       key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "answer")),

		Detail:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Open:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open entry")),
		Back:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Log:         key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "protocol log")),
		Stderr:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "server stderr")),
		Auth:        key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "auth steps")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Export:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export trace")),
		Reconnect:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reconnect")),
		Wrap:        key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "don't wrap")),
		Left:        key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "scroll left")),
		Right:       key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "scroll right")),

		FilterList:    key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter list")),
		ClearFinished: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "clear finished")),

		Copy:   key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy JSON")),
		Pager:  key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open in $PAGER")),
		Editor: key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "open in $EDITOR")),

		Delay:        key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "delay…")),
		Hold:         key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hold")),
		Release:      key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "release")),
		Drop:         key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "drop")),
		CancelUp:     key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "cancel upstream")),
		CancelSilent: key.NewBinding(key.WithKeys("Z"), key.WithHelp("Z", "cancel, host waits")),
		Race:         key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "race")),

		// The waterfall's keys are chosen apart from every key the list
		// keeps there (+ and - are the timeout's, ← and → scroll only a
		// payload), from the proxy's acting keys (d h u D z Z t) and from
		// the replay scrubber's ([ ] , . 0 $ < > space).
		Waterfall: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "back to the list")),
		ZoomIn:    key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "zoom in")),
		ZoomOut:   key.NewBinding(key.WithKeys("I"), key.WithHelp("I", "zoom out")),
		PanLeft:   key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "earlier")),
		PanRight:  key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "later")),
		FitAll:    key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "fit the whole run")),
		FollowNow: key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "follow now")),
		Summary:   key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "latency summary")),

		ReplayStart: key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "start of the run")),
		ReplayEnd:   key.NewBinding(key.WithKeys("$"), key.WithHelp("$", "end of the run")),
		NextFlag:    key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next flag")),
		PrevFlag:    key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous flag")),
		StepBack:    key.NewBinding(key.WithKeys(","), key.WithHelp(",", "one event back")),
		StepForward: key.NewBinding(key.WithKeys("."), key.WithHelp(".", "one event on")),
		PlayPause:   key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "play/pause")),
		Slower:      key.NewBinding(key.WithKeys("<"), key.WithHelp("<", "slower")),
		Faster:      key.NewBinding(key.WithKeys(">"), key.WithHelp(">", "faster")),

		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		Interrupt: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "cancel all and quit")),
	}
}

// SetState enables exactly the bindings that act in state s, and keeps s
// for ScreenHelp, which lists the screen's keys beyond those.
func (k *KeyMap) SetState(s State) {
	k.state = s
	main := s.Mode == ModeList
	scrolling := s.Mode == ModeList || s.Mode == ModeDetail || s.Mode == ModeLog || s.Mode == ModeStderr || s.Mode == ModeAuth
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom} {
		b.SetEnabled(scrolling && !s.Filtering)
	}
	// g and G move through requests in the list, through text elsewhere.
	switch {
	case s.Mode == ModeList && s.Waterfall:
		k.Top.SetHelp("g/home", "oldest")
		k.Bottom.SetHelp("G/end", "newest, axis at now")
	case s.Mode == ModeList:
		k.Top.SetHelp("g/home", "oldest")
		k.Bottom.SetHelp("G/end", "newest (follow)")
	case s.Mode == ModeDetail, s.Mode == ModeLog && s.EntryOpen:
		k.Top.SetHelp("g/home", "top")
		k.Bottom.SetHelp("G/end", "bottom")
	default:
		k.Top.SetHelp("g/home", "oldest")
		k.Bottom.SetHelp("G/end", "newest (follow)")
	}
	onSelected := s.Mode == ModeList || s.Mode == ModeDetail
	k.Cancel.SetEnabled(onSelected && s.SelectedActive)
	k.CancelReason.SetEnabled(onSelected && s.SelectedActive)
	k.StopWatching.SetEnabled(onSelected && s.SelectedCancelling)
	k.Answer.SetEnabled(onSelected && s.SelectedAsks)
	k.Longer.SetEnabled(onSelected && s.SelectedTimed)
	k.Shorter.SetEnabled(onSelected && s.SelectedTimed)
	k.CancelAll.SetEnabled((main || s.Mode == ModeLog) && s.AnyActive)
	k.New.SetEnabled((main || s.Mode == ModeDetail) && s.Connected)
	k.Reissue.SetEnabled(onSelected && s.HasSelection && s.Connected)
	k.Edit.SetEnabled(onSelected && s.HasSelection && s.Connected)
	k.Detail.SetEnabled(main && s.HasSelection)
	// enter on a row that waits for the user opens the answer form, as a
	// does; elsewhere it opens the row's detail.
	if main && s.SelectedAsks {
		k.Detail.SetHelp("enter", "answer")
	} else {
		k.Detail.SetHelp("enter", "details")
	}
	k.Cancel.SetHelp("c", "cancel")
	if s.SelectedIncoming {
		k.Cancel.SetEnabled(onSelected && s.SelectedAsks)
		k.Cancel.SetHelp("c", "decline")
		k.Detail.SetEnabled(main)
	}
	k.Open.SetEnabled(s.Mode == ModeLog && !s.Filtering && !s.EntryOpen)
	k.Back.SetEnabled(!main && !s.Filtering && s.Mode != ModePrompt)
	k.Log.SetEnabled(main || s.Mode == ModeDetail || s.Mode == ModeStderr)
	k.Stderr.SetEnabled(s.HasStderr && (main || s.Mode == ModeDetail || s.Mode == ModeLog))
	k.Auth.SetEnabled(s.HasAuth && (main || s.Mode == ModeDetail || s.Mode == ModeLog || s.Mode == ModeStderr) && !s.Filtering)
	k.Filter.SetEnabled(s.Mode == ModeLog && !s.Filtering && !s.EntryOpen)
	k.ClearFilter.SetEnabled(s.Mode == ModeLog && s.Filtering)
	payload := s.Mode == ModeDetail || s.Mode == ModeStderr || (s.Mode == ModeLog && s.EntryOpen)
	k.Wrap.SetEnabled(payload)
	if s.Chopped {
		k.Wrap.SetHelp("w", "wrap lines")
	} else {
		k.Wrap.SetHelp("w", "don't wrap")
	}
	k.Left.SetEnabled(payload && s.Chopped)
	k.Right.SetEnabled(payload && s.Chopped)
	k.Export.SetEnabled(main || s.Mode == ModeLog || s.Mode == ModeStderr || s.Mode == ModeDetail)
	k.FilterList.SetEnabled(main && s.HasRequests && !s.Waterfall)
	k.ClearFinished.SetEnabled(main && s.HasRequests && !s.Waterfall)
	// v goes from the list to the waterfall and back; the waterfall's
	// own keys act only while it is shown.
	k.Waterfall.SetEnabled(main && (s.HasRequests || s.Waterfall))
	if s.Waterfall {
		k.Waterfall.SetHelp("v", "back to the list")
	} else {
		k.Waterfall.SetHelp("v", "waterfall")
	}
	waterfall := main && s.Waterfall
	for _, b := range []*key.Binding{&k.ZoomIn, &k.ZoomOut, &k.PanLeft, &k.PanRight, &k.FitAll, &k.FollowNow, &k.Summary} {
		b.SetEnabled(waterfall)
	}
	k.Reconnect.SetEnabled(s.Lost && (main || s.Mode == ModeDetail || s.Mode == ModeLog || s.Mode == ModeStderr) && !s.Filtering)
	copyable := (onSelected && s.HasSelection) || (s.Mode == ModeLog && s.HasEntry && !s.Filtering)
	k.Copy.SetEnabled(copyable)
	k.Pager.SetEnabled(copyable)
	k.Editor.SetEnabled(copyable)
	k.Help.SetEnabled(s.Mode != ModePrompt && s.Mode != ModeComposer && s.Mode != ModeAnswer && !s.Filtering)
	k.Quit.SetEnabled(s.Mode != ModePrompt && s.Mode != ModeComposer && s.Mode != ModeAnswer && !s.Filtering)
	k.Interrupt.SetEnabled(true)
	acting := s.Acting && onSelected && s.HasSelection
	for _, b := range []*key.Binding{&k.Delay, &k.Hold, &k.Release, &k.Drop, &k.CancelUp, &k.CancelSilent, &k.Race} {
		b.SetEnabled(acting)
	}
	// The scrubber moves the clock of every screen that draws the run.
	replay := s.Replaying && scrolling && !s.Filtering
	for _, b := range []*key.Binding{&k.ReplayStart, &k.ReplayEnd, &k.NextFlag, &k.PrevFlag, &k.StepBack, &k.StepForward, &k.PlayPause, &k.Slower, &k.Faster} {
		b.SetEnabled(replay)
	}
}

// ShortHelp is the one-line help at the bottom of the screen: the keys a
// person needs most, and only those that act now.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.New, k.Answer, k.Cancel, k.StopWatching, k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.Race, k.Detail, k.Open, k.Back, k.Filter, k.ClearFilter, k.Wrap, k.Waterfall, k.FitAll, k.Log, k.Auth, k.Reconnect, k.Help, k.Quit}
}

// CompactHelp is ShortHelp without the ways of seeing more (the
// waterfall, fitting its axis), for a terminal a little too narrow: the
// keys that open the detail and the log stay. In the waterfall, v stays
// too: it is the way back.
func (k KeyMap) CompactHelp() []key.Binding {
	if k.Waterfall.Help().Desc != "waterfall" {
		return []key.Binding{k.New, k.Answer, k.Cancel, k.StopWatching, k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.Race, k.Detail, k.Open, k.Back, k.Filter, k.ClearFilter, k.Wrap, k.Waterfall, k.Log, k.Auth, k.Reconnect, k.Help, k.Quit}
	}
	return []key.Binding{k.New, k.Answer, k.Cancel, k.StopWatching, k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.Race, k.Detail, k.Open, k.Back, k.Filter, k.ClearFilter, k.Wrap, k.Log, k.Auth, k.Reconnect, k.Help, k.Quit}
}

// EssentialHelp is ShortHelp for a narrow terminal: the keys without
// which a person is stuck (in the waterfall, v, the way back).
func (k KeyMap) EssentialHelp() []key.Binding {
	if k.Waterfall.Help().Desc != "waterfall" {
		return []key.Binding{k.New, k.Answer, k.Cancel, k.StopWatching, k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.Back, k.Waterfall, k.Auth, k.Reconnect, k.Help, k.Quit}
	}
	return []key.Binding{k.New, k.Answer, k.Cancel, k.StopWatching, k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.Back, k.Auth, k.Reconnect, k.Help, k.Quit}
}

// BareHelp is EssentialHelp when even that does not fit: without the keys
// that act through a proxy (help lists them).
func (k KeyMap) BareHelp() []key.Binding {
	return []key.Binding{k.New, k.Answer, k.Cancel, k.StopWatching, k.Back, k.Auth, k.Reconnect, k.Help, k.Quit}
}

// FullHelp is the help screen, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Wrap, k.Left, k.Right},
		{k.New, k.Reissue, k.Edit, k.Answer, k.Cancel, k.CancelReason, k.CancelAll, k.StopWatching, k.Longer, k.Shorter},
		{k.Detail, k.Open, k.FilterList, k.ClearFinished, k.Log, k.Stderr, k.Auth, k.Filter, k.Export, k.Reconnect, k.Back},
		{k.Copy, k.Pager, k.Editor, k.Help, k.Quit, k.Interrupt},
		{k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.CancelSilent, k.Race},
		{k.Waterfall, k.ZoomIn, k.ZoomOut, k.PanLeft, k.PanRight, k.FitAll, k.FollowNow, k.Summary},
		k.ReplayHelp(),
	}
}

// OnScreen is s as far as its screen goes, whatever is selected and
// whatever the requests are doing: every key of the screen acts in it.
// The connection's keys (n, r, E, R, s, A) and the proxy's stay as s has
// them: they belong to the connection as it is, not to the screen; so do
// the keys that act on a request of one's own, in a view that only
// watches (Watching).
func (s State) OnScreen() State {
	s.HasSelection, s.HasRequests, s.HasEntry = true, true, true
	if !s.Watching {
		s.SelectedActive, s.SelectedTimed, s.SelectedCancelling, s.SelectedAsks, s.AnyActive = true, true, true, true, true
	}
	return s
}

// HelpKey is a key as the help screen lists it: Now says whether it acts
// now (on the selection as it is), else help shows it dimmed.
type HelpKey struct {
	key.Binding
	Now bool
}

// ScreenHelp is FullHelp for the help screen: every key of the screen of
// the last SetState (OnScreen), in FullHelp's columns, each saying
// whether it acts now. A newcomer learning from help sees c on a list
// whose selection is not in flight, dimmed, rather than never.
func (k KeyMap) ScreenHelp() [][]HelpKey {
	onScreen := k
	onScreen.SetState(k.state.OnScreen())
	now, all := k.FullHelp(), onScreen.FullHelp()
	var out [][]HelpKey
	for i, col := range all {
		var keys []HelpKey
		for j, b := range col {
			switch {
			case now[i][j].Enabled():
				keys = append(keys, HelpKey{Binding: now[i][j], Now: true})
			case b.Enabled():
				keys = append(keys, HelpKey{Binding: b})
			}
		}
		if len(keys) > 0 {
			out = append(out, keys)
		}
	}
	return out
}

// ReplayHelp is the scrubber's keys, in the order its bar lists them.
func (k KeyMap) ReplayHelp() []key.Binding {
	return []key.Binding{k.PlayPause, k.StepBack, k.StepForward, k.PrevFlag, k.NextFlag, k.ReplayStart, k.ReplayEnd, k.Slower, k.Faster}
}

// All lists every binding, for the README table and for tests that check
// no two bindings of one screen share a key.
func (k KeyMap) All() []key.Binding {
	return []key.Binding{
		k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom,
		k.Cancel, k.CancelReason, k.CancelAll, k.StopWatching, k.Longer, k.Shorter, k.New, k.Reissue, k.Edit, k.Answer,
		k.Detail, k.Open, k.Back, k.Log, k.Stderr, k.Auth, k.Filter, k.ClearFilter, k.Export, k.Reconnect,
		k.Wrap, k.Left, k.Right, k.FilterList, k.ClearFinished,
		k.Copy, k.Pager, k.Editor,
		k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.CancelSilent, k.Race,
		k.Waterfall, k.ZoomIn, k.ZoomOut, k.PanLeft, k.PanRight, k.FitAll, k.FollowNow, k.Summary,
		k.ReplayStart, k.ReplayEnd, k.NextFlag, k.PrevFlag, k.StepBack, k.StepForward, k.PlayPause, k.Slower, k.Faster,
		k.Help, k.Quit, k.Interrupt,
	}
}

// ComposerKeyMap holds the composer's bindings.
type ComposerKeyMap struct {
	NextField, PrevField key.Binding
	Up, Down             key.Binding
	NextKind, PrevKind   key.Binding
	Select               key.Binding
	Toggle               key.Binding
	JSONMode             key.Binding
	// AsTask runs a tool call as a task, where the tool allows one.
	AsTask key.Binding
	// Clear empties the focused field (what was typed, chosen or ticked).
	Clear key.Binding
	Send  key.Binding
	Back  key.Binding
}

// DefaultComposer returns the composer's default bindings.
func DefaultComposer() ComposerKeyMap {
	return ComposerKeyMap{
		NextField: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next field")),
		PrevField: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous field")),
		Up:        key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "up")),
		Down:      key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "down")),
		NextKind:  key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next kind")),
		PrevKind:  key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous kind")),
		Select:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "choose")),
		Toggle:    key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "toggle")),
		JSONMode:  key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "form ⇄ JSON")),
		AsTask:    key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "run as a task")),
		Clear:     key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "clear")),
		Send:      key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "send")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// AnswerKeyMap holds the answer form's bindings: its fields take text, so
// its keys are the composer's kind (enter, ctrl+…, the arrows).
type AnswerKeyMap struct {
	// Accept sends the answer; Decline and Dismiss send the spec's decline
	// and cancel; Details leaves the form, unanswered, for the request's
	// detail; Later closes it, unanswered.
	Accept, Decline, Dismiss, Details, Later key.Binding
	NextField, PrevField, Up, Down           key.Binding
	// PrevChoice and NextChoice move through a field's choices (a
	// picker's, or a multi-select's boxes); Toggle ticks a checkbox.
	PrevChoice, NextChoice, Toggle key.Binding
	// Clear empties a field: what was typed goes, and a field with a
	// default sends nothing rather than it.
	Clear key.Binding
}

// DefaultAnswer returns the answer form's default bindings.
func DefaultAnswer() AnswerKeyMap {
	return AnswerKeyMap{
		Accept:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "accept")),
		Decline:    key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "decline")),
		Dismiss:    key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "cancel")),
		Details:    key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "details")),
		Later:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "later")),
		NextField:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next field")),
		PrevField:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous field")),
		Up:         key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "previous field")),
		Down:       key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "next field")),
		PrevChoice: key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous choice")),
		NextChoice: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next choice")),
		Toggle:     key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "toggle")),
		Clear:      key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "clear")),
	}
}

// Key is the key a binding's help names ("ctrl+s"), for the screens'
// hint lines and notes: they name keys as the key map does.
func Key(b key.Binding) string { return b.Help().Key }

// Says is a binding's key and what it does, as help lists them
// ("ctrl+s send").
func Says(b key.Binding) string {
	h := b.Help()
	return h.Key + " " + h.Desc
}

// Keys names several bindings' keys as one ("←/→", "tab/↓").
func Keys(bs ...key.Binding) string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Help().Key
	}
	return strings.Join(names, "/")
}
