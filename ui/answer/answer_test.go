package answer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// testEnv is an Env with an empty tracker and sanitisers that mark what
// they were given, so that a test sees which strings went through them.
func testEnv() screen.Env {
	keys := keymap.Default()
	mark := func(s string) string { return strings.ReplaceAll(s, "\x1b", "␛") }
	return screen.Env{Tracker: session.NewTracker(session.DefaultConfig()), Now: time.Unix(0, 0), Styles: look.NewStyles(true),
		Keys: &keys, Line: mark, Block: mark}
}

func press(t *testing.T, env screen.Env, m Model, keys ...string) (Model, screen.Action) {
	t.Helper()
	var act screen.Action
	for _, k := range keys {
		msg := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "space":
			msg = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "ctrl+d", "ctrl+x", "ctrl+o", "ctrl+u":
			msg = tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
		}
		m, act = m.Update(env, msg)
	}
	return m, act
}

// confirm asks one required integer "count" (default 3) that must be
// below 10.
const confirm = `{"message":"Delete?","requestedSchema":{"type":"object","properties":{"count":{"type":"integer","default":3,"maximum":9}},"required":["count"]}}`

// A modern round: roots are answered without a prompt, the elicitation
// is asked, its schema's objection is said once, and the last answer asks
// the root to send the round with every answer and the form as typed.
func TestRoundAnswersEveryQuestionThenSends(t *testing.T) {
	env := testEnv()
	asked := []session.InputRequest{
		{Key: "roots", Method: wire.MethodRootsList},
		{Key: "ok", Method: wire.MethodElicitationCreate, Params: json.RawMessage(confirm)},
	}
	m, act := OpenRound(env, wire.IntID(4), asked, json.RawMessage(`{"roots":[]}`))
	if _, ok := act.(screen.Run); !ok || !m.Shown() || m.ID() != wire.IntID(4) || m.Legacy() != nil {
		t.Fatalf("open: action %#v, shown %v", act, m.Shown())
	}
	m = m.Sized(80)
	if v := m.View(env, 80, 24); !strings.Contains(v, "Delete?") || !strings.Contains(v, "count*") {
		t.Fatalf("the form shows:\n%s", v)
	}
	m, _ = press(t, env, m, "backspace", "1", "2", "enter")
	if !strings.HasPrefix(m.Err(), anyway) || !strings.Contains(m.Err(), "the requested schema") {
		t.Fatalf("the schema's objection: %q", m.Err())
	}
	m, act = press(t, env, m, "enter")
	send, ok := act.(SendRound)
	if !ok {
		t.Fatalf("the second enter asked %#v", act)
	}
	if send.ID != wire.IntID(4) || string(send.Answers["roots"]) != `{"roots":[]}` ||
		string(send.Answers["ok"]) != `{"action":"accept","content":{"count":12}}` {
		t.Errorf("round %v answers %s %s", send.ID, send.Answers["roots"], send.Answers["ok"])
	}
	if send.Kept == nil || send.Kept.Err() != "" || send.Kept.asked[send.Kept.cur].Key != "ok" {
		t.Errorf("kept: %#v", send.Kept)
	}
}

// A round that asks only for roots is sent at once, with no form to keep.
func TestRoundOfRootsIsSentAtOnce(t *testing.T) {
	m, act := OpenRound(testEnv(), wire.IntID(2), []session.InputRequest{{Key: "r", Method: wire.MethodRootsList}}, json.RawMessage(`{"roots":[1]}`))
	send, ok := act.(SendRound)
	if !ok || m.Shown() || send.Kept != nil || string(send.Answers["r"]) != `{"roots":[1]}` {
		t.Fatalf("action %#v, shown %v", act, m.Shown())
	}
}

