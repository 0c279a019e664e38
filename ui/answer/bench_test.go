package answer

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"inflight/wire"
)

// hugeSampling is a sampling request of three messages of 8 MiB each.
func hugeSampling() json.RawMessage {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 8<<20/27)
	var msgs []map[string]any
	for _, role := range []string{"user", "assistant", "user"} {
		msgs = append(msgs, map[string]any{"role": role, "content": map[string]string{"type": "text", "text": text}})
	}
	raw, _ := json.Marshal(map[string]any{"messages": msgs, "maxTokens": 100})
	return raw
}

// BenchmarkSamplingOpen opens the form on a sampling request of 3 × 8 MiB
// and draws it once.
func BenchmarkSamplingOpen(b *testing.B) {
	env, params := testEnv(), hugeSampling()
	for b.Loop() {
		m, _ := OpenQuestion(env, Question{ID: wire.IntID(1), Method: wire.MethodSamplingCreate, Params: params}, wire.ID{})
		_ = m.Sized(120).View(env, 120, 40)
	}
}

// BenchmarkSamplingKeystroke is one key typed into the reply of that form:
// the update, the layout the root does after it, and the frame.
func BenchmarkSamplingKeystroke(b *testing.B) {
	env := testEnv()
	m, _ := OpenQuestion(env, Question{ID: wire.IntID(1), Method: wire.MethodSamplingCreate, Params: hugeSampling()}, wire.ID{})
	m = m.Sized(120)
	_ = m.View(env, 120, 40)
	for b.Loop() {
		m, _ = m.Update(env, tea.KeyPressMsg{Code: 'x', Text: "x"})
		m = m.Sized(120)
		_ = m.View(env, 120, 40)
	}
}

// BenchmarkDeepElicitationOpen opens the form on an elicitation whose
// requested schema nests objects 1000 and 4900 deep.
func BenchmarkDeepElicitationOpen(b *testing.B) {
	for _, n := range []int{1000, 4900} {
		var s strings.Builder
		s.WriteString(`{"message":"deep","requestedSchema":`)
		for range n {
			s.WriteString(`{"type":"object","properties":{"a":`)
		}
		s.WriteString(`{"type":"string"}`)
		for range n {
			s.WriteString(`}}`)
		}
		s.WriteString(`}`)
		params := json.RawMessage(s.String())
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			env := testEnv()
			for b.Loop() {
				m, _ := OpenQuestion(env, Question{ID: wire.IntID(1), Method: wire.MethodElicitationCreate, Params: params}, wire.ID{})
				_ = m.Sized(120).View(env, 120, 40)
			}
		})
	}
}

// TestHugeSamplingIsBounded counts the bytes a sampling request of
// 3 × 8 MiB has sanitised on opening and on each key typed afterwards:
// the form shows the start of each message and says how much more there
// is, so neither grows with the messages (each frame once sanitised and
// wrapped all 24 MiB again, seconds a keystroke).
func TestHugeSamplingIsBounded(t *testing.T) {
	env := testEnv()
	seen := 0
	mark := env.Line
	env.Line = func(s string) string { seen += len(s); return mark(s) }
	m, _ := OpenQuestion(env, Question{ID: wire.IntID(1), Method: wire.MethodSamplingCreate, Params: hugeSampling()}, wire.ID{})
	m = m.Sized(120)
	view := m.View(env, 120, 40)
	if seen > 64<<10 {
		t.Errorf("opening sanitised %d bytes: the form reads more of the messages than it shows", seen)
	}
	if !strings.Contains(view, "8.0 MiB more of it not shown (ctrl+o: the request whole)") {
		t.Errorf("the form does not say how much of a message it left out:\n%s", view)
	}
	for _, k := range []rune("reply") {
		seen = 0
		m, _ = m.Update(env, tea.KeyPressMsg{Code: k, Text: string(k)})
		m = m.Sized(120)
		_ = m.View(env, 120, 40)
		if seen > 8<<10 {
			t.Fatalf("a keystroke sanitised %d bytes: the frame works again on what did not change", seen)
		}
	}
	if got := m.fields[0].Input.Value(); got != "reply" {
		t.Fatalf("reply typed = %q", got)
	}
}
