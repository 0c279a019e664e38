package attach

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// defaultDelay is what the delay prompt offers.
const defaultDelay = 30 * time.Second

// delayPrompt asks how long the proxy is to delay a response (d).
type delayPrompt struct {
	open bool
	// id is the host's request whose response is to be delayed.
	id    wire.ID
	input textinput.Model
	// text is the question; note, when set, why the last answer was
	// refused.
	text, note string
}

// delayHint is the prompt's keys line.
const delayHint = "enter delay · esc leave it"

// openDelay opens the prompt for the delay of r's response.
func openDelay(env screen.Env, r *session.Request) delayPrompt {
	in := look.NewTextInput()
	in.Prompt = "delay: "
	in.Placeholder = defaultDelay.String()
	in.CharLimit = 20
	in.Focus()
	return delayPrompt{open: true, id: r.ID, input: in,
		text: fmt.Sprintf("Delay the response to #%s by (a duration: 500ms, 30s, 2m)", env.Line(r.ID.String()))}
}

// delayUpdate answers a message while the prompt is open: esc closes it,
// enter asks the proxy for the delay typed (the default when nothing
// is), ctrl+c leaves; the input takes the rest.
func (m Model) delayUpdate(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, env.Keys.Interrupt):
			return m, Leave{}
		case k.String() == "esc":
			m.delay = delayPrompt{}
			return m, nil
		case k.String() == "enter":
			return m.delayEntered(env)
		}
	}
	var cmd tea.Cmd
	m.delay.input, cmd = m.delay.input.Update(msg)
	if cmd != nil {
		return m, screen.Run{Cmd: cmd}
	}
	return m, nil
}

// delayEntered asks for the delay typed, or says why it is not one and
// keeps the prompt open.
func (m Model) delayEntered(env screen.Env) (Model, screen.Action) {
	text := strings.TrimSpace(m.delay.input.Value())
	d := defaultDelay
	if text != "" {
		v, err := time.ParseDuration(text)
		if err != nil || v <= 0 {
			m.delay.note = fmt.Sprintf("%q is not a duration above 0 (500ms, 30s, 2m)", text)
			return m, nil
		}
		d = v
	}
	id := m.delay.id
	m.delay = delayPrompt{}
	return m, ask(env, Act{Action: "delay", ID: id, After: d})
}

// view is the dialog, boxed: the question, why the last answer was
// refused, the input and its keys.
func (p delayPrompt) view(env screen.Env, width int) string {
	st := env.Styles
	content := st.Bold.Render(p.text) + "\n"
	if p.note != "" {
		content += st.Dim.Render(look.Fit(p.note, max(20, width-8))) + "\n"
	}
	content += p.input.View() + "\n" + st.Dim.Render(delayHint)
	return st.Box.Render(content)
}
