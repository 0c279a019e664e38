package proxy

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantSocket listens on dir/NAME.sock as an impostor would.
func plantSocket(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name+".sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return path
}

// TestAttachRefusesAnotherUsersDirectory: a socket directory owned by
// another user (uid 65534 plays them) is refused by Attach and List, as
// the proxy refuses to listen there, before anything is dialled.
func TestAttachRefusesAnotherUsersDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	dir := privateTemp(t)
	plantSocket(t, dir, "planted")
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	c, err := Attach(dir, "planted")
	if err == nil {
		c.Close()
		t.Fatal("Attach dialled a socket in another user's directory")
	}
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "belongs to user 65534, not you") {
		t.Fatalf("Attach error = %v, want the directory's owner named and ErrUntrusted", err)
	}
	if _, err := List(dir); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("List error = %v, want ErrUntrusted", err)
	}
}

// TestAttachRefusesAnOpenDirectory: a directory others may write in
// (0777) is refused; so is a socket of another user's in the user's own
// directory.
func TestAttachRefusesAnOpenDirectory(t *testing.T) {
	dir := privateTemp(t)
	plantSocket(t, dir, "planted")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	c, err := Attach(dir, "planted")
	if err == nil {
		c.Close()
		t.Fatal("Attach dialled a socket in a directory open to everyone")
	}
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "mode 0777") {
		t.Fatalf("Attach error = %v, want the mode named and ErrUntrusted", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c, err = Attach(dir, "planted")
	if err != nil {
		t.Fatalf("Attach in the user's own directory: %v", err)
	}
	c.Close()
	if os.Getuid() != 0 {
		return
	}
	path := filepath.Join(dir, "planted.sock")
	if err := os.Lchown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	c, err = Attach(dir, "planted")
	if err == nil {
		c.Close()
		t.Fatal("Attach dialled another user's socket")
	}
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "socket "+path+" belongs to user 65534") {
		t.Fatalf("Attach error = %v, want the socket's owner named", err)
	}
}
