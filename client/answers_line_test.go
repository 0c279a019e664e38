package client

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A message with line breaks would be two (or more) lines on stdio, which
// the server cannot read as one: valid JSON is compacted onto one line,
// with the same value; malformed bytes (SendRaw's) go as given.
func TestAppendLineKeepsOneMessageOneLine(t *testing.T) {
	pretty := []byte("{\r\n  \"jsonrpc\": \"2.0\",\n  \"id\": 0,\n  \"result\": {\"text\": \"two\\nlines\"}\n}")
	got := appendLine([]byte("kept"), pretty)
	if !bytes.HasPrefix(got, []byte("kept")) {
		t.Fatalf("appendLine lost what dst held: %q", got)
	}
	line := got[len("kept"):]
	if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' || bytes.IndexByte(line, '\r') >= 0 {
		t.Fatalf("not one line: %q", line)
	}
	var a, b any
	if err := json.Unmarshal(pretty, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(line, &b); err != nil {
		t.Fatalf("compacted line is not JSON: %v (%q)", err, line)
	}
	if ja, _ := json.Marshal(a); !bytes.Equal(ja, mustMarshal(t, b)) {
		t.Errorf("compacting changed the value: %s vs %s", ja, mustMarshal(t, b))
	}

	one := []byte(`{"jsonrpc":"2.0","method":"x"}`)
	if got := appendLine(nil, one); string(got) != string(one)+"\n" {
		t.Errorf("a one-line message changed: %q", got)
	}
	bad := []byte("{\"jsonrpc\":\n")
	if got := appendLine(nil, bad); string(got) != string(bad)+"\n" {
		t.Errorf("malformed bytes were not sent as given: %q", got)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// URL mode is declared only for a caller that shows the URL to a person
// (the TUI); a headless one declares form mode alone, so that a server
// never sends it a URL it cannot show.
func TestAnswersDeclareURLModeOnlyWhenAsked(t *testing.T) {
	for _, c := range []struct {
		a    Answers
		want string
	}{
		{Answers{Elicitation: true}, `{"elicitation":{"form":{}}}`},
		{Answers{Elicitation: true, ElicitationURL: true}, `{"elicitation":{"form":{},"url":{}}}`},
		{Answers{ElicitationURL: true}, `{}`},
	} {
		caps := map[string]any{}
		c.a.add(caps)
		if got := mustMarshal(t, caps); string(got) != c.want {
			t.Errorf("%+v declares %s, want %s", c.a, got, c.want)
		}
	}
}
