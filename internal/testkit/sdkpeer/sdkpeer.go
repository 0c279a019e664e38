// Package sdkpeer builds real MCP servers written on the two Go SDKs people
// ship servers on — the official github.com/modelcontextprotocol/go-sdk
// (gosdk/) and github.com/mark3labs/mcp-go (mcpgo/) — for tests that need a
// server no one here wrote. Each is a stdio server (or, with -http, a
// Streamable HTTP one: StartHTTP) with one tool, slow
// (arguments {"steps":6,"intervalMs":200}), that sends progress every
// intervalMs for steps steps and honours its context: cancelled, it returns
// the context's error, which its SDK sends back at once as the answer
// ("context canceled"), after logging "cancel seen at step N of M" on
// stderr. That answer is a reaction to the cancel, so a client that calls it
// "crossed in flight" has its definition wrong (issue 9).
//
// Both SDKs speak both protocol eras over stdio in one session: initialize
// (legacy, up to 2025-11-25) or server/discover and modern requests carrying
// their own _meta (2026-07-28). Neither answers ping in the modern era: a
// ping carrying the modern _meta gets -32601 (ping was removed in
// 2026-07-28); a bare ping, without _meta, is still answered with {}.
// EnvVersions narrows the versions a peer advertises (see each command).
//
// BuildPeer compiles a peer once per test binary, into a temporary
// directory that RemoveBuilt deletes (call it from TestMain after m.Run);
// CancelSeenAt reads, from a peer's stderr, when it saw a cancel.
package sdkpeer

import (
	"bufio"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/internal/testkit/testbin"
)

// The peers BuildPeer knows, by the name of their command directory.
const (
	// GoSDK is the server on github.com/modelcontextprotocol/go-sdk v1.8.0.
	GoSDK = "gosdk"
	// MCPGo is the server on github.com/mark3labs/mcp-go v1.2.1.
	MCPGo = "mcpgo"
)

// Names lists every peer, for tests that run against each.
var Names = []string{GoSDK, MCPGo}

// The tool every peer serves, and the arguments of issue 9's scenario.
const (
	Tool        = "slow"
	DefaultArgs = `{"steps":6,"intervalMs":200}`
)

// EnvVersions, set in a peer's environment to a comma-separated list of
// protocol versions, narrows the versions it advertises: go-sdk then
// accepts only those; mcp-go advertises only those in server/discover.
const EnvVersions = "SDKPEER_VERSIONS"

// CancelSeen is what a peer's stderr line says when its handler sees the
// cancel, before it answers.
const CancelSeen = "cancel seen at step"

// importPath is where the peers' commands live in this module.
const importPath = "inflight/internal/testkit/sdkpeer/"

// BuildPeer returns the path of the named peer's executable (GoSDK or
// MCPGo), built with `go build` the first time a test of this binary asks
// for it and reused after that (testbin.Build). A failed build fails t;
// without the go command it skips t.
func BuildPeer(t testing.TB, name string) string {
	t.Helper()
	if !slices.Contains(Names, name) {
		t.Fatalf("sdkpeer: no peer named %q (have %v)", name, Names)
	}
	return testbin.Build(t, importPath+name)
}

// RemoveBuilt deletes what BuildPeer built (and anything else testbin
// built). TestMain calls it after m.Run.
func RemoveBuilt() { testbin.RemoveAll() }

// CancelSeenAt finds, in a peer's stderr, the line its handler logged when
// it saw the cancel of the request whose progress token is token (as JSON,
// e.g. `7`), and returns the time on it (UTC, to the microsecond). Together
// with the client's own times it shows the order of events across the two
// processes: cancel written, cancel seen, answer read.
func CancelSeenAt(stderr, token string) (time.Time, bool) {
	for l := range strings.Lines(stderr) {
		if !strings.Contains(l, CancelSeen) || !strings.Contains(l, ", token "+token+":") {
			continue
		}
		// "gosdk: 2026/12/01 07:53:03.581413 slow: cancel seen at …"
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		at, err := time.ParseInLocation(logTimeLayout, f[1]+" "+f[2], time.UTC)
		if err != nil {
			continue
		}
		return at, true
	}
	return time.Time{}, false
}

// logTimeLayout is the time on a peer's log line: log.LstdFlags with
// log.Lmicroseconds, in UTC.
const logTimeLayout = "2006/01/02 15:04:05.000000"

// Store says whether an HTTP peer keeps its streams' events (its SDK's
// in-memory event store), which is what lets a dropped stream be resumed
// with Last-Event-ID: without it neither SDK gives its events IDs.
type Store bool

// The two ways StartHTTP runs a peer.
const (
	NoEventStore   Store = false
	WithEventStore Store = true
)

// HTTPPeer is a peer serving Streamable HTTP in a process of its own.
type HTTPPeer struct {
	// URL is its endpoint, http://127.0.0.1:<port>/mcp.
	URL string

	mu     sync.Mutex
	stderr strings.Builder
}

// Stderr is what the peer wrote on stderr so far.
func (p *HTTPPeer) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// listening is the start of the line a peer logs once it serves HTTP,
// followed by its URL and a comma.
const listening = "serving Streamable HTTP on "

// StartHTTP builds the named peer (BuildPeer) and runs it with -http (and
// -events with WithEventStore) on a free loopback port, env added to its
// environment; it returns once the peer says where it listens, and kills
// it when t ends. A peer that does not say so within 20 s fails t.
func StartHTTP(t testing.TB, name string, store Store, env ...string) *HTTPPeer {
	t.Helper()
	args := []string{"-http"}
	if store {
		args = append(args, "-events")
	}
	cmd := exec.Command(BuildPeer(t, name), args...)
	cmd.Env = append(cmd.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("sdkpeer: starting %s: %v", name, err)
	}
	p := &HTTPPeer{}
	url := make(chan string, 1)
	done := make(chan struct{})
	go p.read(pipe, url, done)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		<-done
	})
	select {
	case p.URL = <-url:
	case <-done:
		t.Fatalf("sdkpeer: %s -http ended before it listened:\n%s", name, p.Stderr())
	case <-time.After(20 * time.Second):
		t.Fatalf("sdkpeer: %s -http did not say where it listens in 20s:\n%s", name, p.Stderr())
	}
	return p
}

// read keeps the peer's stderr and sends, once, the URL of the line that
// says where it listens.
func (p *HTTPPeer) read(pipe io.Reader, url chan<- string, done chan<- struct{}) {
	defer close(done)
	sc := bufio.NewScanner(pipe)
	sent := false
	for sc.Scan() {
		l := sc.Text()
		p.mu.Lock()
		p.stderr.WriteString(l + "\n")
		p.mu.Unlock()
		if _, rest, ok := strings.Cut(l, listening); ok && !sent {
			u, _, _ := strings.Cut(rest, ",")
			url <- u
			sent = true
		}
	}
}
