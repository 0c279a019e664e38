package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// /dev/null is a character device but no terminal: output sent there (or
// to a file) gets plain progress lines, never a bar redrawn in place.
func TestIsTerminalNotForDevNullOrFiles(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("%s taken for a terminal", os.DevNull)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file taken for a terminal")
	}
}
