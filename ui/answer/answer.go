// Package answer is the answer form: it answers the server's questions —
// an elicitation, a sampling request — one at a time, whether they came as
// a modern request's round of input requests (input_required, MRTR) or as
// a legacy server's own request. The form says what to send and for
// which question (Reply, SendRound, Decline); the root sends it, tells
// the tracker and says so on the status line.
package answer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/wire"
)

// Model is the form, one question at a time. Its zero value is closed.
type Model struct {
	keys keymap.AnswerKeyMap
	// id is the request the question belongs to (zero for a legacy
	// question tied to none).
	id wire.ID
	// legacy is the server's own request being answered (nil: modern).
	legacy *Question
	// Modern: the round's input requests still to answer, the one shown
	// (cur), the answers so far, and the answer to roots/list.
	asked   []session.InputRequest
	cur     int
	answers map[string]json.RawMessage
	roots   json.RawMessage

	// shown: a question is built (its method may be any string the
	// server sent, even none).
	shown   bool
	method  string
	message string   // the elicitation's message
	url     string   // a URL-mode elicitation's URL (shown, never opened)
	lines   []string // sampling: the messages and preferences, sanitised and cut
	// wrap is lines wrapped to a width, kept by Sized so that a frame
	// does not wrap them again.
	wrap struct {
		width int
		lines []string
	}
	fields []schemaform.Field
	// form is the elicitation's requested schema, read as the composer
	// reads a tool's: its note, and the check of the content.
	form  schemaform.Form
	focus int
	err   string
	// warn says what changed under the form (the question's request
	// ended first): the answer can still be sent.
	warn string
	// dead: a modern form shown again, as typed, after its round could not
	// be sent (the request failed): it only tells, it sends nothing.
	dead bool
}

// Question is a legacy server's own request as the form answers it. Ref is
// the root's handle on it, handed back in Reply and Details.
type Question struct {
	ID     wire.ID // the server's ID
	Method string
	Params json.RawMessage
	Ref    any
}

// Reply asks the root to answer a legacy server's question: with Result,
// or with the error Err. Action is the spec's word the user chose
// (accept, decline, cancel); Kept is the form as typed, which opens again
// if the answer cannot be sent.
type Reply struct {
	Question any // Question.Ref
	Result   json.RawMessage
	Err      *wire.Error
	Action   string
	Kept     Model
}

// SendRound asks the root to answer a modern request's round and send the
// next one. Kept is the form as it was last shown (nil when it showed no
// field), shown again if the round cannot be sent.
type SendRound struct {
	ID      wire.ID
	Answers map[string]json.RawMessage
	Kept    *Model
}

// Decline asks the root to end a modern request's conversation: a
// sampling request declined is not retried (sampling.mdx), and neither is
// a question inflight cannot answer. Reason is the conversation's end in
// words.
type Decline struct {
	ID     wire.ID
	Reason string
}

// Details asks the root to leave the form, unanswered, for the question's
// detail: the legacy question's own (Question: its Ref) when the tracker
// has it, else the request ID's.
type Details struct {
	ID       wire.ID
	Question any
}

// anyway begins a schema objection the form says before sending (enter is
// the form's Accept key).
const anyway = "enter again sends it anyway: "

// LaterText is the status line's word when the form closes unanswered.
const LaterText = "not answered yet: a opens the form again"

// OpenRound opens the form on a modern request's round: asked are its
// input requests, roots answers roots/list without a prompt. When no
// question needs the user, the form asks at once to send the round. (The
// SchemaReader is not used: see its comment.)
func OpenRound(env screen.Env, id wire.ID, asked []session.InputRequest, roots json.RawMessage) (Model, screen.Action) {
	m := Model{keys: keymap.DefaultAnswer(), id: id, asked: asked, answers: map[string]json.RawMessage{}, roots: roots}
	return m.next(env)
}

// OpenQuestion opens the form on a legacy server's own request; during is
// the request it came during (zero: none). (The SchemaReader is not used:
// see its comment.)
func OpenQuestion(env screen.Env, q Question, during wire.ID) (Model, screen.Action) {
	m := Model{keys: keymap.DefaultAnswer(), id: during, legacy: &q}
	cmd := m.build(env, q.Method, q.Params)
	return m, screen.Run{Cmd: cmd}
}

// Shown reports whether the form shows a question (false: closed).
func (m Model) Shown() bool { return m.shown }

// ID is the request the form's question belongs to.
func (m Model) ID() wire.ID { return m.id }

