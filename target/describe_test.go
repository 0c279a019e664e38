package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inflight/termsafe"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A config entry's command line is whatever the file says: an ESC (an
// OSC title write) and a bidi override in its args print inert on the
// "connected to" line, each word quoted so that it still pastes into a
// shell, and a secret in the args stays hidden.
func TestDescribeConfigArgsInert(t *testing.T) {
	path := writeConfig(t, `{"mcpServers":{"evil\u009b":{"command":"node\u202e","args":["server.js","\u001b]0;PWNED\u0007","abc\u202etxt.exe","--token=tok-secret-123456"],
		"env":{"API_TOKEN":"tok-secret-123456"}}}}`)
	tg, err := LoadConfigFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	d := tg.Describe()
	if !termsafe.IsSafe(d) {
		t.Errorf("Describe is not inert: %q", d)
	}
	for _, bad := range []string{"\x1b", "\a", "\u202e", "\u009b", "tok-secret-123456"} {
		if strings.Contains(d, bad) {
			t.Errorf("Describe holds %q: %q", bad, d)
		}
	}
	for _, want := range []string{`$'\e]0;PWNED\x07'`, `$'abc\u202etxt.exe'`, `$'node\u202e'`, "server.js"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe lacks %s: %s", want, d)
		}
	}
}

// A URL and header values from a config file print inert too.
func TestDescribeURLInert(t *testing.T) {
	path := writeConfig(t, `{"mcpServers":{"h":{"url":"http://127.0.0.1/mcp?x=\u001b[2J","headers":{"X-Note":"a\u009bb\u202ec"}}}}`)
	tg, err := LoadConfigFile(path, "h")
	if err != nil {
		t.Fatal(err)
	}
	if d := tg.Describe(); !termsafe.IsSafe(d) || !strings.Contains(d, "X-Note: ") {
		t.Errorf("Describe is not inert: %q", d)
	}
}

// A ${input:…} inside a config entry's args cannot be given with --env or
// -H (nor with any flag: --config does not combine with "--"), and the
// error says what can: edit the file, or pass the command after "--".
func TestUnresolvedInputInArgs(t *testing.T) {
	path := writeConfig(t, `{"servers":{"s":{"type":"stdio","command":"srv","args":["--token","${input:token}"],"env":{"K":"${input:k}"}}}}`)
	tg, err := LoadConfigFile(path, "s")
	if err != nil {
		t.Fatal(err)
	}
	msg := tg.Validate().Error()
	for _, want := range []string{"args[1] uses ${input:token}", "env K uses ${input:k}", "--env K=…",
		"no flag can replace the entry's args[1]", "edit the config file", "after -- instead of --config"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "-H") {
		t.Errorf("the error offers -H for a stdio entry: %s", msg)
	}
	tg.Override([]string{"K=v"}, nil, "")
	msg = tg.Validate().Error()
	if strings.Contains(msg, "env K") || strings.Contains(msg, "--env") || !strings.Contains(msg, "args[1] uses ${input:token}") {
		t.Errorf("after --env K=v: %s", msg)
	}
}
