package check

import (
	"bytes"
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
	"inflight/internal/hostile"
	"inflight/wire"
)

// demoChildEnv makes the test binary act as the demo's stdio server, so
// that one test can start a real child process (see TestCallProcess).
const demoChildEnv = "INFLIGHT_CHECK_TEST_DEMO_CHILD"

func TestMain(m *testing.M) {
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
	goleak.VerifyTestMain(m)
}

// Test timings: short, so the suite stays fast.
const (
	testLate = 300 * time.Millisecond // late window
)

// era is a protocol era forced in a test, by its protocol version.
type era struct {
	name    string
	version string
}

var (
	modern = era{"modern", wire.VersionModern}
	legacy = era{"legacy", wire.Version20251125}
	eras   = []era{modern, legacy}
)

// transportCase builds a target for one transport.
type transportCase struct {
	name   string
	target func(t *testing.T, e era) Target
}

var transports = []transportCase{
	{"stdio", stdioTarget},
	{"http", httpTarget},
}

// newDemo starts a demo server closed when the test ends.
func newDemo(t *testing.T) *demo.Server {
	t.Helper()
	srv := demo.New(demo.Options{TickInterval: time.Hour})
	t.Cleanup(func() { srv.Close() })
	return srv
}

// stdioTarget serves the demo in-process over io.Pipe pairs: every
// connection gets its own ServeStdio, waited for when the test ends.
func stdioTarget(t *testing.T, e era) Target {
	t.Helper()
	return stdioTargetOf(t, e, newDemo(t))
}

// stdioTargetOf is stdioTarget for a given demo server.
func stdioTargetOf(t *testing.T, e era, srv *demo.Server) Target {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return Target{
		ProtocolVersion: e.version,
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

// httpTarget serves the demo's Streamable HTTP endpoint on 127.0.0.1.
func httpTarget(t *testing.T, e era) Target {
	t.Helper()
	srv := newDemo(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler())
	ts := httptest.NewServer(mux)
	// Closing the demo first ends its hanging requests, so that the test
	// server's Close does not wait for them.
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Close() })
	return Target{URL: ts.URL + "/mcp", ProtocolVersion: e.version}
}

// forEach runs f for every transport and era, in parallel.
func forEach(t *testing.T, f func(t *testing.T, tc transportCase, e era)) {
	for _, tc := range transports {
		for _, e := range eras {
			t.Run(tc.name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				f(t, tc, e)
			})
		}
	}
}

// runCall runs Call with --json and decodes its report.
func runCall(t *testing.T, o CallOptions) (CallReport, int, string) {
	t.Helper()
	o.JSON = true
	if o.LateWindow == 0 {
		o.LateWindow = testLate
	}
	var stdout, stderr bytes.Buffer
	code := Call(context.Background(), o, &stdout, &stderr)
	var rep CallReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("call --json printed no JSON object (%v):\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if rep.ExitCode != code {
		t.Errorf("report exitCode %d, returned %d", rep.ExitCode, code)
	}
	return rep, code, stderr.String()
}

func toolParams(t *testing.T, name, args string) json.RawMessage {
	t.Helper()
	p, err := ToolCallParams(name, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("output lacks %q:\n%s", sub, s)
	}
}