// Legacy is the root's handle on the legacy question the form answers
// (nil: a modern round's).
func (m Model) Legacy() any {
	if m.legacy == nil {
		return nil
	}
	return m.legacy.Ref
}

// Err is what the form says is wrong ("" when nothing is).
func (m Model) Err() string { return m.err }

// Warn is the form saying what changed under it; the first word stays.
func (m Model) Warn(text string) Model {
	if m.warn == "" {
		m.warn = text
	}
	return m
}

// Failed is the form, as typed, saying why its answer was not sent: it can
// be sent again.
func (m Model) Failed(why string) Model {
	m.err = why
	return m
}

// Dead is the form, as typed, saying why its round could not be sent: the
// request failed with it, so it only tells and sends nothing.
func (m Model) Dead(why string) Model {
	m.dead, m.err = true, why
	return m
}

// SentAs is the form kept under the ID its round was sent with.
func (m Model) SentAs(id wire.ID) Model {
	m.id = id
	return m
}

// Update handles a key in the form; anything else goes to the focused
// field (a paste, the cursor's blink).
func (m Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, run(m.toInput(msg))
	}
	keys := m.keys
	switch {
	case key.Matches(k, keys.Later):
		return m, screen.Batch{screen.Close{}, screen.Status{Level: screen.Info, Text: LaterText}}
	case key.Matches(k, keys.Details):
		return m, Details{ID: m.id, Question: m.Legacy()}
	case m.dead:
		// Shown again after its round could not be sent: the request
		// failed with it, and nothing more can be sent on it.
		if key.Matches(k, keys.Accept, keys.Decline, keys.Dismiss) {
			m.err = "the request failed with the round that could not be sent: nothing more can be sent on it — " + keymap.Key(keys.Later) + " closes, r on its row re-issues it"
		}
		return m, nil
	case key.Matches(k, keys.Accept):
		return m.answerWith(env, "accept")
	case key.Matches(k, keys.Decline):
		return m.answerWith(env, "decline")
	case key.Matches(k, keys.Dismiss):
		if m.method != wire.MethodElicitationCreate {
			m.err = "a sampling request has no cancel: " + keymap.Key(keys.Decline) + " declines it"
			return m, nil
		}
		return m.answerWith(env, "cancel")
	case key.Matches(k, keys.NextField, keys.Down):
		return m, run(m.focusOn(m.focus + 1))
	case key.Matches(k, keys.PrevField, keys.Up):
		return m, run(m.focusOn(m.focus - 1))
	case m.focus < len(m.fields):
		return m, m.fieldKey(k)
	}
	return m, nil
}

// fieldKey handles a key in the focused field: a checkbox toggles, a
// picker or multi-select moves and ticks, any field clears, and the rest
// is typed.
func (m *Model) fieldKey(k tea.KeyPressMsg) screen.Action {
	keys := m.keys
	f := &m.fields[m.focus]
	switch {
	case key.Matches(k, keys.Clear):
		f.Clear()
		m.err = ""
		return nil
	case f.IsBool:
		if key.Matches(k, keys.Toggle) {
			f.On = !f.On
		}
		return nil
	case f.IsChoice() && key.Matches(k, keys.PrevChoice, keys.NextChoice) && f.Input.Value() == "":
		d := 1
		if key.Matches(k, keys.PrevChoice) {
			d = -1
		}
		f.Move(d)
		m.err = ""
		return nil
	case f.Multi && key.Matches(k, keys.Toggle):
		f.Toggle()
		m.err = ""
		return nil
	}
	return run(m.toInput(k))
}

// run is the action that runs cmd (nil when there is none).
func run(cmd tea.Cmd) screen.Action {
	if cmd == nil {
		return nil
	}
	return screen.Run{Cmd: cmd}
}

// answerWith answers the question shown with one of the spec's actions:
// accept (the form's content, or the sampling reply), decline, cancel.
func (m Model) answerWith(env screen.Env, action string) (Model, screen.Action) {
	result, rpcErr, ok := m.result(action)
	if !ok {
		return m, nil
	}
	if m.legacy != nil {
		kept := m
		kept.err, kept.warn = "", ""
		return m, Reply{Question: m.legacy.Ref, Result: result, Err: rpcErr, Action: action, Kept: kept}
	}
	key := m.asked[m.cur].Key
	if rpcErr != nil {
		// "If an error occurs or the user declines the sampling request,
		// the client does not need to replay the initial call"
		// (sampling.mdx): the conversation ends here.
		return m, Decline{ID: m.id, Reason: "declined " + key + " (" + m.method + "); not retried"}
	}
	m.answers[key] = result
	m.cur++
	return m.next(env)
}

