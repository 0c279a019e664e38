package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestReview2SetMetaKeepsState(t *testing.T) {
	state := "\"a<b>&c\u2028d\\u003c\\/e\xff\""
	p := json.RawMessage(`{"name":"x","requestState":` + state + `}`)
	out, err := SetMeta(p, map[string]any{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"requestState":`+state)) {
		t.Errorf("state altered: %q", out)
	}
}
