//go:build unix

// The battery needs real processes and signals for part of its cases.

package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"inflight/client"
	"inflight/internal/hostile"
	"inflight/wire"
)

// The hostile battery: `inflight call` against servers that misbehave on
// purpose (see package hostile). Whatever the server does, call must end
// within a bound with a valid JSON report, a final state, the exit code
// that state means, and an error or violation that says what happened.

// hostileCase is one run of call against one hostile peer.
type hostileCase struct {
	name string
	// target builds the server for the run.
	target func(t *testing.T) Target
	// opts adjusts the call (timeouts, a cancel).
	opts func(o *CallOptions)
	// code and state are what the run must end with.
	code  int
	state string
	// says is text the report's error (or, when the error is null, its
	// violations) must contain: the clear message.
	says []string
	// violations are codes the report must list.
	violations []string
	// bound is how long the run may take (default 10s).
	bound time.Duration
	// check, when set, looks further at the report.
	check func(t *testing.T, rep CallReport)
}

// inProcess serves a stdio peer in-process for every connection call opens.
func inProcess(p hostile.Stdio, version string) func(t *testing.T) Target {
	return func(t *testing.T) Target {
		var mu sync.Mutex
		var served []*hostile.Served
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			for _, sv := range served {
				sv.Stop()
			}
		})
		return Target{ProtocolVersion: version, Pipes: func(context.Context) (*client.Pipes, error) {
			sv := hostile.Serve(p)
			mu.Lock()
			served = append(served, sv)
			mu.Unlock()
			return &client.Pipes{Stdin: sv.Stdin, Stdout: sv.Stdout}, nil
		}}
	}
}

// asProcess runs a stdio peer as a real child process: this test binary,
// re-executed (see TestMain).
func asProcess(p hostile.Stdio) func(t *testing.T) Target {
	return func(t *testing.T) Target {
		exe, env, err := hostile.Command(p, "")
		if err != nil {
			t.Fatal(err)
		}
		return Target{Command: exe, Env: env}
	}
}

// overHTTP serves an HTTP peer on 127.0.0.1.
func overHTTP(h func() *hostile.HTTP, version string) func(t *testing.T) Target {
	return func(t *testing.T) Target {
		ts := hostile.NewServer(h(), false)
		t.Cleanup(ts.Close)
		return Target{URL: ts.URL + "/mcp", ProtocolVersion: version}
	}
}

func withTimeout(d time.Duration) func(o *CallOptions) {
	return func(o *CallOptions) { o.Timeout = d }
}

var legacyVersion = wire.Version20251125

