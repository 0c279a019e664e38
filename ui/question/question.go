// Package question is the detail of one of a legacy server's own requests
// (elicitation/create, sampling/createMessage, roots/list): what it is and
// where it stands, which of inflight's requests it is tied to and how the
// tracker knew, and below, in a viewport, its timeline, its params and
// what it was answered with. It also says what a key does on such a
// request wherever one is selected (RowKey), in its detail or on its row
// in the list.
package question

import (
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// Model is the detail of one of the server's requests. Its zero value
// shows none.
type Model struct {
	srv *session.ServerRequest
	vp  viewport.Model
	// content is the body the viewport holds, built from what built
	// says; wrapped is the width it was cut to and chop whether its long
	// lines were cut (either changed: lay it out again).
	content string
	built   source
	wrapped int
	chop    bool
	// asks: the request waits in the root's queue for the user's answer,
	// as the root said to the last Layout.
	asks bool
}

// source is what the body is built from: the record, where it stands,
// the word on an answer that could not be sent, and the palette.
type source struct {
	s      *session.ServerRequest
	state  session.ServerRequestState
	failed string
	dark   bool
}

// Input is what the root knows that the Env does not say, handed to
// Layout.
type Input struct {
	// Dark is the terminal's palette: the body is built again when it
	// changes (its styling is built in).
	Dark bool
	// Asks reports whether the request waits for the user's answer in the
	// root's queue of questions (else inflight answers it without a
	// prompt, or nobody can any more).
	Asks bool
}

// Answer asks the root to open the answer form on Request, which waits
// for the user's answer.
type Answer struct{ Request *session.ServerRequest }

// Decline asks the root to decline Request, which waits for the user's
// answer: its request, if any, goes on.
type Decline struct{ Request *session.ServerRequest }

// Open asks the root to show Request in its detail (enter on its row in
// the list, when it waits for no answer).
type Open struct{ Request *session.ServerRequest }

// ToggleWrap asks the root to switch every payload view between wrapping
// long lines and cutting them (w).
type ToggleWrap struct{}

// headerLines is the height above the body: the summary, the tie and a
// gap.
const headerLines = 3

// New opens the detail on s, width wide.
func New(s *session.ServerRequest, width int) Model {
	m := Model{srv: s, vp: viewport.New()}
	m.vp.SetHorizontalStep(look.HorizontalStep)
	m.vp.SetWidth(width)
	return m
}

// Request is the server's request shown (nil when none is).
func (m Model) Request() *session.ServerRequest { return m.srv }

// Layout builds the body when what it shows changed, cuts it to the
// width and sizes the viewport under the header. The root calls it after
// every update while the detail is open.
func (m Model) Layout(env screen.Env, in Input, width, height int) Model {
	m.asks = in.Asks
	src := source{s: m.srv, state: m.srv.State, failed: m.srv.AnswerFailed, dark: in.Dark}
	if src != m.built || m.wrapped != width || m.chop != env.Chop {
		m.built = src
		m.content = body(env, m.srv)
		m.vp.SetContentLines(look.PagerLines(m.content, width, env.Chop))
		m.wrapped, m.chop = width, env.Chop
	}
	m.vp.SetWidth(width)
	m.vp.SetHeight(max(1, height-headerLines))
	return m
}

// Update acts on a key: the keys on one of the server's requests first
// (RowKey: a answers it, c declines it, …), then the body's scrolling and
// w; any other key is Unused, for the root's global keys. The wheel
// scrolls the body.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if act := RowKey(env, m.srv, k, false, m.asks); act != nil {
			return m, act
		}
	}
	wrap, act := screen.Page(env.Keys, msg, &m.vp)
	if wrap {
		return m, ToggleWrap{}
	}
	return m, act
}