// Declining a modern round's sampling request ends the conversation;
// ctrl+x, which sampling lacks, says so and sends nothing.
func TestRoundSamplingDeclineEndsTheConversation(t *testing.T) {
	env := testEnv()
	asked := []session.InputRequest{{Key: "s", Method: wire.MethodSamplingCreate,
		Params: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"modelPreferences":{"hints":[{"name":"m1"}],"speedPriority":0.5},"maxTokens":9}`)}}
	m, _ := OpenRound(env, wire.IntID(5), asked, nil)
	if v := m.View(env, 100, 24); !strings.Contains(v, "user: hi") || !strings.Contains(v, "model preferences: hints m1 · speed 0.5 · max 9 tokens") {
		t.Errorf("the sampling form shows:\n%s", v)
	}
	m, act := press(t, env, m, "ctrl+x")
	if act != nil || !strings.Contains(m.Err(), "no cancel") {
		t.Errorf("ctrl+x: %#v, %q", act, m.Err())
	}
	_, act = press(t, env, m, "ctrl+d")
	if d, ok := act.(Decline); !ok || d.ID != wire.IntID(5) || d.Reason != "declined s (sampling/createMessage); not retried" {
		t.Errorf("ctrl+d: %#v", act)
	}
}

// A legacy question answers with a Reply that carries the root's handle,
// the result and the form as typed; esc closes, saying it waits.
func TestQuestionRepliesWithTheRootsHandle(t *testing.T) {
	env := testEnv()
	ref := new(int)
	q := Question{ID: wire.IntID(7), Method: wire.MethodSamplingCreate, Params: json.RawMessage(`{"messages":[]}`), Ref: ref}
	m, _ := OpenQuestion(env, q, wire.ID{})
	if m.Legacy() != ref || !strings.Contains(m.View(env, 100, 24), "from the server (its ID 7)") {
		t.Fatalf("legacy %v:\n%s", m.Legacy(), m.View(env, 100, 24))
	}
	m, act := press(t, env, m, "enter")
	if act != nil || m.Err() != "write the reply (ctrl+d declines)" {
		t.Fatalf("an empty reply: %#v %q", act, m.Err())
	}
	_, act = press(t, env, m, "o", "k", "enter")
	r, ok := act.(Reply)
	if !ok || r.Question != ref || r.Action != "accept" || r.Err != nil || !strings.Contains(string(r.Result), `"text":"ok"`) || r.Kept.Err() != "" {
		t.Fatalf("reply: %#v", act)
	}
	_, act = press(t, env, m, "esc")
	if b, ok := act.(screen.Batch); !ok || len(b) != 2 || b[0] != (screen.Close{}) || b[1].(screen.Status).Text != LaterText {
		t.Errorf("esc: %#v", act)
	}
	if _, act = press(t, env, m, "ctrl+o"); act != (Details{Question: ref}) {
		t.Errorf("ctrl+o: %#v", act)
	}
}

// A dead form only tells: enter sends nothing.
func TestDeadFormSendsNothing(t *testing.T) {
	env := testEnv()
	m, _ := OpenRound(env, wire.IntID(4), []session.InputRequest{{Key: "ok", Method: wire.MethodElicitationCreate, Params: json.RawMessage(confirm)}}, nil)
	m = m.Dead("this answer could not be sent")
	m, act := press(t, env, m, "enter")
	if act != nil || !strings.Contains(m.Err(), "nothing more can be sent") {
		t.Errorf("enter on a dead form: %#v %q", act, m.Err())
	}
}

// View changes nothing: the form's inputs are sized by Sized, not drawn
// into size.
func TestViewLeavesTheFieldsAlone(t *testing.T) {
	env := testEnv()
	m, _ := OpenRound(env, wire.IntID(4), []session.InputRequest{{Key: "ok", Method: wire.MethodElicitationCreate, Params: json.RawMessage(confirm)}}, nil)
	before := m.fields[0].Input.Width()
	_ = m.View(env, 140, 24)
	if m.fields[0].Input.Width() != before {
		t.Errorf("View sized the input: %d → %d", before, m.fields[0].Input.Width())
	}
	if w := m.Sized(140).fields[0].Input.Width(); w != 40 {
		t.Errorf("Sized(140): width %d", w)
	}
}

// A URL question shows the site first and accepts with the action alone.
func TestURLQuestionShowsTheSite(t *testing.T) {
	env := testEnv()
	q := Question{ID: wire.IntID(1), Method: wire.MethodElicitationCreate,
		Params: json.RawMessage(`{"mode":"url","message":"Go","url":"https://Example.com/x"}`), Ref: 1}
	m, _ := OpenQuestion(env, q, wire.ID{})
	v := ansi.Strip(m.View(env, 100, 24))
	if !strings.Contains(v, "site  example.com") || !strings.Contains(v, "enter accept (you opened it)") {
		t.Errorf("the URL form:\n%s", v)
	}
	if _, act := press(t, env, m, "enter"); act.(Reply).Result == nil || string(act.(Reply).Result) != `{"action":"accept"}` {
		t.Errorf("accept: %#v", act)
	}
}

// A URL question names the host the URL really leads to: in punycode
// when it is not all ASCII (a Cyrillic а is not a Latin a), and never the
// part before @, which it says is not the host.
func TestURLQuestionNamesTheRealHost(t *testing.T) {
	env := testEnv()
	for url, want := range map[string][]string{
		"https://\u0430pple.com/login": {"site  xn--pple-43d.com", "written \u0430pple.com, not all ASCII"},
		"https://accounts.google.com@evil.example/authorize": {"site  evil.example",
			"the part before @ (accounts.google.com) is not the host"},
	} {
		q := Question{ID: wire.IntID(1), Method: wire.MethodElicitationCreate,
			Params: json.RawMessage(`{"mode":"url","message":"Go","url":"` + url + `"}`), Ref: 1}
		m, _ := OpenQuestion(env, q, wire.ID{})
		v := ansi.Strip(m.View(env, 120, 24))
		for _, w := range want {
			if !strings.Contains(v, w) {
				t.Errorf("the URL form of %s does not say %q:\n%s", url, w, v)
			}
		}
		if strings.Contains(v, "site  \u0430pple") || strings.Contains(v, "site  accounts") {
			t.Errorf("the URL form of %s names a host it does not lead to:\n%s", url, v)
		}
	}
}

// A question with no method still opens the form, which says it cannot
// answer it; decline ends the conversation.
func TestQuestionWithoutAMethodCanBeDeclined(t *testing.T) {
	env := testEnv()
	m, _ := OpenRound(env, wire.IntID(3), []session.InputRequest{{Key: "x"}}, nil)
	if !m.Shown() || !strings.Contains(ansi.Strip(m.View(env, 100, 24)), "inflight cannot answer ; decline it") {
		t.Fatalf("shown %v:\n%s", m.Shown(), m.View(env, 100, 24))
	}
	if _, act := press(t, env, m, "ctrl+d"); act != (Decline{ID: wire.IntID(3), Reason: "declined x (); not retried"}) {
		t.Errorf("ctrl+d: %#v", act)
	}
}
