package answer

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/ui/look"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/wire"
)

// build fills the form for one question.
func (m *Model) build(env screen.Env, method string, params json.RawMessage) tea.Cmd {
	m.shown, m.method, m.message, m.url, m.lines, m.fields, m.focus, m.err = true, method, "", "", nil, nil, 0, ""
	m.form = schemaform.Form{}
	m.wrap.width, m.wrap.lines = 0, nil
	switch method {
	case wire.MethodElicitationCreate:
		m.buildElicitation(env, params)
	case wire.MethodSamplingCreate:
		m.lines = samplingLines(params, env.Line, keymap.Key(m.keys.Details))
		m.fields = append(m.fields, schemaform.TextField("reply", "string", true, "the assistant's reply", ""))
	default:
		m.message = "inflight cannot answer " + method + "; decline it"
	}
	return m.focusOn(0)
}

// buildElicitation fills the form for an elicitation: its message, and
// either its URL or a field for each property of its requested schema.
func (m *Model) buildElicitation(env screen.Env, params json.RawMessage) {
	var p struct {
		Mode    string          `json:"mode"`
		Message string          `json:"message"`
		URL     string          `json:"url"`
		Schema  json.RawMessage `json:"requestedSchema"`
	}
	_ = json.Unmarshal(params, &p)
	m.message = p.Message
	if p.Mode == "url" {
		m.url = p.URL
		return
	}
	m.form = schemaform.Read(p.Schema, env.Line)
	// Defaults show as placeholders, sent when the field is left as it
	// is: typing replaces one rather than adding to it.
	m.fields = schemaform.Fields(m.form.Params)
	for i := range m.fields {
		m.fields[i].MarkDefault()
	}
}

// maxTextShown is how much of each message (and of the system prompt) a
// sampling form keeps to show: it shows a few wrapped lines of each, and
// a server may send megabytes, which sanitising and wrapping again on
// every frame made cost seconds a keystroke.
const maxTextShown = 4 << 10

// samplingLines is what a sampling request shows: its messages, the
// system prompt and the model preferences, each cut to maxTextShown and
// sanitised by line once, here.
func samplingLines(params json.RawMessage, line func(string) string, details string) []string {
	var p struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		SystemPrompt string            `json:"systemPrompt"`
		MaxTokens    int               `json:"maxTokens"`
		Prefs        *modelPreferences `json:"modelPreferences"`
	}
	_ = json.Unmarshal(params, &p)
	var out []string
	add := func(head, text string) {
		shown, more := shownText(text, line)
		out = append(out, head+": "+shown)
		if more > 0 {
			out = append(out, "  … "+sizeText(more)+" more of it not shown ("+details+": the request whole)")
		}
	}
	if p.SystemPrompt != "" {
		add("system", p.SystemPrompt)
	}
	for _, msg := range p.Messages {
		add(line(msg.Role), look.ContentText(msg.Content))
	}
	prefs := p.Prefs.words()
	if p.MaxTokens > 0 {
		prefs = append(prefs, "max "+strconv.Itoa(p.MaxTokens)+" tokens")
	}
	if len(prefs) > 0 {
		out = append(out, line("model preferences: "+strings.Join(prefs, " · ")))
	}
	return out
}

// shownText is the start of a message's text as the form shows it,
// sanitised, and how many bytes more there are (the request's detail has
// it whole).
func shownText(text string, line func(string) string) (string, int) {
	if len(text) <= maxTextShown {
		return line(text), 0
	}
	cut := maxTextShown
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return line(text[:cut]), len(text) - cut
}

// modelPreferences are a sampling request's wishes for the model.
type modelPreferences struct {
	Hints []struct {
		Name string `json:"name"`
	} `json:"hints"`
	Cost         *float64 `json:"costPriority"`
	Speed        *float64 `json:"speedPriority"`
	Intelligence *float64 `json:"intelligencePriority"`
}

// words are the preferences in a few words each (none for nil).
func (p *modelPreferences) words() []string {
	if p == nil {
		return nil
	}
	var out, hints []string
	for _, h := range p.Hints {
		hints = append(hints, h.Name)
	}
	if len(hints) > 0 {
		out = append(out, "hints "+strings.Join(hints, ", "))
	}
	for _, pr := range []struct {
		name string
		v    *float64
	}{{"cost", p.Cost}, {"speed", p.Speed}, {"intelligence", p.Intelligence}} {
		if pr.v != nil {
			out = append(out, pr.name+" "+strconv.FormatFloat(*pr.v, 'g', 3, 64))
		}
	}
	return out
}

// sizeText is a size in bytes as a person reads it: 300 bytes, 12 KiB,
// 8.0 MiB.
func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