func hostileCases() []hostileCase {
	var cases []hostileCase
	for _, e := range []struct{ name, version string }{{"modern", ""}, {"legacy", legacyVersion}} {
		stdio := func(p hostile.Stdio) func(t *testing.T) Target { return inProcess(p, e.version) }
		cases = append(cases,
			hostileCase{name: "garbage/" + e.name, target: stdio(hostile.Garbage),
				code: ExitCompleted, state: "completed", violations: []string{"non_json_line", "malformed_message"},
				check: func(t *testing.T, rep CallReport) {
					if !bytes.Contains(rep.Result, []byte("survived the garbage")) {
						t.Errorf("result %s", rep.Result)
					}
				}},
			hostileCase{name: "huge-line/" + e.name, target: stdio(hostile.HugeLine),
				code: ExitCompleted, state: "completed", says: []string{"exceeds the 33554432-byte message limit"}, bound: 20 * time.Second},
			hostileCase{name: "deep-nesting/" + e.name, target: stdio(hostile.DeepNesting),
				code: ExitCompleted, state: "completed", says: []string{"exceeded max depth"}},
			hostileCase{name: "odd-ids/" + e.name, target: stdio(hostile.OddIDs),
				code: ExitCompleted, state: "completed", violations: []string{"unknown_response_id", "unknown_progress_token"},
				check: func(t *testing.T, rep CallReport) {
					if !bytes.Contains(rep.Result, []byte("1e0")) {
						t.Errorf("the answer with the ID as 1e0 did not complete the request: %s", rep.Result)
					}
				}},
			hostileCase{name: "duplicates/" + e.name, target: stdio(hostile.Duplicates),
				code: ExitCompleted, state: "completed", violations: []string{"duplicate_response", "unknown_response_id"},
				check: func(t *testing.T, rep CallReport) {
					if !bytes.Contains(rep.Result, []byte("the first answer")) || rep.Error != nil {
						t.Errorf("a later answer replaced the first: result %s error %+v", rep.Result, rep.Error)
					}
				}},
			hostileCase{name: "answers-cancel/" + e.name, target: stdio(hostile.AnswersCancel),
				opts: func(o *CallOptions) { o.CancelAfter = 200 * time.Millisecond },
				code: ExitCancelled, state: "cancelled", violations: []string{"duplicate_response"},
				check: func(t *testing.T, rep CallReport) {
					if rep.Late == nil || !rep.Late.Response || (len(rep.Result) > 0 && string(rep.Result) != "null") {
						t.Errorf("the answer after the cancel is not reported as late: late %+v result %s", rep.Late, rep.Result)
					}
				}},
			hostileCase{name: "progress-storm/" + e.name, target: stdio(hostile.ProgressStorm),
				code: ExitCompleted, state: "completed", violations: []string{"progress_not_increasing"},
				check: func(t *testing.T, rep CallReport) {
					if rep.Progress.Count != hostile.StormCount {
						t.Errorf("progress count %d, want %d", rep.Progress.Count, hostile.StormCount)
					}
				}},
			hostileCase{name: "closes-stdout/" + e.name, target: stdio(hostile.ClosesStdout),
				code: ExitConnectionLost, state: "connection_lost", says: []string{"the server closed its stdout"}},
			hostileCase{name: "ignores-sigterm/" + e.name, target: stdio(hostile.IgnoresSIGTERM), opts: withTimeout(300 * time.Millisecond),
				code: ExitTimedOut, state: "timed_out", check: wantCancelSignal("notifications/cancelled")},
			hostileCase{name: "answers-first/" + e.name, target: stdio(hostile.AnswersFirst),
				code: ExitCompleted, state: "completed", violations: []string{"unknown_response_id"},
				check: func(t *testing.T, rep CallReport) {
					if !bytes.Contains(rep.Result, []byte("the real answer")) {
						t.Errorf("an answer sent before the request was taken for it: %s", rep.Result)
					}
				}},
			hostileCase{name: "crashes/" + e.name, target: stdio(hostile.Crashes),
				code: ExitConnectionLost, state: "connection_lost", says: []string{"connection closed"}},

			hostileCase{name: "http-sse-comments-forever/" + e.name, target: overHTTP(hostile.SSECommentsForever, e.version),
				opts: withTimeout(700 * time.Millisecond), code: ExitTimedOut, state: "timed_out"},
			hostileCase{name: "http-gzip-bomb/" + e.name, target: overHTTP(hostile.GzipBomb, e.version),
				code: ExitFailed, state: "failed", says: []string{"Content-Encoding", "gzip"}},
			hostileCase{name: "http-answers-first/" + e.name, target: overHTTP(hostile.AnswersFirstHTTP, e.version),
				code: ExitCompleted, state: "completed", violations: []string{"unknown_response_id"},
				check: func(t *testing.T, rep CallReport) {
					if !bytes.Contains(rep.Result, []byte("the real answer")) {
						t.Errorf("an answer sent before the request was taken for it: %s", rep.Result)
					}
				}},
			hostileCase{name: "http-huge-event/" + e.name, target: overHTTP(hostile.HugeEvent, e.version),
				code: ExitConnectionLost, state: "connection_lost", says: []string{"exceeds the 33554432-byte message limit"}, bound: 20 * time.Second},
			hostileCase{name: "http-redirect-other-host/" + e.name, target: redirectElsewhere(e.version),
				code: ExitFailed, state: "failed", says: []string{"redirect to another host", "refused"}},
			hostileCase{name: "http-tls-error/" + e.name, target: untrustedTLS(e.version),
				code: ExitUsage, state: "not_sent", says: []string{"certificate"}},
		)
	}
	// Only a real process can ignore SIGTERM or keep running with its
	// stdout closed; the client's shutdown escalation (2s a step by default)
	// is part of the bound.
	cases = append(cases,
		hostileCase{name: "process/ignores-sigterm", target: asProcess(hostile.IgnoresSIGTERM), opts: withTimeout(300 * time.Millisecond),
			code: ExitTimedOut, state: "timed_out", bound: 15 * time.Second, check: wantCancelSignal("notifications/cancelled")},
		hostileCase{name: "process/closes-stdout", target: asProcess(hostile.ClosesStdout),
			code: ExitConnectionLost, state: "connection_lost", says: []string{"closed its stdout but kept running"}, bound: 15 * time.Second},
		hostileCase{name: "process/crashes", target: asProcess(hostile.Crashes),
			code: ExitConnectionLost, state: "connection_lost", says: []string{"the server exited: exit status 3"}},
		hostileCase{name: "process/huge-line", target: asProcess(hostile.HugeLine),
			code: ExitCompleted, state: "completed", says: []string{"exceeds the 33554432-byte message limit"}, bound: 20 * time.Second},
	)
	return cases
}

