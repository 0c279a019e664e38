package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/testbin"
)

// privateTemp is a 0700 directory for sockets. Unix socket paths are
// short (108 bytes), so it lives directly under the temporary directory.
func privateTemp(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ifp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestAttachStreamsTheRecord: a viewer on the socket gets the proxy's
// Hello, then the trace's lines as they are recorded; the socket is 0600
// and gone after the proxy; List finds the proxy while it runs.
func TestAttachStreamsTheRecord(t *testing.T) {
	dir := privateTemp(t)
	tmp := t.TempDir()
	send := filepath.Join(tmp, "send")
	if err := os.WriteFile(send, []byte(`{"jsonrpc":"2.0","id":9,"result":{}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, env := helper(t, "script", "SEND="+send, "GOT="+filepath.Join(tmp, "got"))
	h := newHost(t)
	// The host's request is written before the viewer attaches; the
	// viewer sees what is recorded from then on.
	wait := run(t, h, cmd, Options{Name: "watched", Env: env, SocketDir: dir})
	path := filepath.Join(dir, "watched.sock")
	var conn net.Conn
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := Attach(dir, "watched")
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attach: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer conn.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	r := bufio.NewReader(conn)
	first, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var hl Hello
	if err := json.Unmarshal(first, &hl); err != nil || hl.Proxy != "watched" || hl.PID != os.Getpid() {
		t.Fatalf("hello %q: %+v %v", first, hl, err)
	}
	running, err := List(dir)
	if err != nil || len(running) != 1 || running[0].Proxy != "watched" || running[0].Stale {
		t.Errorf("List: %+v %v", running, err)
	}
	io.WriteString(h.inW, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	// A second viewer, attached once the request is recorded, still
	// sees it begin: the stream starts with the recent history.
	var late []byte
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c2, err := Attach(dir, "watched")
		if err != nil {
			t.Fatal(err)
		}
		_ = c2.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		late, _ = io.ReadAll(c2)
		c2.Close()
		if strings.Contains(string(late), `"target":"slow"`) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.HasPrefix(string(late), `{"stream":"trace","proxy":"watched"`) || !strings.Contains(string(late), `"dir":"out","by":"host","id":9`) {
		t.Errorf("a late viewer's stream lacks the hello or the history:\n%s", late)
	}
	h.inW.Close()
	rest, _ := io.ReadAll(r) // to the end: the proxy closes viewers as it ends
	res := wait()
	for _, want := range []string{`"dir":"out","by":"host","id":9`, `"event":"state","state":"pending","method":"tools/call","target":"slow"`, `"event":"transport_closed"`} {
		if !strings.Contains(string(rest), want) {
			t.Errorf("the stream lacks %s:\n%s", want, rest)
		}
	}
	if res.Socket != path {
		t.Errorf("socket %q, want %q", res.Socket, path)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket outlived the proxy: %v", err)
	}
}

// TestSocketRefusals: a directory others may enter, a path that is not a
// socket (a symlink: never followed), a live proxy's name are refused; a
// stale socket is replaced.
func TestSocketRefusals(t *testing.T) {
	open := privateTemp(t)
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := listen(open, "x"); err == nil || !strings.Contains(err.Error(), "open to other users (mode 0755)") {
		t.Errorf("a 0755 directory: %v", err)
	}

	dir := privateTemp(t)
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "link.sock")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := listen(dir, "link"); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Errorf("a symlink: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symlink's target changed")
	}

	l, _, err := listen(dir, "live")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := listen(dir, "live"); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a live proxy's name: %v", err)
	}
	l.Close()

	// A crashed proxy leaves its socket behind (nothing unlinks it).
	stale, _, err := listen(dir, "stale")
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	if running, _ := List(dir); len(running) != 1 || !running[0].Stale {
		t.Errorf("List with a stale socket: %+v", running)
	}
	again, _, err := listen(dir, "stale")
	if err != nil {
		t.Fatalf("a stale socket was not replaced: %v", err)
	}
	again.Close()
	if _, _, err := listen(dir, "../escape"); err == nil {
		t.Errorf("a name with a slash was accepted")
	}
}

// TestAttachCommandLists runs the real commands: `inflight proxy` in front
// of a server, then `inflight attach` lists it by name (sockets under
// $XDG_RUNTIME_DIR/inflight); the proxy ends with its host and its socket
// goes with it.
func TestAttachCommandLists(t *testing.T) {
	inflight := testbin.Build(t, "inflight")
	runtimeDir := privateTemp(t)
	exe, env := helper(t, "pong")
	cmd := exec.Command(inflight, "proxy", "--name", "listed", "--", exe)
	cmd.Env = append(append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(runtimeDir, "inflight", "listed.sock")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no socket")
		}
	}
	list := exec.Command(inflight, "attach")
	list.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
	out, err := list.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "listed ") || !strings.Contains(string(out), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("inflight attach: %v\n%s", err, out)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the proxy's exit: %v", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlived the proxy: %v", err)
	}
}

// TestHistoryStaysBounded: the history a late viewer gets is at most its
// limit, and starts at the start of a line.
func TestHistoryStaysBounded(t *testing.T) {
	b := &broadcast{limit: 1000}
	for i := range 500 {
		fmt.Fprintf(b, `{"ms":%d,"dir":"in"}`+"\n", i)
		if i == 0 && b.cut {
			t.Error("a history within its limit is said to be cut")
		}
	}
	if !b.cut {
		t.Error("the history was cut and viewers would not be told (Hello.HistoryCut)")
	}
	history := b.historyText()
	if len(history) > 1000 || len(history) < 900 || !strings.HasPrefix(string(history), `{"ms":`) ||
		!strings.HasSuffix(string(history), `{"ms":499,"dir":"in"}`+"\n") {
		t.Errorf("history of %d bytes: %.60q…", len(history), history)
	}
}
