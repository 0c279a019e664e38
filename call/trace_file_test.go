//go:build unix

package call

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inflight/internal/testkit/testserver"
)

// --trace writes a file of the user's alone and never through a symlink:
// one planted at the path is refused, and the file it names is untouched.
func TestCallTraceFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	tg := testserver.Stdio(t, testserver.Modern)
	path := filepath.Join(dir, "t.jsonl")
	var stdout, stderr bytes.Buffer
	Run(context.Background(), Options{Target: tg, Method: "ping", JSON: true, TracePath: path}, &stdout, &stderr)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the trace file's mode is %v, want 0600", fi.Mode().Perm())
	}

	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	code := Run(context.Background(), Options{Target: tg, Method: "ping", JSON: true, TracePath: link}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stdout.String()+stderr.String(), "symbolic link") {
		t.Errorf("a symlink as --trace: exit %d, said %q %q", code, stdout.String(), stderr.String())
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the symlink's target was truncated: %q", b)
	}
}
