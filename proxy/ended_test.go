package proxy

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/trace"
)

// runToEnd runs a proxy of name in front of the pong helper, recording
// to tracePath ("": no trace), writes the host one request and ends the
// host; it returns the proxy's stderr.
func runToEnd(t *testing.T, dir, name, tracePath string) string {
	t.Helper()
	cmd, env := helper(t, "pong")
	h := newHost(t)
	stderr := &syncBuffer{}
	opts := Options{Name: name, Env: env, SocketDir: dir, Stderr: stderr, TracePath: tracePath}
	var f *os.File
	if tracePath != "" {
		var err error
		if f, err = trace.Create(tracePath); err != nil {
			t.Fatal(err)
		}
		opts.Trace = trace.NewWriter(f, time.Now(), nil)
		opts.Trace.SetSenders("host", "server")
	}
	wait := run(t, h, cmd, opts)
	_, _ = io.WriteString(h.inW, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")
	for deadline := time.Now().Add(5 * time.Second); h.gotLen() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no answer through the proxy")
		}
	}
	h.inW.Close()
	wait()
	if f != nil {
		opts.Trace.Close()
		f.Close()
	}
	return stderr.String()
}

// TestTraceRecordOutlivesTheProxy: a proxy run with a trace leaves, once
// ended, NAME.trace (0600) naming the trace, beside the socket that went
// with it; List shows it ended; the next proxy of that name replaces
// the record, or removes it when it records no trace.
func TestTraceRecordOutlivesTheProxy(t *testing.T) {
	dir := privateTemp(t)
	first := filepath.Join(t.TempDir(), "first.jsonl")
	if said := runToEnd(t, dir, "kept", first); strings.Contains(said, "no record of the trace") {
		t.Fatalf("the proxy said: %s", said)
	}
	record := filepath.Join(dir, "kept.trace")
	fi, err := os.Lstat(record)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("NAME.trace after the end: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(record); string(b) != first+"\n" {
		t.Errorf("NAME.trace holds %q, want the trace's path %q", b, first)
	}
	if _, err := os.Lstat(filepath.Join(dir, "kept.sock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket outlived the proxy: %v", err)
	}
	if got, err := RecordedTrace(dir, "kept"); err != nil || got != first {
		t.Errorf("RecordedTrace: %q %v, want %q", got, err, first)
	}
	if b, _ := os.ReadFile(first); !strings.Contains(string(b), `"method":"tools/list"`) {
		t.Errorf("the trace lacks the host's request:\n%s", b)
	}
	running, err := List(dir)
	if err != nil || len(running) != 1 || !running[0].Ended || running[0].Trace != first || running[0].Proxy != "kept" || running[0].Path != "" {
		t.Errorf("List after the end: %+v %v", running, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the socket directory holds %d entries, want NAME.trace alone: %v", len(entries), entries)
	}

	second := filepath.Join(t.TempDir(), "second.jsonl")
	runToEnd(t, dir, "kept", second)
	if got, err := RecordedTrace(dir, "kept"); err != nil || got != second {
		t.Errorf("after a second run: %q %v, want %q", got, err, second)
	}
	runToEnd(t, dir, "kept", "")
	if got, err := RecordedTrace(dir, "kept"); !errors.Is(err, ErrNoTrace) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after a run with no trace: %q %v, want no record", got, err)
	}
	if running, _ := List(dir); len(running) != 0 {
		t.Errorf("List: %+v", running)
	}
}

// TestTraceRecordRefusals: a symlink at NAME.trace is neither followed
// nor replaced (the proxy runs on, saying so) nor read; a record that
// names no absolute path, and a directory others may enter, are refused.
func TestTraceRecordRefusals(t *testing.T) {
	dir := privateTemp(t)
	precious := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(precious, []byte("/keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(precious, filepath.Join(dir, "link.trace")); err != nil {
		t.Fatal(err)
	}
	said := runToEnd(t, dir, "link", filepath.Join(t.TempDir(), "run.jsonl"))
	if !strings.Contains(said, "no record of the trace for inflight attach after the end") || !strings.Contains(said, "is not a regular file") {
		t.Errorf("the proxy's stderr: %s", said)
	}
	if b, _ := os.ReadFile(precious); string(b) != "/keep\n" {
		t.Errorf("the symlink's target changed: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.trace")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v %v", fi, err)
	}
	if got, err := RecordedTrace(dir, "link"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("RecordedTrace through a symlink: %q %v", got, err)
	}
	if err := markTrace(dir, "link", ""); err == nil {
		t.Error("markTrace removed a symlink it refuses to replace")
	}

	if err := markTrace(dir, "rel", "run.jsonl"); err == nil {
		t.Error("a relative trace path was recorded")
	}
	if err := os.WriteFile(filepath.Join(dir, "junk.trace"), []byte("run.jsonl\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := RecordedTrace(dir, "junk"); err == nil || !strings.Contains(err.Error(), "does not hold a trace file's path") {
		t.Errorf("a record of a relative path: %q %v", got, err)
	}
	if _, err := RecordedTrace(dir, "../escape"); !errors.Is(err, ErrNoTrace) {
		t.Errorf("a name with a slash: %v", err)
	}
	if _, err := RecordedTrace(filepath.Join(dir, "missing"), "x"); !errors.Is(err, ErrNoTrace) {
		t.Errorf("no socket directory: %v", err)
	}

	open := privateTemp(t)
	if err := markTrace(open, "x", "/a/trace.jsonl"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RecordedTrace(open, "x"); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("a 0755 directory: %v", err)
	}
}
