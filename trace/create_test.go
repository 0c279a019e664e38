package trace

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A trace file is the user's alone (0600), and a symlink at its path is
// refused, never followed: the file it names is left as it was.
func TestCreateIsPrivateAndFollowsNoSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.trace")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("a new trace file: %v, %v; want mode 0600", fi.Mode(), err)
	}

	// An existing file is truncated and made private.
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 0 {
		t.Fatalf("an existing trace file: %v (%d bytes), %v; want it empty and 0600", fi.Mode(), fi.Size(), err)
	}

	if runtime.GOOS == "windows" {
		return
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.trace")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if f, err := Create(link); err == nil {
		f.Close()
		t.Error("a symlink at the trace's path was followed")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o644 {
		t.Errorf("the symlink's target's mode changed: %v", fi.Mode())
	}
}
