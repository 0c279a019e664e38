// Package jaeger runs a real Jaeger (v2, the OpenTelemetry collector
// build, all in one with in-memory storage) for the tests of the OTLP
// export: its OTLP/HTTP receiver and its HTTP query API on free ports of
// 127.0.0.1, and a reader of the traces it stored.
//
// The binary is built with `go build` from the tool module beside this
// file (tool/go.mod, kept apart so that the main go.mod stays lean), once,
// into a shared cache directory (INFLIGHT_JAEGER_CACHE, else the user's
// cache directory) keyed by the tool module's go.mod, under a file lock so
// that concurrent test binaries share one build; `.ci/run` warms it with
// `go run ./internal/testkit/jaeger/warm`. A test that needs Jaeger calls
// Start; it is skipped, with the reason, only when the Go module proxy
// cannot be reached. Any other build failure fails the test.
package jaeger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"inflight/internal/testkit/cachelock"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Version is the Jaeger the tool module builds.
const Version = "v1.76.0"

// ErrUnreachable marks a build that failed because the Go module proxy
// could not be reached.
var ErrUnreachable = errors.New("the Go module proxy cannot be reached")

// toolDir is the tool module's directory.
func toolDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("jaeger: cannot tell where the tool module is")
	}
	return filepath.Join(filepath.Dir(file), "tool"), nil
}

// Ensure builds the jaeger binary into the cache unless it is there, and
// returns its path.
func Ensure(ctx context.Context) (string, error) {
	dir, err := toolDir()
	if err != nil {
		return "", err
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(mod)
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(root, Version+"-"+hex.EncodeToString(sum[:6]))
	bin := filepath.Join(out, "jaeger")
	if isFile(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	unlock, err := cachelock.Lock(filepath.Join(out, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if isFile(bin) {
		return bin, nil // another process built it while this one waited
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "github.com/jaegertracing/jaeger/cmd/jaeger")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		if unreachable(string(b)) {
			return "", fmt.Errorf("%w (go build jaeger: %v)", ErrUnreachable, tail(b, 500))
		}
		return "", fmt.Errorf("go build jaeger %s: %v\n%s", Version, err, tail(b, 2000))
	}
	return bin, os.Rename(tmp, bin)
}

// unreachable tells a module download that could not reach the proxy
// (skip) from a broken build (fail).
func unreachable(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "proxyconnect", "TLS handshake timeout"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

func cacheRoot() (string, error) {
	if d := os.Getenv("INFLIGHT_JAEGER_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for jaeger (set INFLIGHT_JAEGER_CACHE): %w", err)
	}
	return filepath.Join(d, "inflight", "jaeger"), nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// freePorts are n ports of 127.0.0.1 free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// config is an all-in-one Jaeger with in-memory storage, its OTLP/HTTP
// receiver and its query API (HTTP and gRPC) on the ports given, and no
// other listener (no metrics port, no health check).
func config(otlp, queryHTTP, queryGRPC int) string {
	return fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn

extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000

receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d

processors:
  batch:
    timeout: 100ms

exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`, queryHTTP, queryGRPC, otlp)
}
