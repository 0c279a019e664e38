// Package answer answers the server's questions from what the user gave
// inflight up front, for headless runs: an answer file (a JSON object
// mapping input-request keys, or methods, to responses), --decline, and
// --root directories. The same Book answers a modern InputRequiredResult's
// inputRequests (Input, then session.Tracker.Answer sends the retry) and a
// legacy server's own requests (Serve, as client.Config.ServerRequests).
//
// It is pure but for Load (which reads the file) and a mutex: the client's
// workers call Serve concurrently.
package answer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"inflight/wire"
)

// Outcome says what a Book did with a question.
type Outcome uint8

// The outcomes.
const (
	// None: the book has no answer (the caller ends the request as
	// input_required, or, legacy, refuses it as before).
	None Outcome = iota
	// Answered: the response is the answer.
	Answered
	// Declined: the user declines. For an elicitation the response is the
	// ElicitResult {"action":"decline"}; for sampling there is no response
	// (modern: the conversation is not retried, sampling.mdx; legacy: the
	// error -1 "User rejected sampling request").
	Declined
)

func (o Outcome) String() string {
	switch o {
	case Answered:
		return "answered"
	case Declined:
		return "declined"
	}
	return "none"
}

// Book holds the answers. The zero Book answers nothing.
type Book struct {
	mu      sync.Mutex
	entries map[string][]json.RawMessage
	used    map[string]int
	decline bool
	roots   []Root
	enabled bool
}

// Root is one entry of a roots/list answer.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// New makes a Book. file maps an input-request key or a method
// (elicitation/create, sampling/createMessage, roots/list) to a response,
// or to an array of responses used in turn (the last one repeats), for a
// server that asks the same key again. decline declines whatever the
// file does not answer; roots are the directories roots/list is answered
// with. A Book is enabled (answers at all) when any of them was given.
func New(file map[string]json.RawMessage, decline bool, roots []string) (*Book, error) {
	b := &Book{entries: map[string][]json.RawMessage{}, used: map[string]int{}, decline: decline,
		enabled: file != nil || decline || len(roots) > 0}
	for k, v := range file {
		v = bytes.TrimSpace(v)
		if len(v) > 0 && v[0] == '[' {
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				return nil, fmt.Errorf("answer for %q: %w", k, err)
			}
			if len(list) == 0 {
				return nil, fmt.Errorf("answer for %q: an empty list answers nothing", k)
			}
			b.entries[k] = list
			continue
		}
		if !json.Valid(v) {
			return nil, fmt.Errorf("answer for %q is not JSON", k)
		}
		b.entries[k] = []json.RawMessage{v}
	}
	for _, dir := range roots {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("--root %s: %w", dir, err)
		}
		b.roots = append(b.roots, Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), Name: filepath.Base(abs)})
	}
	return b, nil
}

// Load reads an answer file: a JSON object.
func Load(path string) (map[string]json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Enabled reports whether the book answers at all.
func (b *Book) Enabled() bool { return b != nil && b.enabled }

// Input answers one input request of a modern InputRequiredResult.
func (b *Book) Input(key, method string, params json.RawMessage) (json.RawMessage, Outcome) {
	if !b.Enabled() {
		return nil, None
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.take(key); ok {
		return shape(method, v, params), Answered
	}
	if v, ok := b.take(method); ok {
		return shape(method, v, params), Answered
	}
	switch method {
	case wire.MethodRootsList:
		// Roots are answered from --root (none: an empty list) whenever
		// the book answers at all; there is nothing to decline.
		return b.rootsResult(), Answered
	case wire.MethodElicitationCreate:
		if b.decline {
			return json.RawMessage(`{"action":"decline"}`), Declined
		}
	case wire.MethodSamplingCreate:
		if b.decline {
			return nil, Declined
		}
	}
	return nil, None
}

// take is the next answer under name, and whether there is one.
func (b *Book) take(name string) (json.RawMessage, bool) {
	list := b.entries[name]
	if len(list) == 0 {
		return nil, false
	}
	i := min(b.used[name], len(list)-1)
	b.used[name]++
	return list[i], true
}

func (b *Book) rootsResult() json.RawMessage {
	roots := b.roots
	if roots == nil {
		roots = []Root{}
	}
	out, _ := json.Marshal(map[string]any{"roots": roots})
	return out
}

// Serve answers a legacy server's request, as client.Config.ServerRequests:
// the book's answer, a decline (elicitation: the ElicitResult "decline";
// sampling: the error -1), or, with no answer, the refusal inflight gives
// by default.
func (b *Book) Serve(_ context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
	res, out := b.Input(method, method, params)
	switch {
	case out == Answered, out == Declined && res != nil:
		return res, nil
	case out == Declined:
		return nil, &wire.Error{Code: wire.CodeUserRejected, Message: "User rejected sampling request"}
	}
	return nil, &wire.Error{Code: wire.CodeMethodNotFound,
		Message: "inflight has no answer for " + method + " (give --answer-file, --decline or --root)"}
}

// shape completes a short answer into the result its method needs: for
// an elicitation, an object without "action" is the content of an
// "accept", and an accept is completed with the requestedSchema's
// defaults for what it leaves out (SEP-1034); for sampling, a string is
// the text of the assistant's reply.
func shape(method string, v json.RawMessage, params json.RawMessage) json.RawMessage {
	switch method {
	case wire.MethodElicitationCreate:
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return v
		}
		if _, ok := obj["action"]; !ok {
			obj = map[string]json.RawMessage{"action": json.RawMessage(`"accept"`), "content": v}
		}
		if string(obj["action"]) == `"accept"` {
			withDefaults(obj, params)
		}
		return marshal(obj)
	case wire.MethodSamplingCreate:
		var text string
		if json.Unmarshal(v, &text) == nil {
			return marshal(map[string]any{"role": "assistant", "content": map[string]string{"type": "text", "text": text},
				"model": "inflight-canned-reply", "stopReason": "endTurn"})
		}
	}
	return v
}

// withDefaults fills an accepted elicitation's content with the default of
// every property of the requestedSchema that it does not give.
func withDefaults(obj map[string]json.RawMessage, params json.RawMessage) {
	var p struct {
		Mode   string `json:"mode"`
		Schema struct {
			Properties map[string]struct {
				Default json.RawMessage `json:"default"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	if json.Unmarshal(params, &p) != nil || p.Mode == "url" || len(p.Schema.Properties) == 0 {
		return
	}
	content := map[string]json.RawMessage{}
	if c, ok := obj["content"]; ok && json.Unmarshal(c, &content) != nil {
		return
	}
	if content == nil {
		content = map[string]json.RawMessage{} // "content": null (found in review)
	}
	names := make([]string, 0, len(p.Schema.Properties))
	for name := range p.Schema.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	changed := false
	for _, name := range names {
		d := p.Schema.Properties[name].Default
		if _, given := content[name]; !given && len(d) > 0 {
			content[name] = d
			changed = true
		}
	}
	if changed || obj["content"] == nil {
		obj["content"] = marshal(content)
	}
}

// marshal is json.Marshal without HTML escaping (answers go back as the
// user wrote them).
func marshal(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