func wantCancelSignal(sig string) func(t *testing.T, rep CallReport) {
	return func(t *testing.T, rep CallReport) {
		if rep.Cancel == nil || rep.Cancel.Signal == nil || *rep.Cancel.Signal != sig || rep.Cancel.Cause != "timeout" {
			t.Errorf("cancel %+v, want a timeout cancel with signal %s", rep.Cancel, sig)
		}
	}
}

// redirectElsewhere redirects tools/call to a second server, another host
// (host:port) that would answer well; it must never see the call.
func redirectElsewhere(version string) func(t *testing.T) Target {
	return func(t *testing.T) Target {
		other := hostile.Plain()
		ots := hostile.NewServer(other, false)
		ts := hostile.NewServer(hostile.Redirect(ots.URL+"/mcp"), false)
		t.Cleanup(func() {
			ts.Close()
			ots.Close()
			if other.Posts() != 0 {
				t.Errorf("the other host received %d POSTs: the redirect was followed", other.Posts())
			}
		})
		return Target{URL: ts.URL + "/mcp", ProtocolVersion: version}
	}
}

// untrustedTLS is a TLS server whose certificate the default client does
// not trust.
func untrustedTLS(version string) func(t *testing.T) Target {
	return func(t *testing.T) Target {
		ts := hostile.NewServer(hostile.Plain(), true)
		t.Cleanup(ts.Close)
		return Target{URL: ts.URL + "/mcp", ProtocolVersion: version}
	}
}

// finalStates are the states a call's report may end in.
var finalStates = map[string]bool{
	"completed": true, "failed": true, "cancelled": true, "timed_out": true, "connection_lost": true,
	"input_required": true, "ended_by_server": true, "not_sent": true,
}

