// Package attach is the keys of a view on a proxy (inflight attach NAME,
// or the proxy's own view): it overlays the list and the detail, which
// show the host's requests, and answers the keys that differ there. The
// keys that would send or cancel are refused with why, since the view is
// not the host's client; quitting detaches (or stops the proxy in its own
// process); and when the proxy takes commands, d, h, u, D, z, Z and t ask
// it to act on the selected host request (Act), d through a prompt for
// the delay. It also draws what is the proxy's on the other screens: the
// help's opening lines, the header's choices and the banner once the
// proxy's stream ended.
//
// What the proxy then did comes back in its stream, which the root feeds
// to its tracker; this screen holds only what the keys need.
package attach

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/screen"
	"inflight/wire"
)

// Proxy is what the screen knows of the proxy it is a view on, from the
// proxy's hello and from how the view attached.
type Proxy struct {
	// Name is the proxy's name; Command the server command it runs
	// (redacted), or in its own process the URL to give the host.
	Name, Command string
	// Transport is the host's transport as the view was told when it
	// attached ("stdio", "http"), until the tracker knows the connection.
	Transport string
	// Acts: the proxy takes this view's commands.
	Acts bool
	// InProcess: the view runs in the proxy's own process, so leaving it
	// stops the proxy.
	InProcess bool
}

// Model is the view on a proxy as its keys see it.
type Model struct {
	proxy Proxy
	// ended: the proxy's stream is over; endErr why, when it broke.
	ended  bool
	endErr error
	// serverGone: the proxy streamed its server's end (transport_closed),
	// the last thing a proxy that ends says.
	serverGone bool
	// delay is the prompt for a delay's duration (d), when open.
	delay delayPrompt
}

// New returns the screen on proxy p.
func New(p Proxy) Model { return Model{proxy: p} }

// Input is what the root knows that the Env does not say, handed to
// Update with each key.
type Input struct {
	// Mode is the screen the key was pressed on (the list, the detail,
	// the log, help, …).
	Mode keymap.Mode
	// Typing: the key is text for something else, the root's own dialog
	// or the log's filter; only ctrl+c is this screen's then.
	Typing bool
	// Selected is the request keys act on: the detail's, else the list's
	// selection (nil: none).
	Selected *session.Request
	// Held: the proxy said it holds Selected's response.
	Held bool
	// Armed: a key armed on Selected an action that waits for its
	// response (a hold, delay, drop, race): a release takes it back.
	Armed bool
}

// Act asks the root to ask the proxy to act on the host's request ID
// (source.Attach.Act, from a tea.Cmd): Action is a command's act ("hold",
// "delay", "release", "drop", "cancel", "cancel-silent", "race"), After a
// delay's duration. The proxy's reply comes in its stream.
type Act struct {
	Action string
	ID     wire.ID
	After  time.Duration
}

// Leave asks the root to end the program: the view detaches and the
// proxy runs on, or, in the proxy's own process, the proxy stops.
type Leave struct{}

// Ended records that the proxy's stream is over; err says why when it
// broke (nil: the proxy closed it).
func (m Model) Ended(err error) Model {
	m.ended, m.endErr = true, err
	return m
}

// ServerGone records that the proxy streamed its server's end.
func (m Model) ServerGone() Model {
	m.serverGone = true
	return m
}

// Prompting reports whether the delay prompt is open: it takes every key
// but ctrl+c, and what else it is sent (a paste).
func (m Model) Prompting() bool { return m.delay.open }

// Update answers a key (or, while the delay prompt is open, anything the
// prompt's input takes). It returns screen.Unused for a key it does not
// take: the root's own keys act on it.
func (m Model) Update(env screen.Env, in Input, msg tea.Msg) (Model, screen.Action) {
	if m.delay.open {
		return m.delayUpdate(env, msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	return m.key(env, in, k)
}

// KeyState turns off the keys that would send or cancel, and on those
// that act through the proxy while it takes commands; while the delay
// prompt is open the keys are the prompt's.
func (m Model) KeyState(st keymap.State, held bool) keymap.State {
	// The proxy's keys act on a host request the host still waits for,
	// or whose response the proxy holds (held); on a finished one they
	// only say so: offered on such a row only.
	inFlight := st.SelectedActive || held
	st.Connected, st.Lost, st.Watching = false, false, true
	st.AnyActive, st.SelectedActive, st.SelectedTimed, st.SelectedCancelling = false, false, false, false
	st.Acting = m.proxy.Acts && !m.ended && inFlight
	if m.delay.open {
		st.Mode = keymap.ModePrompt
	}
	return st
}

// View draws the delay prompt's dialog, boxed, for the root to lay over
// the bottom of the body ("" when it is closed): the rest of the screen
// is the list's or the detail's.
func (m Model) View(env screen.Env, width, height int) string {
	if !m.delay.open {
		return ""
	}
	return m.delay.view(env, width)
}

// Sized fits the delay prompt's input to a screen width wide.
func (m Model) Sized(width int) Model {
	if m.delay.open {
		m.delay.input.SetWidth(max(20, min(60, width-12)))
	}
	return m
}
