package replay

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"inflight/call"
	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
)

// A multi round-trip request replays as one section: its rounds under
// their own IDs, in the first round's table.
func TestReplayRounds(t *testing.T) {
	dir := t.TempDir()
	answers := filepath.Join(dir, "answers.json")
	if err := os.WriteFile(answers, []byte(`{"name":{"name":"Grace"},"colour":{"colour":"blue"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "trace.jsonl")
	code := call.Run(context.Background(), call.Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
		Params: testserver.ToolParams(t, "two_rounds", `{}`), AnswerFile: answers, TracePath: path}, io.Discard, io.Discard)
	if code != exitcode.Completed {
		t.Fatalf("call exit %d", code)
	}
	var out, errOut bytes.Buffer
	if code := File(path, Options{}, &out, &errOut); code != 0 {
		t.Fatalf("replay exit %d: %s", code, errOut.String())
	}
	s := out.String()
	for _, want := range []string{"1 request\n", "request 1: tools/call two_rounds: completed", "state waiting_input",
		"state pending · round 2, #2", "state pending · round 3, #3", `"inputResponses":{"name"`, "until completed"} {
		testserver.MustContain(t, s, want)
	}
}
