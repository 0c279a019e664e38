package answer

import (
	"context"
	"encoding/json"
	"testing"

	"inflight/wire"
)

const schema = `{"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer","default":36},"ok":{"type":"boolean"}}}}`

func TestInput(t *testing.T) {
	file := map[string]json.RawMessage{
		"confirm":                 json.RawMessage(`{"ok":true}`),
		"twice":                   json.RawMessage(`[{"action":"decline"},{"action":"accept","content":{"ok":true}}]`),
		wire.MethodSamplingCreate: json.RawMessage(`"Paris."`),
		"full":                    json.RawMessage(`{"action":"cancel"}`),
	}
	tests := []struct {
		name        string
		file        map[string]json.RawMessage
		decline     bool
		roots       []string
		key, method string
		params      string
		want        string
		out         Outcome
	}{
		{"nothing given", nil, false, nil, "confirm", wire.MethodElicitationCreate, schema, "", None},
		{"content is an accept, defaults filled", file, false, nil, "confirm", wire.MethodElicitationCreate, schema,
			`{"action":"accept","content":{"age":36,"name":"Ada","ok":true}}`, Answered},
		{"a full result as given", file, false, nil, "full", wire.MethodElicitationCreate, schema, `{"action":"cancel"}`, Answered},
		{"by method", file, false, nil, "capital", wire.MethodSamplingCreate, `{}`,
			`{"content":{"text":"Paris.","type":"text"},"model":"inflight-canned-reply","role":"assistant","stopReason":"endTurn"}`, Answered},
		{"unanswered elicitation, --decline", file, true, nil, "other", wire.MethodElicitationCreate, schema, `{"action":"decline"}`, Declined},
		{"unanswered elicitation, no --decline", file, false, nil, "other", wire.MethodElicitationCreate, schema, "", None},
		{"sampling declined", nil, true, nil, "s", wire.MethodSamplingCreate, `{}`, "", Declined},
		{"roots from --root", nil, false, []string{"/tmp/a b"}, "r", wire.MethodRootsList, ``, `{"roots":[{"uri":"file:///tmp/a%20b","name":"a b"}]}`, Answered},
		{"roots, none given", nil, true, nil, "r", wire.MethodRootsList, ``, `{"roots":[]}`, Answered},
		{"roots, book off", nil, false, nil, "r", wire.MethodRootsList, ``, "", None},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New(tc.file, tc.decline, tc.roots)
			if err != nil {
				t.Fatal(err)
			}
			got, out := b.Input(tc.key, tc.method, json.RawMessage(tc.params))
			if string(got) != tc.want || out != tc.out {
				t.Errorf("got %s %s, want %s %s", got, out, tc.want, tc.out)
			}
		})
	}
	b, _ := New(file, false, nil)
	for i, want := range []string{`{"action":"decline"}`, `{"action":"accept","content":{"ok":true}}`, `{"action":"accept","content":{"ok":true}}`} {
		if got, _ := b.Input("twice", wire.MethodElicitationCreate, nil); string(got) != want {
			t.Errorf("use %d of a list: %s, want %s", i+1, got, want)
		}
	}
}

func TestServe(t *testing.T) {
	b, _ := New(map[string]json.RawMessage{wire.MethodElicitationCreate: json.RawMessage(`{}`)}, true, nil)
	if res, e := b.Serve(context.Background(), wire.MethodElicitationCreate, json.RawMessage(schema)); e != nil || string(res) != `{"action":"accept","content":{"age":36,"name":"Ada"}}` {
		t.Errorf("elicitation: %s %v", res, e)
	}
	if _, e := b.Serve(context.Background(), wire.MethodSamplingCreate, nil); e == nil || e.Code != wire.CodeUserRejected {
		t.Errorf("declined sampling: %v, want -1", e)
	}
	off, _ := New(nil, false, nil)
	if _, e := off.Serve(context.Background(), wire.MethodRootsList, nil); e == nil || e.Code != wire.CodeMethodNotFound {
		t.Errorf("nothing given: %v, want the refusal", e)
	}
	if _, err := New(map[string]json.RawMessage{"k": json.RawMessage(`[]`)}, false, nil); err == nil {
		t.Error("an empty list was accepted")
	}
}
