package npmpeer_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// conformanceClient is the client the suite runs for its auth scenarios:
// it runs inflight as a script would — `auth login URL` (the browser step,
// $BROWSER playing the browser), then `call URL --tool test-tool` — or,
// when the scenario's context gives a machine client (MCP_CONFORMANCE_CONTEXT),
// the call alone with --client-credentials and its secret or its key
// (written to a file for --client-key-file). Tokens are kept in a
// configuration directory of the run's own.
const conformanceClient = `
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const url = process.argv[process.argv.length - 1];
const ctx = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const home = mkdtempSync(join(tmpdir(), 'inflight-conformance-'));
const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, 'config') };
const run = (args) => spawnSync(process.env.INFLIGHT_BIN, args, { env, stdio: ['ignore', 'inherit', 'inherit'] }).status;
const cb = ['--callback-url', process.env.INFLIGHT_CALLBACK];
let client = [];
if (ctx.client_secret) {
  client = ['--client-credentials', '--client-id', ctx.client_id, '--client-secret', ctx.client_secret];
} else if (ctx.private_key_pem) {
  const key = join(home, 'key.pem');
  writeFileSync(key, ctx.private_key_pem, { mode: 0o600 });
  client = ['--client-credentials', '--client-id', ctx.client_id, '--client-key-file', key];
} else {
  if (ctx.client_id) client = ['--client-id', ctx.client_id];
  const code = run(['auth', 'login', url, ...cb, ...client]);
  if (code !== 0) process.exit(code);
}
process.exit(run(['call', url, '--tool', 'test-tool', '--json', ...cb, ...client]));
`

// browserScript plays the user's browser: it follows the authorization URL
// (its argument) through the redirect to inflight's callback.
const browserScript = `await fetch(process.argv[2]).catch(() => process.exit(1));`

// The official conformance suite's auth scenarios, inflight run as a
// script with $BROWSER set: discovery in all its variants, scopes and the
// step-up, token endpoint auth methods, pre-registration, the 2025-03-26
// fallbacks (metadata at the root under another issuer among them), the
// drafts, and machine clients with a secret and with private_key_jwt.
// Each must pass with no failed check. (cross-app-access-complete-flow,
// an enterprise identity provider's token exchange, is not among them:
// inflight does not do it.)
func TestConformanceAuth(t *testing.T) {
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Conform)
	bin := testbin.Build(t, "inflight")
	dir := t.TempDir()
	client := filepath.Join(dir, "client.mjs")
	browser := filepath.Join(dir, "browser.mjs")
	for path, src := range map[string]string{client: conformanceClient, browser: browserScript} {
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, scenario := range []string{
		"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
		"auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
		"auth/scope-step-up", "auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none", "auth/pre-registration",
		"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
		"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
		"auth/client-credentials-jwt", "auth/client-credentials-basic",
	} {
		t.Run(strings.TrimPrefix(scenario, "auth/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, in.NodePath(), filepath.Join(in.Module("@modelcontextprotocol/conformance"), "dist", "index.js"),
				"client", "--command", in.NodePath()+" "+client, "--scenario", scenario, "--timeout", "60000")
			cmd.Dir = t.TempDir() // it writes results/ here
			cmd.Env = append(os.Environ(), "INFLIGHT_BIN="+bin, "INFLIGHT_CALLBACK="+freeCallback(t),
				"BROWSER="+in.NodePath()+" "+browser)
			out, _ := cmd.CombinedOutput()
			if !regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`).Match(out) {
				t.Errorf("%s:\n%s", scenario, tail(string(out)))
			}
		})
	}
}

func freeCallback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/callback"
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
