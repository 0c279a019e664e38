package answer

import (
	"encoding/json"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"inflight/ui/look"
	"inflight/ui/schemaform"
	"inflight/ui/screen"
	"inflight/wire"
)

// build fills the form for one question.
func (m *Model) build(env screen.Env, method string, params json.RawMessage) tea.Cmd {
	m.shown, m.method, m.message, m.url, m.lines, m.fields, m.focus, m.err = true, method, "", "", nil, nil, 0, ""
	m.form = schemaform.Form{}
	switch method {
	case wire.MethodElicitationCreate:
		m.buildElicitation(env, params)
	case wire.MethodSamplingCreate:
		m.lines = samplingLines(params)
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

// samplingLines is what a sampling request shows: its messages, the
// system prompt and the model preferences (raw: sanitised when drawn).
func samplingLines(params json.RawMessage) []string {
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
	if p.SystemPrompt != "" {
		out = append(out, "system: "+p.SystemPrompt)
	}
	for _, msg := range p.Messages {
		out = append(out, msg.Role+": "+look.ContentText(msg.Content))
	}
	prefs := p.Prefs.words()
	if p.MaxTokens > 0 {
		prefs = append(prefs, "max "+strconv.Itoa(p.MaxTokens)+" tokens")
	}
	if len(prefs) > 0 {
		out = append(out, "model preferences: "+strings.Join(prefs, " · "))
	}
	return out
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
