package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The TUI answers a server's roots/list from --root, without a prompt;
// with no --root it answers an empty list (the default is none).
func TestTUIRootsFromFlags(t *testing.T) {
	res, err := rootsResult(nil)
	if err != nil || string(res) != `{"roots":[]}` {
		t.Fatalf("no --root: %s %v", res, err)
	}
	dir := t.TempDir()
	res, err = rootsResult([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Roots []struct{ URI, Name string } `json:"roots"`
	}
	if err := json.Unmarshal(res, &got); err != nil || len(got.Roots) != 1 {
		t.Fatalf("%s %v", res, err)
	}
	if got.Roots[0].URI != "file://"+filepath.ToSlash(dir) || got.Roots[0].Name != filepath.Base(dir) {
		t.Errorf("root %+v for %s", got.Roots[0], dir)
	}
	code, stdout, _ := inflight(t, "--help")
	if code != 0 || !strings.Contains(stdout, "--root DIR") {
		t.Errorf("inflight --help lacks --root DIR (exit %d)", code)
	}
}
