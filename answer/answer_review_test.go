package answer

import (
	"encoding/json"
	"testing"
)

// An answer file that accepts with "content": null, for a form whose
// schema has a default, must not crash inflight (call's main goroutine,
// or, legacy, the client's worker).
func TestReview2AcceptNullContent(t *testing.T) {
	b, err := New(map[string]json.RawMessage{"ask": json.RawMessage(`{"action":"accept","content":null}`)}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	params := json.RawMessage(`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"string","default":"x"}}}}`)
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Input panicked: %v", p)
		}
	}()
	res, out := b.Input("ask", "elicitation/create", params)
	t.Logf("%s %v", res, out)
}
