package cli

import (
	"strings"
	"testing"

	"inflight/exitcode"
	"inflight/internal/testkit/hostile"
)

// A server's error message holding a C1 CSI (U+009B) and a bidi override
// (U+202E), properly escaped on the wire, comes out of `call --json`
// escaped too — Go's encoder would write both raw — and the object still
// parses to the very same message.
func TestCallJSONEscapesC1AndBidi(t *testing.T) {
	exe, env, err := hostile.Command(hostile.ControlError, "")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"call", "--tool", hostile.ToolName, "--json"}
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	code, stdout, stderr := inflight(t, append(args, "--", exe)...)
	for _, raw := range []string{"\u009b", "\u202e", "\x1b"} {
		if strings.Contains(stdout, raw) {
			t.Errorf("--json holds %q raw:\n%s", raw, stdout)
		}
	}
	for _, esc := range []string{`\u009b`, `\u202e`} {
		if !strings.Contains(stdout, esc) {
			t.Errorf("--json lacks %s:\n%s", esc, stdout)
		}
	}
	rep := decodeReport(t, stdout)
	if code != exitcode.Failed || rep.Error == nil || rep.Error.Message != hostile.HazardText ||
		!strings.Contains(string(rep.Error.Data), `\u202e`) {
		t.Errorf("exit %d, error %+v\nstderr: %s", code, rep.Error, stderr)
	}
}