func TestHostileServers(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := CallOptions{Target: tc.target(t), Method: wire.MethodToolsCall, Params: toolParams(t, hostile.ToolName, ""),
				Timeout: 10 * time.Second, LateWindow: testLate, JSON: true,
				TracePath: filepath.Join(t.TempDir(), "trace.jsonl")}
			if tc.opts != nil {
				tc.opts(&o)
			}
			bound := tc.bound
			if bound == 0 {
				bound = 10 * time.Second
			}
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			start := time.Now()
			go func() { done <- Call(context.Background(), o, &stdout, &stderr) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(bound):
				// The run is stuck; the goroutine leak check will fail too,
				// but the stack dump there says where.
				t.Fatalf("call did not return within %s", bound)
			}
			took := time.Since(start)
			out := stdout.Bytes()
			if len(out) > 1<<20 {
				t.Errorf("the JSON report is %d bytes: a hostile answer must not blow up the output", len(out))
			}
			if !json.Valid(out) {
				t.Fatalf("stdout is not one valid JSON object:\n%.2000s", out)
			}
			var rep CallReport
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatal(err)
			}
			if code != tc.code || rep.ExitCode != code || rep.State != tc.state {
				t.Errorf("exit %d (report %d), state %s; want exit %d, state %s\nerror: %+v\nviolations: %+v\nstderr: %s",
					code, rep.ExitCode, rep.State, tc.code, tc.state, rep.Error, rep.Violations, stderr.String())
			}
			if !finalStates[rep.State] {
				t.Errorf("state %q is not final", rep.State)
			}
			says := ""
			if rep.Error != nil {
				says = rep.Error.Message
			}
			for _, v := range rep.Violations {
				says += "\n" + v.Code + ": " + v.Detail
			}
			for _, want := range tc.says {
				if !strings.Contains(says, want) {
					t.Errorf("the report does not say %q; it says:\n%s", want, says)
				}
			}
			for _, code := range tc.violations {
				found := false
				for _, v := range rep.Violations {
					found = found || v.Code == code
				}
				if !found {
					t.Errorf("no %s violation reported; violations: %+v", code, rep.Violations)
				}
			}
			if rep.State != "completed" && (rep.Error == nil || rep.Error.Message == "") && rep.Cancel == nil {
				t.Errorf("a %s request with no error message and no cancel: nothing says what happened", rep.State)
			}
			if tc.check != nil {
				tc.check(t, rep)
			}
			if o.Target.Command != "" {
				assertChildGone(t, o.TracePath)
			}
			t.Logf("exit %d %s in %s", code, rep.State, took.Round(time.Millisecond))
		})
	}
}

// childPID finds the pid a hostile child wrote on its stderr, in the trace.
var childPID = regexp.MustCompile(`hostile [a-z-]+: started, pid (\d+)`)

// assertChildGone checks that the child process of a run has exited and
// been reaped: once reaped its pid no longer exists (a zombie still would).
func assertChildGone(t *testing.T, tracePath string) {
	t.Helper()
	data, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	m := childPID.FindSubmatch(data)
	if m == nil {
		t.Fatalf("the child's pid is not in the trace:\n%.3000s", data)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d still exists after call returned (kill 0: %v)", pid, err)
	}
}

// A server that dies part-way through the battery is a connection failure
// (exit 2), not a short clean run: the loss is an error finding that says
// during which step it happened, the checks that were not run are listed
// as skipped with that reason, and no finding gives advice about the tool
// that the loss makes wrong.
func TestCheckConnectionLostMidBattery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) Target
		e      era
	}{
		{"modern", inProcess(hostile.Crashes, ""), modern},
		{"legacy", inProcess(hostile.Crashes, legacyVersion), legacy},
		{"process", asProcess(hostile.Crashes), modern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := CheckOptions{Target: tc.target(t), Tool: hostile.ToolName, LateWindow: 300 * time.Millisecond, Timeout: 5 * time.Second}
			rep, code := runCheck(t, o)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; findings %+v", code, ExitUsage, rep.Findings)
			}
			got := findingsByID(rep)
			lost, ok := got[CheckConnection]
			if !ok || lost.Status != StatusError || !strings.Contains(lost.Detail, "connection lost during the full run of hostile") {
				t.Errorf("no error finding for the lost connection: %+v", rep.Findings)
			}
			if rep.Summary.Error != 1 || !strings.Contains(rep.Error, "connection lost during") {
				t.Errorf("summary %+v, error %q", rep.Summary, rep.Error)
			}
			for _, f := range rep.Findings {
				if strings.Contains(f.Detail, "--tool") || strings.Contains(f.Detail, "--args") {
					t.Errorf("%s gives advice the lost connection makes wrong: %s", f.ID, f.Detail)
				}
			}
			skipped := map[string]string{}
			for _, s := range rep.Skipped {
				skipped[s.ID] = s.Reason
			}
			for _, id := range expectedChecks("stdio", tc.e) {
				_, found := got[id]
				reason, skip := skipped[id]
				switch {
				case found == skip:
					t.Errorf("%s: finding %v, skipped %v; want exactly one", id, found, skip)
				case id == CheckServerCancel || id == CheckServerRequests || id == CheckDiscover:
					// Observed before the loss.
				case !skip || !strings.Contains(reason, "not run: the connection was lost during the full run of hostile"):
					t.Errorf("%s: not listed as not run because of the loss (skipped %v %q)", id, skip, reason)
				}
			}

			var out bytes.Buffer
			o.Target = tc.target(t)
			o.LateWindow = 300 * time.Millisecond
			if code := Check(context.Background(), o, &out, io.Discard); code != ExitUsage {
				t.Errorf("human run: exit %d", code)
			}
			mustContain(t, out.String(), "ERROR  connection")
			mustContain(t, out.String(), "the battery did not finish: connection lost during the full run of hostile")
			mustContain(t, out.String(), "not run: the connection was lost")
		})
	}
}

