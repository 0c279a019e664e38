package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/exitcode"
	"inflight/ui"
)

// shortTemp is a 0700 directory with a short path (a socket's path is
// at most 108 bytes).
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ifa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// recordTrace writes, as a proxy leaves it, NAME.trace in dir naming path.
func recordTrace(t *testing.T, dir, name, path string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".trace"), []byte(path+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAttachDecision: attach NAME opens a live proxy's socket, whatever
// trace it records; once the socket is gone, the trace its NAME.trace
// names; a NAME.trace whose file is gone, or that is a symlink, is an
// error that says so; with neither, the error is as before, with a hint.
func TestAttachDecision(t *testing.T) {
	dir := shortTemp(t)
	run, _ := floodTraceFile(t, 50, time.Now())

	l, err := net.Listen("unix", filepath.Join(dir, "live.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recordTrace(t, dir, "live", run)
	way, err := attachDecision(dir, "live")
	if err != nil || way.conn == nil || way.trace != "" {
		t.Errorf("a live proxy: %+v %v", way, err)
	}
	if way.conn != nil {
		way.conn.Close()
	}

	recordTrace(t, dir, "ended", run)
	if way, err := attachDecision(dir, "ended"); err != nil || way.conn != nil || way.trace != run {
		t.Errorf("an ended proxy: %+v %v, want the trace %s", way, err, run)
	}

	recordTrace(t, dir, "moved", filepath.Join(filepath.Dir(run), "moved.jsonl"))
	if _, err := attachDecision(dir, "moved"); err == nil || !strings.Contains(err.Error(), `proxy "moved" has ended, and the trace it recorded, `) ||
		!strings.Contains(err.Error(), "moved.jsonl, is gone") {
		t.Errorf("a record of a trace that is gone: %v", err)
	}

	if err := os.Symlink(filepath.Join(dir, "ended.trace"), filepath.Join(dir, "link.trace")); err != nil {
		t.Fatal(err)
	}
	if _, err := attachDecision(dir, "link"); err == nil || !strings.Contains(err.Error(), "is refused") || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlink for a record: %v", err)
	}

	_, err = attachDecision(dir, "nothing")
	if err == nil || !strings.Contains(err.Error(), `no proxy named "nothing" is running`) || !strings.HasSuffix(err.Error(), "\n"+noProxyHint) {
		t.Errorf("neither a proxy nor its record: %v", err)
	}
}

// TestAttachEndedOpensTheReplay: on a terminal, the ended proxy's run
// opens in the replay's view (the options carry the trace to replay, not
// a proxy to attach to), headed as the ended proxy's; else the replay's
// table is printed, the same as inflight replay prints; stderr says
// that the proxy has ended either way.
func TestAttachEndedOpensTheReplay(t *testing.T) {
	path, _ := floodTraceFile(t, 300, time.Now())
	var built ui.Options
	var seen string
	f := defaultReplayFlags()
	f.built = func(o ui.Options) { built = o }
	f.run = func(ctx context.Context, m *ui.Model) error {
		m.Init()
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
		seen = ansi.Strip(m.View().Content)
		return nil
	}
	var stdout, stderr bytes.Buffer
	c := &cli{stdout: &stdout, stderr: &stderr}
	if code := c.attachEnded(context.Background(), "gone", path, true, f); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if built.Replay == nil || built.Replay.Trace == nil || built.Attach != nil || built.Source != nil {
		t.Errorf("the view is not a replay: Replay %v Attach %v Source %v", built.Replay, built.Attach, built.Source)
	}
	if built.Target != "attach gone · ended · replay "+path {
		t.Errorf("the header: %q", built.Target)
	}
	for _, want := range []string{"attach gone · ended", "⏸", "1× paused", "⊗ cancelled"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the view lacks %q:\n%s", want, seen)
		}
	}
	said := "inflight attach: proxy gone has ended; this is the run it recorded (" + path + ")\n"
	if stderr.String() != said {
		t.Errorf("stderr %q, want %q", stderr.String(), said)
	}

	stdout.Reset()
	stderr.Reset()
	if code := c.attachEnded(context.Background(), "gone", path, false, f); code != 0 {
		t.Fatalf("the table: exit %d: %s", code, stderr.String())
	}
	_, table, _ := inflight(t, "replay", path)
	if stdout.String() != table || !strings.Contains(table, "request 2: tools/call flood: cancelled") {
		t.Errorf("the table differs from inflight replay's:\n%s\nwant:\n%s", stdout.String(), table)
	}
	if stderr.String() != said {
		t.Errorf("stderr %q, want %q", stderr.String(), said)
	}
}

// TestAttachAfterTheProxyEnded runs the real commands: a call through
// `inflight proxy --trace`, which leaves NAME.trace when it ends; attach
// NAME (stdout not a terminal) then prints the run's table, the list
// shows the proxy ended with its trace, and once the trace is removed
// attach says so.
func TestAttachAfterTheProxyEnded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo server")
	}
	t.Setenv(childEnv, "1")
	runtime := shortTemp(t)
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Chdir(work)
	code, _, stderr := inflight(t, "call", "--tool", "slow", "--args", `{"seconds":0.1,"steps":2}`,
		"--", exe, "proxy", "--name", "done", "--trace", "run.jsonl", "--", exe, "demo-server")
	if code != 0 {
		t.Fatalf("the call through the proxy: exit %d: %s", code, stderr)
	}
	run := filepath.Join(work, "run.jsonl")
	record := filepath.Join(runtime, "inflight", "done.trace")
	if b, err := os.ReadFile(record); err != nil || string(b) != run+"\n" {
		t.Fatalf("the proxy left %q (%v), want the trace's absolute path %s", b, err, run)
	}
	if fi, _ := os.Lstat(record); fi.Mode().Perm() != 0o600 {
		t.Errorf("NAME.trace mode %04o", fi.Mode().Perm())
	}

	code, out, stderr := inflight(t, "attach", "done")
	if code != 0 || !strings.Contains(out, "tools/call slow: completed") || !strings.Contains(stderr, "proxy done has ended; this is the run it recorded ("+run+")") {
		t.Errorf("attach after the end: exit %d\n%s\nstderr: %s", code, out, stderr)
	}
	if code, plain, _ := inflight(t, "attach", "--plain", "done"); code != 0 || plain != out {
		t.Errorf("attach --plain: exit %d:\n%s", code, plain)
	}
	if code, list, _ := inflight(t, "attach"); code != 0 || !strings.Contains(list, "done") || !strings.Contains(list, "ended (trace "+run+")") {
		t.Errorf("the list: exit %d:\n%s", code, list)
	}

	if err := os.Remove(run); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = inflight(t, "attach", "done")
	if code != exitcode.Usage || !strings.Contains(stderr, `proxy "done" has ended, and the trace it recorded, `+run+", is gone") {
		t.Errorf("attach once the trace is gone: exit %d: %s", code, stderr)
	}
	if _, list, _ := inflight(t, "attach"); !strings.Contains(list, "ended (trace "+run+", gone since)") {
		t.Errorf("the list once the trace is gone:\n%s", list)
	}
	code, _, stderr = inflight(t, "attach", "other")
	if code != exitcode.Usage || !strings.Contains(stderr, `inflight attach: no proxy named "other" is running`) ||
		!strings.Contains(stderr, "inflight attach: "+noProxyHint) {
		t.Errorf("attach to no proxy: exit %d: %s", code, stderr)
	}
}
