package npmpeer_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inflight/internal/testkit/npmpeer"
)

// The TypeScript reference server's legacy questions (issue 12's outside
// check): its elicitation, sampling and roots tools ask inflight with
// requests of their own, and inflight call answers them from an answer
// file, declines them, or names roots, on stdio and Streamable HTTP. What
// the server made of each answer is in its tool result, which is asserted
// here: the answer reached it as sent.

type answerReport struct {
	State  string `json:"state"`
	Era    string `json:"era"`
	Result *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	ServerRequests []struct {
		Method string `json:"method"`
		State  string `json:"state"`
		TiedBy string `json:"tiedBy"`
	} `json:"serverRequests"`
	Violations []json.RawMessage `json:"violations"`
}

func (r answerReport) text() string {
	if r.Result == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Result.Content {
		b.WriteString(c.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

const everythingAnswers = `{
  "elicitation/create": {"action": "accept", "content": {"name": "Ada Lovelace", "check": true,
    "email": "ada@example.com", "untitledSingleSelectEnum": "Ross", "untitledMultipleSelectEnum": ["Piano"]}},
  "sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "a canned reply"},
    "model": "inflight-canned", "stopReason": "endTurn"}
}`

func TestEverythingAnswersServerRequests(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	file := filepath.Join(t.TempDir(), "answers.json")
	if err := os.WriteFile(file, []byte(everythingAnswers), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startEverythingHTTP(t, in)
	root := t.TempDir()
	cases := []struct {
		name, tool, args string
		flags            []string
		method, state    string
		// want are strings the server's result must hold: what it made
		// of inflight's answer.
		want []string
	}{
		{name: "elicitation accepted", tool: "trigger-elicitation-request", args: `{}`,
			flags: []string{"--answer-file", file}, method: "elicitation/create", state: "answered",
			want: []string{"Name: Ada Lovelace", `"untitledSingleSelectEnum": "Ross"`, `"action": "accept"`}},
		{name: "elicitation declined", tool: "trigger-elicitation-request", args: `{}`,
			flags: []string{"--decline"}, method: "elicitation/create", state: "declined",
			want: []string{"decline"}},
		{name: "sampling answered", tool: "trigger-sampling-request", args: `{"prompt":"hello"}`,
			flags: []string{"--answer-file", file}, method: "sampling/createMessage", state: "answered",
			want: []string{"a canned reply", "inflight-canned"}},
		{name: "roots named", tool: "get-roots-list", args: `{}`,
			flags: []string{"--root", root}, method: "roots/list", state: "answered",
			want: []string{"file://" + root}},
	}
	for _, transport := range []string{"stdio", "http"} {
		for _, c := range cases {
			t.Run(transport+"/"+c.name, func(t *testing.T) {
				args := []string{"call", "--tool", c.tool, "--args", c.args, "--json", "--timeout", "30s"}
				args = append(args, c.flags...)
				if transport == "http" {
					args = append([]string{"call", url}, args[1:]...)
				} else {
					args = append(append(args, "--"), in.EverythingCommand("stdio")...)
				}
				out := runInflight(t, args...)
				var r answerReport
				if err := json.Unmarshal(out, &r); err != nil {
					t.Fatalf("call --json: %v\n%s", err, out)
				}
				if r.State != "completed" || r.Era != "legacy" {
					t.Fatalf("state %s, era %s; want a completed legacy call\n%s", r.State, r.Era, out)
				}
				// The server may ask again (its roots/list on the GET stream
				// at start, and again from the tool) and a question still
				// open when the call ends is lost with the connection: each
				// is answered as asked, or lost at the end. That the answer
				// reached the server is in its result, below.
				asked := 0
				for _, q := range r.ServerRequests {
					if q.Method != c.method {
						// server-everything asks for the roots of every
						// client that has them, whatever the tool.
						if q.Method != "roots/list" {
							t.Errorf("an unexpected %s (%s)", q.Method, q.State)
						}
						continue
					}
					asked++
					if q.State != c.state && q.State != "connection_lost" {
						t.Errorf("the %s is %s, want %s", q.Method, q.State, c.state)
					}
				}
				if asked == 0 {
					t.Fatalf("no %s was asked\n%s", c.method, out)
				}
				// How it was tied is the server's choice of stream (its
				// roots/list comes on the GET stream) and, on stdio, whether
				// the call was the one request in flight: logged, not asserted.
				t.Logf("%s tied by %s", c.method, r.ServerRequests[0].TiedBy)
				text := r.text()
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("the server's result does not hold %q: the answer did not reach it as sent\n%s", w, text)
					}
				}
				if len(r.Violations) != 0 {
					t.Errorf("violations %s, want none", r.Violations)
				}
			})
		}
	}
}
