package list

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/wire"
)

// A completed request's row says in a few words what it returned: the
// first text of a tool result, how many tools or messages came back, or
// the compact result. Layout computes it once per visible request (View
// runs every frame, and parsing JSON there would be wasted work); View
// only reads it (Model.summaries).

// cacheSummary computes r's summary unless it is cached.
func (m *Model) cacheSummary(t *session.Tracker, r *session.Request) {
	if _, ok := m.summaries[r.ID]; ok {
		return
	}
	raw, ok := t.RawResponse(r.ID)
	if r.IsTask() {
		// A task's result is its outcome, not its handle.
		out, isErr, have := t.TaskOutcome(r.ID)
		if !have || isErr {
			return
		}
		raw, ok = wire.ResultResponse(r.ID, out), true
	}
	if !ok {
		return
	}
	// Redact before summarising: the summary is cut to fit its column, and
	// a cut secret would no longer match the redactor.
	s := summarize(r.Method, []byte(m.redactText(string(raw))))
	if m.summaries == nil || len(m.summaries) > 4*max(1, t.Len()) {
		m.summaries = map[wire.ID]string{}
	}
	m.summaries[r.ID] = s
}

// redactText hides the secrets in s (nothing to hide without a redactor).
func (m *Model) redactText(s string) string {
	if m.in.Redact == nil {
		return s
	}
	return m.in.Redact(s)
}

// summarize is what the result in raw says, in a few words, for a request
// of method.
func summarize(method string, raw []byte) string {
	msg, err := wire.Decode(raw)
	if err != nil || msg.Kind != wire.KindResult {
		return ""
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
		Tools     []json.RawMessage `json:"tools"`
		Messages  []json.RawMessage `json:"messages"`
		Resources []json.RawMessage `json:"resources"`
		Prompts   []json.RawMessage `json:"prompts"`
		Templates []json.RawMessage `json:"resourceTemplates"`
	}
	_ = json.Unmarshal(msg.Result, &res)
	switch method {
	case wire.MethodDiscover, wire.MethodInitialize:
		return serverSummary(msg.Result)
	case "resources/templates/list":
		return fmt.Sprintf("%d %s", len(res.Templates), look.CountNoun(len(res.Templates), "resource template", "resource templates"))
	case wire.MethodToolsCall:
		for _, c := range res.Content {
			if c.Type == "text" && c.Text != "" {
				return "“" + termsafe.Line(strings.TrimSpace(c.Text)) + "”"
			}
		}
		return fmt.Sprintf("%d content item(s)", len(res.Content))
	case wire.MethodToolsList:
		return fmt.Sprintf("%d %s", len(res.Tools), look.CountNoun(len(res.Tools), "tool", "tools"))
	case wire.MethodResourcesList:
		return fmt.Sprintf("%d resource(s)", len(res.Resources))
	case wire.MethodPromptsList:
		return fmt.Sprintf("%d prompt(s)", len(res.Prompts))
	case wire.MethodPromptsGet:
		return fmt.Sprintf("%d message(s)", len(res.Messages))
	case wire.MethodResourcesRead:
		if len(res.Contents) > 0 && res.Contents[0].Text != "" {
			return "“" + termsafe.Line(strings.TrimSpace(res.Contents[0].Text)) + "”"
		}
		return fmt.Sprintf("%d content item(s)", len(res.Contents))
	}
	return termsafe.Line(compactJSON(msg.Result))
}

// serverSummary is what a server says of itself in a discovery result
// (modern) or an initialize result (legacy), in a few words: its name and
// version, the protocol versions it speaks, and its capabilities'
// names ("demo 1.0 · 2026-07-28 · tools, resources, prompts").
func serverSummary(result json.RawMessage) string {
	type info struct{ Name, Version string }
	var r struct {
		Versions     []string                   `json:"supportedVersions"`
		Version      string                     `json:"protocolVersion"`
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		ServerInfo   *info                      `json:"serverInfo"`
		Meta         struct {
			ServerInfo *info `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if json.Unmarshal(result, &r) != nil {
		return termsafe.Line(compactJSON(result))
	}
	var parts []string
	if si := cmp.Or(r.Meta.ServerInfo, r.ServerInfo); si != nil && si.Name != "" {
		parts = append(parts, strings.TrimSpace(si.Name+" "+si.Version))
	}
	if v := strings.Join(append(r.Versions, r.Version), " "); strings.TrimSpace(v) != "" {
		parts = append(parts, strings.TrimSpace(v))
	}
	caps := make([]string, 0, len(r.Capabilities))
	for c := range r.Capabilities {
		caps = append(caps, c)
	}
	slices.Sort(caps)
	if len(caps) == 0 {
		caps = []string{"no capabilities"}
	}
	parts = append(parts, strings.Join(caps, ", "))
	return termsafe.Line(strings.Join(parts, " · "))
}

// compactJSON is raw on one line, as compact as JSON writes it (raw itself
// when it is not JSON).
func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
