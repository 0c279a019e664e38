// Package testserver gives the tests of the headless commands (call, check,
// replay, cli) their servers as targets: the demo in-process over pipes, over
// Streamable HTTP on 127.0.0.1 or as a real child process, and the hostile
// peers of package hostile in-process, as processes or over HTTP; with the
// eras and transports a test runs over, and its TestMain.
package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/client"
	"inflight/demo"
	"inflight/internal/testkit/hostile"
	"inflight/runner"
	"inflight/target"
	"inflight/wire"
)

// demoChildEnv makes the test binary act as the demo's stdio server, so
// that one test can start a real child process (see DemoProcess).
const demoChildEnv = "INFLIGHT_CHECK_TEST_DEMO_CHILD"

// Main is the TestMain of a package that uses these servers: the test
// binary re-executed as a hostile peer or as the demo serves instead of
// testing, and no goroutine may outlive the tests.
func Main(m *testing.M, opts ...goleak.Option) {
	// The hostile battery re-executes this binary as a misbehaving server.
	hostile.RunFromEnv()
	if os.Getenv(demoChildEnv) == "1" {
		srv := demo.New(demo.Options{Logger: os.Stderr})
		err := srv.ServeStdio(context.Background(), os.Stdin, os.Stdout)
		srv.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, opts...)
}

// Late is the late window of a test: short, so the suite stays fast.
const Late = 300 * time.Millisecond

// Era is a protocol era forced in a test, by its protocol version.
type Era struct {
	Name    string
	Version string
}

var (
	Modern = Era{"modern", wire.VersionModern}
	Legacy = Era{"legacy", wire.Version20251125}
	Eras   = []Era{Modern, Legacy}
)

// Transport builds a target for one transport.
type Transport struct {
	Name   string
	Target func(t *testing.T, e Era) target.Target
}

var Transports = []Transport{
	{"stdio", Stdio},
	{"http", HTTP},
}

// NewDemo starts a demo server closed when the test ends.
func NewDemo(t *testing.T) *demo.Server {
	t.Helper()
	srv := demo.New(demo.Options{TickInterval: time.Hour})
	t.Cleanup(func() { srv.Close() })
	return srv
}

// Stdio serves the demo in-process over io.Pipe pairs: every connection
// gets its own ServeStdio, waited for when the test ends.
func Stdio(t *testing.T, e Era) target.Target {
	t.Helper()
	return StdioOf(t, e, NewDemo(t))
}

// StdioOf is Stdio for a given demo server.
func StdioOf(t *testing.T, e Era, srv *demo.Server) target.Target {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return target.Target{
		ProtocolVersion: e.Version,
		Pipes: func(ctx context.Context) (*client.Pipes, error) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = srv.ServeStdio(context.Background(), inR, outW)
			}()
			return &client.Pipes{Stdin: inW, Stdout: outR}, nil
		},
	}
}

// HTTP serves the demo's Streamable HTTP endpoint on 127.0.0.1.
func HTTP(t *testing.T, e Era) target.Target {
	t.Helper()
	srv := NewDemo(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler())
	ts := httptest.NewServer(mux)
	// Closing the demo first ends its hanging requests, so that the test
	// server's Close does not wait for them.
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Close() })
	return target.Target{URL: ts.URL + "/mcp", ProtocolVersion: e.Version}
}

// DemoProcess is the demo as a real child process: the test binary itself,
// re-executed as `<test binary> demo-server` with demoChildEnv set (see
// Main), started the way inflight starts its embedded demo.
func DemoProcess(t *testing.T, e Era) target.Target {
	t.Helper()
	tg, err := target.DemoTarget()
	if err != nil {
		t.Fatal(err)
	}
	tg.Env = []string{demoChildEnv + "=1"}
	tg.ProtocolVersion = e.Version
	return tg
}

// ForEach runs f for every transport and era, in parallel.
func ForEach(t *testing.T, f func(t *testing.T, tc Transport, e Era)) {
	for _, tc := range Transports {
		for _, e := range Eras {
			t.Run(tc.Name+"/"+e.Name, func(t *testing.T) {
				t.Parallel()
				f(t, tc, e)
			})
		}
	}
}

// InProcess serves a stdio peer in-process for every connection a run
// opens.
func InProcess(p hostile.Stdio, version string) func(t *testing.T) target.Target {
	return func(t *testing.T) target.Target {
		var mu sync.Mutex
		var served []*hostile.Served
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			for _, sv := range served {
				sv.Stop()
			}
		})
		return target.Target{ProtocolVersion: version, Pipes: func(context.Context) (*client.Pipes, error) {
			sv := hostile.Serve(p)
			mu.Lock()
			served = append(served, sv)
			mu.Unlock()
			return &client.Pipes{Stdin: sv.Stdin, Stdout: sv.Stdout}, nil
		}}
	}
}

// AsProcess runs a stdio peer as a real child process: this test binary,
// re-executed (see Main).
func AsProcess(p hostile.Stdio) func(t *testing.T) target.Target {
	return func(t *testing.T) target.Target {
		exe, env, err := hostile.Command(p, "")
		if err != nil {
			t.Fatal(err)
		}
		return target.Target{Command: exe, Env: env}
	}
}

// OverHTTP serves an HTTP peer on 127.0.0.1.
func OverHTTP(h func() *hostile.HTTP, version string) func(t *testing.T) target.Target {
	return func(t *testing.T) target.Target {
		ts := hostile.NewServer(h(), false)
		t.Cleanup(ts.Close)
		return target.Target{URL: ts.URL + "/mcp", ProtocolVersion: version}
	}
}

// ToolParams is the params of tools/call for tool name with args.
func ToolParams(t *testing.T, name, args string) json.RawMessage {
	t.Helper()
	p, err := runner.ToolCallParams(name, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// MustContain fails the test when s lacks sub.
func MustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("output lacks %q:\n%s", sub, s)
	}
}
