package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"inflight/event"
	"inflight/redact"
	"inflight/target"
	"inflight/termsafe"
)

// unencodable fails to encode with an error that quotes what it holds, as
// an error about a server's bytes would.
type unencodable string

func (u unencodable) MarshalJSON() ([]byte, error) {
	return nil, errors.New("cannot encode " + string(u))
}

// When v cannot be written, WriteJSON still prints one JSON object — not
// one built with %q, whose \x1b is no JSON escape — with the error's
// controls escaped and its secrets redacted.
func TestWriteJSONFallbackIsJSON(t *testing.T) {
	v := struct {
		Result unencodable `json:"result"`
	}{"\x1b[2J\u009b\u202e sk-secret-123456"}
	var out bytes.Buffer
	WriteJSON(&out, v, redact.New(nil, []string{"API_TOKEN=sk-secret-123456"}, ""))
	var got struct {
		Error ErrorObject `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Error.Message == "" || !got.Error.Local {
		t.Fatalf("not one JSON error object (%v): %q", err, out.String())
	}
	for _, raw := range []string{"\x1b", "\u009b", "\u202e", "sk-secret-123456"} {
		if strings.Contains(out.String(), raw) {
			t.Errorf("the fallback holds %q raw: %q", raw, out.String())
		}
	}
}

// The object itself: C1 and bidi controls escaped, still the same value.
func TestWriteJSONEscapesControls(t *testing.T) {
	msg := "a\u009bb\u202ec\u2066d"
	var out bytes.Buffer
	WriteJSON(&out, map[string]string{"message": msg}, redact.New(nil, nil, ""))
	if strings.ContainsAny(out.String(), "\u009b\u202e\u2066") {
		t.Errorf("raw controls in %q", out.String())
	}
	var got map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["message"] != msg {
		t.Errorf("%v %q", err, got)
	}
}

// The connected line is inert whatever the server calls itself and
// whatever the target's command line holds.
func TestConnectedLineInert(t *testing.T) {
	tg := target.Target{Command: "srv", Args: []string{"\x1b]8;;http://evil\x07link", "a\u202eb"}}
	info := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ProtocolVersion: "2026-07-28\x1b[2J",
		ServerName: "evil\u009b31m\u202e", ServerVersion: "1\x1b[5m"}
	line := ConnectedLine(tg, info, redact.New(nil, nil, ""))
	if !termsafe.IsSafe(line) {
		t.Errorf("not inert: %q", line)
	}
	if !strings.Contains(line, `evil\u009b31m\u202e 1␛[5m`) {
		t.Errorf("the server's name is not shown with its hazards visible: %q", line)
	}
}