// result is the answer to the question shown for action: a result or an
// error to send. ok is false when the form says first what is wrong
// (m.err): a required field left empty, a schema objection said once.
func (m *Model) result(action string) (result json.RawMessage, rpcErr *wire.Error, ok bool) {
	switch {
	case m.method == wire.MethodSamplingCreate && action == "accept":
		text := strings.TrimSpace(m.fields[0].Input.Value())
		if text == "" {
			m.err = "write the reply (" + keymap.Key(m.keys.Decline) + " declines)"
			return nil, nil, false
		}
		return mustJSON(map[string]any{"role": "assistant", "content": map[string]string{"type": "text", "text": text},
			"model": "inflight-user", "stopReason": "endTurn"}), nil, true
	case m.method == wire.MethodSamplingCreate:
		return nil, &wire.Error{Code: wire.CodeUserRejected, Message: "User rejected sampling request"}, true
	case m.method != wire.MethodElicitationCreate:
		return nil, &wire.Error{Code: wire.CodeMethodNotFound, Message: "inflight does not answer " + m.method}, true
	case action == "accept" && m.url == "":
		content, err := m.content()
		if err != nil {
			m.err = err.Error()
			return nil, nil, false
		}
		if err := m.form.Validate(content); err != nil {
			// Said once; enter again sends it anyway (a fair probe of
			// the server's own checks).
			if msg := anyway + strings.ReplaceAll(err.Error(), "the tool's schema", "the requested schema"); m.err != msg {
				m.err = msg
				return nil, nil, false
			}
		}
		return mustJSON(map[string]any{"action": "accept", "content": content}), nil, true
	}
	return mustJSON(map[string]string{"action": action}), nil, true
}

// next moves a modern form to the next input request that needs the
// user, answering roots/list on the way; past the last it asks to send
// the round.
func (m Model) next(env screen.Env) (Model, screen.Action) {
	for m.cur < len(m.asked) {
		q := m.asked[m.cur]
		if q.Method == wire.MethodRootsList {
			m.answers[q.Key] = m.roots
			m.cur++
			continue
		}
		cmd := m.build(env, q.Method, q.Params)
		return m, screen.Run{Cmd: cmd}
	}
	return m, SendRound{ID: m.id, Answers: m.answers, Kept: m.kept()}
}

// kept is the form as it was last shown, for SendRound (nil when it
// showed no field: nothing typed to show again).
func (m Model) kept() *Model {
	if m.legacy != nil || len(m.fields) == 0 {
		return nil
	}
	m.err, m.warn = "", ""
	// The question shown last (answering moved past it, and past any
	// roots answered without a prompt).
	for m.cur > 0 && (m.cur >= len(m.asked) || m.asked[m.cur].Method == wire.MethodRootsList) {
		m.cur--
	}
	return &m
}

// toInput hands a message to the focused text field.
func (m *Model) toInput(msg tea.Msg) tea.Cmd {
	if m.focus >= len(m.fields) || m.fields[m.focus].IsBool {
		return nil
	}
	m.err = ""
	return m.fields[m.focus].Edit(msg)
}

func (m *Model) focusOn(i int) tea.Cmd {
	if len(m.fields) == 0 {
		return nil
	}
	i = (i + len(m.fields)) % len(m.fields)
	for j := range m.fields {
		m.fields[j].Input.Blur()
	}
	m.focus = i
	if !m.fields[i].IsBool {
		return m.fields[i].Input.Focus()
	}
	return nil
}

// content is the accepted elicitation's content: what each field was
// given, or its default when it was left as it was (defaults are the
// form's pre-filled values, and the server does not fill them in itself);
// a field cleared sends nothing.
func (m *Model) content() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for i := range m.fields {
		fl := &m.fields[i]
		if fl.IsBool {
			out[fl.Name] = json.RawMessage(strconv.FormatBool(fl.On))
			continue
		}
		raw, ok, err := fl.Value()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", fl.Name, err)
		}
		if !ok {
			raw = fl.DefaultValue()
		}
		if raw == nil {
			if fl.Required {
				return nil, fmt.Errorf("%s is required", fl.Name)
			}
			continue
		}
		out[fl.Name] = raw
	}
	return out, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
