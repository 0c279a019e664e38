package npmpeer_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/npmpeer"
	"inflight/internal/testkit/testbin"
)

// The official conformance suite's client scenario
// elicitation-sep1034-client-defaults: its server (legacy Streamable
// HTTP, 2025-11-25) has one tool that sends elicitation/create with a
// default for each kind of field and checks that the client's accept
// carries every default. The suite runs the client as
// `<command> <server URL>` (split on spaces, the URL appended), so the
// command ends with --url. inflight call answers from an answer file that
// accepts with no content of its own: every field comes from the
// requestedSchema's defaults.
func TestConformanceElicitationDefaults(t *testing.T) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Conform)
	bin := testbin.Build(t, "inflight")
	dir := t.TempDir()
	answers := filepath.Join(dir, "answers.json")
	if err := os.WriteFile(answers, []byte(`{"elicitation/create":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(command string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, in.NodePath(), filepath.Join(in.Module("@modelcontextprotocol/conformance"), "dist", "index.js"),
			"client", "--command", command, "--scenario", "elicitation-sep1034-client-defaults", "--timeout", "60000")
		cmd.Dir = dir // it writes results/ here
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(bin + " call --tool test_client_elicitation_defaults --answer-file " + answers + " --json --url")
	if err != nil || !strings.Contains(out, "Passed: 5/5, 0 failed") {
		t.Fatalf("conformance elicitation-sep1034-client-defaults with --answer-file: %v\n%s", err, tail(out))
	}
	// Without answers inflight declares no elicitation capability, and the
	// scenario fails: the run above passed because of the answers.
	out, err = run(bin + " call --tool test_client_elicitation_defaults --json --url")
	if err == nil || strings.Contains(out, "Passed: 5/5") {
		t.Errorf("the scenario passed with no answers given (%v)\n%s", err, tail(out))
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

// The TypeScript reference server's legacy elicitation and sampling tools
// (each registered only for a client that declares the capability), as
// server requests inflight call answers from a file, or declines.
func TestEverythingAnswered(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	answers := filepath.Join(t.TempDir(), "answers.json")
	if err := os.WriteFile(answers, []byte(`{"elicitation/create":{"name":"Ada","check":true},"sampling/createMessage":"a canned reply"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args  []string
		want  string
		state string // of the server request
	}{
		{[]string{"--tool", "trigger-elicitation-request", "--answer-file", answers}, `"name": "Ada"`, "answered"},
		{[]string{"--tool", "trigger-elicitation-request", "--decline"}, "declined", "declined"},
		{[]string{"--tool", "trigger-sampling-request", "--args", `{"prompt":"hi"}`, "--answer-file", answers}, "a canned reply", "answered"},
		{[]string{"--tool", "trigger-sampling-request", "--args", `{"prompt":"hi"}`, "--decline"}, "User rejected sampling request", "declined"},
	}
	for _, tc := range tests {
		args := append(append([]string{"call", "--json"}, tc.args...), "--")
		out := runInflight(t, append(args, in.EverythingCommand("stdio")...)...)
		var rep struct {
			State          string          `json:"state"`
			Result         json.RawMessage `json:"result"`
			ServerRequests []struct {
				State, Method, TiedBy string
			} `json:"serverRequests"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !strings.Contains(string(out), tc.want) || len(rep.ServerRequests) != 1 || rep.ServerRequests[0].State != tc.state ||
			rep.ServerRequests[0].TiedBy != "only_request_in_flight" {
			t.Errorf("%s: state %s, server requests %+v, want %s and %q in\n%s", strings.Join(tc.args, " "), rep.State, rep.ServerRequests, tc.state, tc.want, out)
		}
	}
}
