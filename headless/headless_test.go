package headless

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/exitcode"
	"inflight/redact"
	"inflight/target"
	"inflight/trace"
)

const token = "s3cr3t-t0ken-value-1234"

func secretTarget() target.Target {
	return target.Target{URL: "http://127.0.0.1:1/mcp", Headers: http.Header{"Authorization": {"Bearer " + token}}}
}

// A failure is said once on stderr, named by its command, on one line and
// with the target's secrets hidden; the --json object gets the same words
// and the exit code.
func TestFailRedactsAndCallsNotRun(t *testing.T) {
	var stderr bytes.Buffer
	var gotCode int
	var gotMsg string
	r := Begin("inflight call", secretTarget(), &stderr, func(code int, msg string, red *redact.Redactor) {
		gotCode, gotMsg = code, msg
		if red == nil {
			t.Error("notRun got no redactor")
		}
	})
	code := r.Fail(exitcode.Usage, errors.New("refused Bearer "+token+"\nsecond line"))
	if code != exitcode.Usage || gotCode != exitcode.Usage {
		t.Errorf("Fail returned %d and passed %d, want %d", code, gotCode, exitcode.Usage)
	}
	out := stderr.String()
	if strings.Contains(out, token) || strings.Contains(gotMsg, token) {
		t.Errorf("the secret leaked: stderr %q, --json message %q", out, gotMsg)
	}
	if !strings.HasPrefix(out, "inflight call: refused ") || strings.Count(out, "\n") != 1 {
		t.Errorf("stderr = %q, want one line beginning with the command's name", out)
	}
	if !strings.HasPrefix(gotMsg, "refused ") || !strings.HasSuffix(gotMsg, "second line") {
		t.Errorf("--json message = %q", gotMsg)
	}
}

// Without --json nothing but stderr hears of the failure.
func TestFailWithoutJSON(t *testing.T) {
	var stderr bytes.Buffer
	r := Begin("inflight check", secretTarget(), &stderr, nil)
	if code := r.Fail(exitcode.Failed, errors.New("boom")); code != exitcode.Failed {
		t.Errorf("Fail returned %d, want %d", code, exitcode.Failed)
	}
	if got := stderr.String(); got != "inflight check: boom\n" {
		t.Errorf("stderr = %q", got)
	}
}

// The --trace file: none without a path; an error naming the flag when it
// cannot be created; otherwise a trace that Close writes out.
func TestCreateTrace(t *testing.T) {
	r := Begin("inflight call", secretTarget(), &bytes.Buffer{}, nil)
	if err := r.CreateTrace("", time.Now()); err != nil || r.Trace != nil {
		t.Fatalf("no path: err %v, trace %v; want neither", err, r.Trace)
	}
	if err := r.FlushTrace(); err != nil {
		t.Errorf("FlushTrace without a trace: %v", err)
	}
	r.Close() // nothing to close

	bad := filepath.Join(t.TempDir(), "missing", "trace.jsonl")
	if err := r.CreateTrace(bad, time.Now()); err == nil || !strings.HasPrefix(err.Error(), "--trace: ") {
		t.Errorf("CreateTrace(%q) = %v, want an error beginning with --trace:", bad, err)
	}

	path := filepath.Join(t.TempDir(), "trace.jsonl")
	r = Begin("inflight call", secretTarget(), &bytes.Buffer{}, nil)
	if err := r.CreateTrace(path, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r.Trace == nil {
		t.Fatal("CreateTrace made no trace writer")
	}
	if err := r.Trace.Write(trace.Record{Event: trace.EventTransportClosed, Text: "a note naming " + token}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("a note naming")) {
		t.Errorf("Close did not write the trace out: %q", data)
	}
	if bytes.Contains(data, []byte(token)) {
		t.Errorf("the trace holds the secret: %q", data)
	}
}