// asksClient sends the client a sampling request before each answer, as
// a legacy server may and a modern one must not.
var asksClient = hostile.Stdio{Name: "asks-client", Call: func(s *hostile.Session, req hostile.Request) {
	_ = s.Send([]byte(`{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`))
	if !req.Token.IsZero() {
		_ = s.Progress(req.Token, 1, 1, "done")
	}
	_ = s.Reply(req.ID, `{"content":[{"type":"text","text":"asked first"}]}`)
}}

// A modern server that sends a request fails server_requests.none, and
// inflight does not answer it; in the legacy era it is allowed (and
// refused with an error, since no handler is configured).
func TestCheckServerRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string
	}{{"modern", ""}, {"legacy", legacyVersion}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := CheckOptions{Target: inProcess(asksClient, tc.version)(t), Tool: hostile.ToolName,
				LateWindow: 300 * time.Millisecond, Timeout: 5 * time.Second}
			rep, code := runCheck(t, o)
			f, judged := findingsByID(rep)[CheckServerRequests]
			if tc.version != "" {
				skipped := false
				for _, sk := range rep.Skipped {
					skipped = skipped || (sk.ID == CheckServerRequests && strings.Contains(sk.Reason, "legacy servers may send requests"))
				}
				if judged || !skipped {
					t.Errorf("legacy: judged %+v, skipped %+v", f, rep.Skipped)
				}
				return
			}
			if !judged || f.Status != StatusFail || f.Level != LevelMust ||
				!strings.Contains(f.Detail, "sampling/createMessage") || !strings.Contains(f.Detail, "answered none") {
				t.Errorf("modern: finding %+v", f)
			}
			if code != ExitFailed {
				t.Errorf("exit %d, want %d", code, ExitFailed)
			}
		})
	}
}

// When the server dies mid-call there was no cancel: the human summary
// says the connection was lost, not what came "after the cancel".
func TestCallHumanOutputConnectionLost(t *testing.T) {
	var out bytes.Buffer
	code := Call(context.Background(), CallOptions{Target: inProcess(hostile.Crashes, "")(t), Method: wire.MethodToolsCall,
		Params: toolParams(t, hostile.ToolName, ""), LateWindow: testLate}, &out, io.Discard)
	if code != ExitConnectionLost {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	s := out.String()
	mustContain(t, s, "lost        the connection was lost before an answer came")
	mustContain(t, s, "state       connection_lost (exit 5)")
	if strings.Contains(s, "after the cancel") || strings.Contains(s, "late ") {
		t.Errorf("the summary describes a cancel that never happened:\n%s", s)
	}
}

// A stdio server that dies at start-up: the error quotes what it wrote to
// stderr, which is where such a server says why.
func TestCallStartupFailureQuotesStderr(t *testing.T) {
	o := CallOptions{Target: Target{Command: "sh", Args: []string{"-c", "echo 'fatal: bad config' >&2; exit 3"}}, Method: wire.MethodToolsList}
	var stderr bytes.Buffer
	if code := Call(context.Background(), o, io.Discard, &stderr); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	mustContain(t, stderr.String(), `connect: server/discover: the server exited: exit status 3; its stderr ended with: "fatal: bad config"`)
}
