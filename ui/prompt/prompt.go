// Package prompt is the root's small dialogs, drawn over the bottom of the
// screen they were opened on: a yes/no confirmation (quit with requests in
// flight, cancel them all) and the input of a cancel's reason (C). While
// one is open it takes every key but ctrl+c; what the user chose comes
// back as an action (Confirm, Reason, or screen.Close when the dialog was
// dismissed), which the root carries out.
package prompt

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// Kind is what a dialog asks.
type Kind uint8

const (
	// None: no dialog is open.
	None Kind = iota
	// Quit asks whether to cancel what is in flight and quit.
	Quit
	// CancelAll asks whether to cancel every request in flight (X).
	CancelAll
	// CancelWithReason asks for the reason of one request's cancel (C).
	CancelWithReason
)

// Confirm says the user answered yes to the confirmation of Kind (Quit or
// CancelAll).
type Confirm struct{ Kind Kind }

// Reason asks the root to cancel request ID with reason Text.
type Reason struct {
	ID   wire.ID
	Text string
}

// DefaultReason is a cancel's reason when none is typed.
const DefaultReason = "user requested cancellation"

// Model is the open dialog, if any (the zero Model is none).
type Model struct {
	kind Kind
	// text is the question; note a dim line under it.
	text, note string
	// input is the reason's, and id the request it is for.
	input textinput.Model
	id    wire.ID
}

// Ask returns the yes/no confirmation of kind (Quit or CancelAll) with
// question text.
func Ask(kind Kind, text string) Model { return Model{kind: kind, text: text} }

// AskQuit is the confirmation to quit with n requests in flight.
func AskQuit(n int) Model {
	return Ask(Quit, fmt.Sprintf("%d %s in flight. Cancel %s and quit?", n, look.CountNoun(n, "request", "requests"), look.CountNoun(n, "it", "them")))
}

// AskReason returns the input of the reason request id is cancelled with.
// On modern HTTP the cancel is the closing of the stream: no message
// carries the reason, so a note says it is kept here, lest the user think
// the server will read it.
func AskReason(env screen.Env, id wire.ID) Model {
	in := look.NewTextInput()
	in.Prompt = "reason: "
	in.Placeholder = DefaultReason
	in.CharLimit = 200
	in.Focus()
	m := Model{kind: CancelWithReason, id: id, input: in, text: fmt.Sprintf("Cancel #%s with a reason", id)}
	if info, _ := env.Tracker.Conn(); info.Transport == event.TransportHTTP && info.Era == event.EraModern {
		m.note = "kept here only: modern HTTP cancels by closing the stream, which carries no reason"
	}
	return m
}

// Kind is what the open dialog asks (None: none is open).
func (m Model) Kind() Kind { return m.kind }

// Open reports whether a dialog is open.
func (m Model) Open() bool { return m.kind != None }

// TakesText reports whether the open dialog has an input, which takes
// what is pasted and what else its input is sent.
func (m Model) TakesText() bool { return m.kind == CancelWithReason }

// Update answers a key, or anything else the reason's input takes. A
// confirmation takes y (or enter) for yes and n, esc or q for no and
// ignores every other key; the reason's input is sent with enter (the
// default reason when it is blank), dismissed with esc, and takes the
// rest. A dialog answered or dismissed closes.
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	k, isKey := msg.(tea.KeyPressMsg)
	switch m.kind {
	case CancelWithReason:
		if isKey {
			switch k.String() {
			case "esc":
				return Model{}, screen.Close{}
			case "enter":
				reason := strings.TrimSpace(m.input.Value())
				if reason == "" {
					reason = DefaultReason
				}
				return Model{}, Reason{ID: m.id, Text: reason}
			}
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		if cmd != nil {
			return m, screen.Run{Cmd: cmd}
		}
	case Quit, CancelAll:
		if !isKey {
			return m, nil
		}
		switch k.String() {
		case "y", "Y", "enter":
			return Model{}, Confirm{Kind: m.kind}
		case "n", "N", "esc", "q":
			return Model{}, screen.Close{}
		}
	}
	return m, nil
}

// Sized fits the reason's input to a screen width wide.
func (m Model) Sized(width int) Model {
	if m.kind == CancelWithReason {
		m.input.SetWidth(max(20, min(60, width-12)))
	}
	return m
}

// View draws the dialog, boxed, for the root to lay over the bottom of the
// body ("" when none is open): the question, then the reason's note, input
// and keys, or a confirmation's y and n.
func (m Model) View(env screen.Env, width, height int) string {
	st := env.Styles
	var content string
	switch m.kind {
	case None:
		return ""
	case CancelWithReason:
		content = st.Bold.Render(m.text) + "\n"
		if m.note != "" {
			content += st.Dim.Render(look.Fit(m.note, max(20, width-8))) + "\n"
		}
		content += m.input.View() + "\n" + st.Dim.Render("enter cancel · esc keep running")
	default:
		content = st.Bold.Render(m.text) + "\n" + st.Key.Render("y") + " yes · " + st.Key.Render("n") + " no"
	}
	return st.Box.Render(content)
}
