package trace

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/wire"
)

// The secret's spellings a server may echo (see redact's spelling test):
// as written, PHP's escaped slash, \u for non-ASCII, \u for plain letters.
const echoedSecret = "sk/ab+cdä1A"

var echoSpellings = []string{
	`sk/ab+cdä1A`,
	`sk\/ab+cdä1A`,
	`sk\/ab+cd\u00e41A`,
	`sk\/ab+cd\u00E41\u0041`,
	`\u0073\u006b\u002f\u0061\u0062\u002b\u0063\u0064\u00e4\u0031\u0041`,
}

func secretRedactor() *redact.Redactor {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+echoedSecret)
	return redact.New(h, nil, "")
}

// No spelling of a secret reaches a trace: not in a message kept byte for
// byte, not in a malformed line, a stderr line or an error. And what is
// written decodes to the redacted message, the rest unchanged.
func TestTraceRedactsEverySpelling(t *testing.T) {
	for _, sp := range echoSpellings {
		var buf bytes.Buffer
		w := NewWriter(&buf, t0, secretRedactor())
		resp := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"you sent ` + sp + `"}],"p":"a\/b"}}`
		evs := []event.Event{
			received(10, resp, wire.IntID(1)),
			{Kind: event.Malformed, Time: at(11), Raw: []byte(`{"oops":"` + sp), Text: "unexpected end"},
			{Kind: event.Stderr, Time: at(12), Text: "auth failed for " + echoedSecret},
			{Kind: event.RequestFailed, Time: at(13), Err: errors.New(`400: {"error":"` + sp + `"}`)},
		}
		for _, ev := range evs {
			if err := w.Event(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, leak := range []string{echoedSecret, `sk\/ab`, `\u0073\u006b`, "cd\\u00e4", "cd\\u00E4"} {
			if strings.Contains(out, leak) {
				t.Errorf("spelling %s: %q leaked into the trace:\n%s", sp, leak, out)
			}
		}
		lines := decodeLines(t, buf.Bytes())
		msg := lines[0]["msg"].(map[string]any)
		text := msg["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
		if text != "you sent "+redact.Placeholder {
			t.Errorf("spelling %s: the message reads %q", sp, text)
		}
		// The server's own escaping of the rest is kept byte for byte.
		if !strings.Contains(out, `"p":"a\/b"`) {
			t.Errorf("spelling %s: the rest of the message was re-encoded:\n%s", sp, out)
		}
	}
}

// Issue 14 item 9: a server's properly escaped \u009b and \u202e, and raw
// ones, never come out of a trace as raw bytes — in "msg", where the
// message is spliced byte for byte, nor in the strings Go's encoder writes
// ("text", "error", "raw").
func TestTraceEscapesC1AndBidi(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, t0, nil)
	evs := []event.Event{
		received(10, `{"jsonrpc":"2.0","id":1,"result":{"t":"raw `+"\u009b31m \u202e"+` and escaped \u009b\u202e"}}`, wire.IntID(1)),
		{Kind: event.Malformed, Time: at(11), Raw: []byte("junk \u009b2J \u2066"), Text: "not JSON \u0085"},
		{Kind: event.Stderr, Time: at(12), Text: "log \u009d0;title\u009c \u202e"},
		{Kind: event.RequestFailed, Time: at(13), Err: errors.New("failed \u009b31m")},
	}
	for _, ev := range evs {
		if err := w.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	rec := Record{MS: 14, Dir: DirLocal, Event: EventState, State: "failed", Target: "tool\u202egnp", Method: "tools/call"}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if termsafe.Block(out) != out {
		t.Fatalf("the trace holds raw controls:\n%q", out)
	}
	lines := decodeLines(t, buf.Bytes())
	got := lines[0]["msg"].(map[string]any)["result"].(map[string]any)["t"]
	if got != "raw \u009b31m \u202e and escaped \u009b\u202e" {
		t.Errorf("the message's meaning changed: %q", got)
	}
	if lines[2]["text"] != "log \u009d0;title\u009c \u202e" {
		t.Errorf("stderr text changed: %q", lines[2]["text"])
	}
}

// The TUI's export writes the protocol log's entries, whose bytes the UI
// stores redacted; the writer redacts them again on the way out whatever
// their spelling.
func TestExportRedactsEverySpelling(t *testing.T) {
	for _, sp := range echoSpellings {
		raw := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"token ` + sp + `"}}`
		m, _ := wire.Decode([]byte(raw))
		entries := []session.LogEntry{{Time: at(5), Dir: session.DirIn, Kind: event.Received, MsgKind: m.Kind, Method: m.Method, Raw: []byte(raw)}}
		var buf bytes.Buffer
		if err := WriteEntries(&buf, entries, 0, t0, secretRedactor()); err != nil {
			t.Fatal(err)
		}
		if out := buf.String(); strings.Contains(out, "ab+cd") || !strings.Contains(out, redact.Placeholder) {
			t.Errorf("spelling %s: export wrote %s", sp, out)
		}
	}
}
