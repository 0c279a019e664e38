// Package testbin builds this module's commands for tests that must run
// them as real processes (peers, minimal clients, inflight itself): each
// import path is built once per test binary with `go build`, into one
// temporary directory that RemoveAll deletes.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	mu     sync.Mutex
	dir    string
	seq    int
	builds = map[string]*build{}
)

type build struct {
	once sync.Once
	path string
	err  error
}

// Build returns the path of the executable built from importPath (a main
// package of this module, e.g. "inflight" or "inflight/internal/testkit/floodpeer/peer"),
// building it the first time a test of this binary asks and reusing it
// after that; concurrent callers wait for the one build. A failed build
// fails t; without the go command it skips t, since nothing can be built.
func Build(t testing.TB, importPath string) string {
	t.Helper()
	goTool, err := goCommand()
	if err != nil {
		t.Skipf("testbin: building %s needs the go command: %v", importPath, err)
	}
	mu.Lock()
	b := builds[importPath]
	if b == nil {
		b = &build{}
		builds[importPath] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.path, b.err = compile(goTool, importPath) })
	if b.err != nil {
		t.Fatalf("testbin: %v", b.err)
	}
	return b.path
}

// RemoveAll deletes everything Build built. A TestMain calls it after
// m.Run; without it the executables stay in the system's temporary
// directory.
func RemoveAll() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		_ = os.RemoveAll(dir)
		dir = ""
	}
	builds = map[string]*build{}
}

func compile(goTool, importPath string) (string, error) {
	mu.Lock()
	if dir == "" {
		d, err := os.MkdirTemp("", "inflight-testbin-")
		if err != nil {
			mu.Unlock()
			return "", fmt.Errorf("temporary directory: %w", err)
		}
		dir = d
	}
	// Two import paths may end alike (…/peer); a number keeps them apart.
	seq++
	out := filepath.Join(dir, fmt.Sprintf("%d-%s", seq, path.Base(importPath)))
	mu.Unlock()
	// Built as plain binaries whatever the test binary is (-race, -cover):
	// they are the processes under test, not the code under test.
	cmd := exec.Command(goTool, "build", "-o", out, importPath)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", importPath, err, msg)
	}
	return out, nil
}

// goCommand finds the go command: on PATH, or in the GOROOT this binary
// was built with.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("not on PATH nor in %s", filepath.Dir(p))
	}
	return p, nil
}
