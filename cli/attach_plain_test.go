package cli

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"inflight/proxy"
)

// hostilePlain is what an impostor socket might send attach --plain: an
// OSC 52 clipboard write, a screen clear, a one-byte CSI (C1), a rune
// the reads may cut in two, and a line of the proxy's own kind.
const hostilePlain = "\x1b]52;c;aGk=\x07\x1b[2J\u009b31m é ok\n{\"dir\":\"recv\"}\n"

// TestCopyPlainToTerminalIsInert: on a terminal nothing read reaches it
// raw — every escape and C1 byte shows as a placeholder — whatever size
// the reads are; piped, the bytes pass exactly.
func TestCopyPlainToTerminalIsInert(t *testing.T) {
	for _, oneByte := range []bool{false, true} {
		var r = strings.NewReader(hostilePlain)
		var got bytes.Buffer
		if oneByte {
			if err := copyPlain(&got, iotest.OneByteReader(r), true); err != nil {
				t.Fatal(err)
			}
		} else if err := copyPlain(&got, r, true); err != nil {
			t.Fatal(err)
		}
		out := got.String()
		for _, raw := range []string{"\x1b", "\x07", "\u009b"} {
			if strings.Contains(out, raw) {
				t.Errorf("oneByte=%v: %q reached the terminal raw: %q", oneByte, raw, out)
			}
		}
		want := "␛]52;c;aGk=␇␛[2J\\u009b31m é ok\n{\"dir\":\"recv\"}\n"
		if out != want {
			t.Errorf("oneByte=%v: terminal got %q, want %q", oneByte, out, want)
		}
	}
	var piped bytes.Buffer
	if err := copyPlain(&piped, iotest.OneByteReader(strings.NewReader(hostilePlain)), false); err != nil {
		t.Fatal(err)
	}
	if piped.String() != hostilePlain {
		t.Errorf("piped = %q, want the bytes exactly %q", piped.String(), hostilePlain)
	}
}

// TestAttachRefusesAnOpenSocketDirectory: attach NAME in a directory
// others may write in says so, rather than dialling what is there or
// looking for a recorded trace.
func TestAttachRefusesAnOpenSocketDirectory(t *testing.T) {
	dir, err := os.MkdirTemp("", "ifa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "planted.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	way, err := attachDecision(dir, "planted")
	if way.conn != nil {
		way.conn.Close()
	}
	if err == nil || !errors.Is(err, proxy.ErrUntrusted) || !strings.Contains(err.Error(), "open to other users (mode 0777)") {
		t.Fatalf("attachDecision = %v, want the open directory refused", err)
	}
	if os.Getuid() != 0 {
		return
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := attachDecision(dir, "planted"); err == nil || !strings.Contains(err.Error(), "belongs to user 65534, not you") {
		t.Fatalf("attachDecision = %v, want another user's directory refused", err)
	}
}
