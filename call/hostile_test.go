//go:build unix

// The battery needs real processes and signals for part of its cases.

package call

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
	"syscall"
	"testing"
	"time"

	"inflight/exitcode"
	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
	"inflight/target"
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
	target func(t *testing.T) target.Target
	// opts adjusts the call (timeouts, a cancel).
	opts func(o *Options)
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
	check func(t *testing.T, rep Report)
}

func withTimeout(d time.Duration) func(o *Options) {
	return func(o *Options) { o.Timeout = d }
}

var legacyVersion = wire.Version20251125

func hostileCases() []hostileCase {
	var cases []hostileCase
	for _, e := range []struct{ Name, Version string }{{"modern", ""}, {"legacy", legacyVersion}} {
		stdio := func(p hostile.Stdio) func(t *testing.T) target.Target { return testserver.InProcess(p, e.Version) }
		cases = append(cases,
			hostileCase{name: "garbage/" + e.Name, target: stdio(hostile.Garbage),
				code: exitcode.Completed, state: "completed", violations: []string{"non_json_line", "malformed_message"},
				check: func(t *testing.T, rep Report) {
					if !bytes.Contains(rep.Result, []byte("survived the garbage")) {
						t.Errorf("result %s", rep.Result)
					}
				}},
			hostileCase{name: "huge-line/" + e.Name, target: stdio(hostile.HugeLine),
				code: exitcode.Completed, state: "completed", says: []string{"exceeds the 33554432-byte message limit"}, bound: 20 * time.Second},
			hostileCase{name: "deep-nesting/" + e.Name, target: stdio(hostile.DeepNesting),
				code: exitcode.Completed, state: "completed", says: []string{"exceeded max depth"}},
			hostileCase{name: "odd-ids/" + e.Name, target: stdio(hostile.OddIDs),
				code: exitcode.Completed, state: "completed", violations: []string{"unknown_response_id", "unknown_progress_token"},
				check: func(t *testing.T, rep Report) {
					if !bytes.Contains(rep.Result, []byte("1e0")) {
						t.Errorf("the answer with the ID as 1e0 did not complete the request: %s", rep.Result)
					}
				}},
			hostileCase{name: "duplicates/" + e.Name, target: stdio(hostile.Duplicates),
				code: exitcode.Completed, state: "completed", violations: []string{"duplicate_response", "unknown_response_id"},
				check: func(t *testing.T, rep Report) {
					if !bytes.Contains(rep.Result, []byte("the first answer")) || rep.Error != nil {
						t.Errorf("a later answer replaced the first: result %s error %+v", rep.Result, rep.Error)
					}
				}},
			hostileCase{name: "answers-cancel/" + e.Name, target: stdio(hostile.AnswersCancel),
				opts: func(o *Options) { o.CancelAfter = 200 * time.Millisecond },
				code: exitcode.Cancelled, state: "cancelled", violations: []string{"duplicate_response"},
				check: func(t *testing.T, rep Report) {
					if rep.Late == nil || !rep.Late.Response || (len(rep.Result) > 0 && string(rep.Result) != "null") {
						t.Errorf("the answer after the cancel is not reported as late: late %+v result %s", rep.Late, rep.Result)
					}
				}},
			hostileCase{name: "progress-storm/" + e.Name, target: stdio(hostile.ProgressStorm),
				code: exitcode.Completed, state: "completed", violations: []string{"progress_not_increasing"},
				check: func(t *testing.T, rep Report) {
					if rep.Progress.Count != hostile.StormCount {
						t.Errorf("progress count %d, want %d", rep.Progress.Count, hostile.StormCount)
					}
				}},
			hostileCase{name: "closes-stdout/" + e.Name, target: stdio(hostile.ClosesStdout),
				code: exitcode.ConnectionLost, state: "connection_lost", says: []string{"the server closed its stdout"}},
			hostileCase{name: "ignores-sigterm/" + e.Name, target: stdio(hostile.IgnoresSIGTERM), opts: withTimeout(300 * time.Millisecond),
				code: exitcode.TimedOut, state: "timed_out", check: wantCancelSignal("notifications/cancelled")},
			hostileCase{name: "answers-first/" + e.Name, target: stdio(hostile.AnswersFirst),
				code: exitcode.Completed, state: "completed", violations: []string{"unknown_response_id"},
				check: func(t *testing.T, rep Report) {
					if !bytes.Contains(rep.Result, []byte("the real answer")) {
						t.Errorf("an answer sent before the request was taken for it: %s", rep.Result)
					}
				}},
			hostileCase{name: "crashes/" + e.Name, target: stdio(hostile.Crashes),
				code: exitcode.ConnectionLost, state: "connection_lost", says: []string{"connection closed"}},

			hostileCase{name: "http-sse-comments-forever/" + e.Name, target: testserver.OverHTTP(hostile.SSECommentsForever, e.Version),
				opts: withTimeout(700 * time.Millisecond), code: exitcode.TimedOut, state: "timed_out"},
			hostileCase{name: "http-gzip-bomb/" + e.Name, target: testserver.OverHTTP(hostile.GzipBomb, e.Version),
				code: exitcode.Failed, state: "failed", says: []string{"Content-Encoding", "gzip"}},
			hostileCase{name: "http-answers-first/" + e.Name, target: testserver.OverHTTP(hostile.AnswersFirstHTTP, e.Version),
				code: exitcode.Completed, state: "completed", violations: []string{"unknown_response_id"},
				check: func(t *testing.T, rep Report) {
					if !bytes.Contains(rep.Result, []byte("the real answer")) {
						t.Errorf("an answer sent before the request was taken for it: %s", rep.Result)
					}
				}},
			hostileCase{name: "http-huge-event/" + e.Name, target: testserver.OverHTTP(hostile.HugeEvent, e.Version),
				code: exitcode.ConnectionLost, state: "connection_lost", says: []string{"exceeds the 33554432-byte message limit"}, bound: 20 * time.Second},
			hostileCase{name: "http-redirect-other-host/" + e.Name, target: redirectElsewhere(e.Version),
				code: exitcode.Failed, state: "failed", says: []string{"redirect to another host", "refused"}},
			hostileCase{name: "http-tls-error/" + e.Name, target: untrustedTLS(e.Version),
				code: exitcode.Usage, state: "not_sent", says: []string{"certificate"}},
		)
	}
	// Only a real process can ignore SIGTERM or keep running with its
	// stdout closed; the client's shutdown escalation (2s a step by default)
	// is part of the bound.
	cases = append(cases,
		hostileCase{name: "process/ignores-sigterm", target: testserver.AsProcess(hostile.IgnoresSIGTERM), opts: withTimeout(300 * time.Millisecond),
			code: exitcode.TimedOut, state: "timed_out", bound: 15 * time.Second, check: wantCancelSignal("notifications/cancelled")},
		hostileCase{name: "process/closes-stdout", target: testserver.AsProcess(hostile.ClosesStdout),
			code: exitcode.ConnectionLost, state: "connection_lost", says: []string{"closed its stdout but kept running"}, bound: 15 * time.Second},
		hostileCase{name: "process/crashes", target: testserver.AsProcess(hostile.Crashes),
			code: exitcode.ConnectionLost, state: "connection_lost", says: []string{"the server exited: exit status 3"}},
		hostileCase{name: "process/huge-line", target: testserver.AsProcess(hostile.HugeLine),
			code: exitcode.Completed, state: "completed", says: []string{"exceeds the 33554432-byte message limit"}, bound: 20 * time.Second},
	)
	return cases
}

func wantCancelSignal(sig string) func(t *testing.T, rep Report) {
	return func(t *testing.T, rep Report) {
		if rep.Cancel == nil || rep.Cancel.Signal == nil || *rep.Cancel.Signal != sig || rep.Cancel.Cause != "timeout" {
			t.Errorf("cancel %+v, want a timeout cancel with signal %s", rep.Cancel, sig)
		}
	}
}

// redirectElsewhere redirects tools/call to a second server, another host
// (host:port) that would answer well; it must never see the call.
func redirectElsewhere(version string) func(t *testing.T) target.Target {
	return func(t *testing.T) target.Target {
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
		return target.Target{URL: ts.URL + "/mcp", ProtocolVersion: version}
	}
}

// untrustedTLS is a TLS server whose certificate the default client does
// not trust.
func untrustedTLS(version string) func(t *testing.T) target.Target {
	return func(t *testing.T) target.Target {
		ts := hostile.NewServer(hostile.Plain(), true)
		t.Cleanup(ts.Close)
		return target.Target{URL: ts.URL + "/mcp", ProtocolVersion: version}
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
			o := Options{Target: tc.target(t), Method: wire.MethodToolsCall, Params: testserver.ToolParams(t, hostile.ToolName, ""),
				Timeout: 10 * time.Second, LateWindow: testserver.Late, JSON: true,
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
			go func() { done <- Run(context.Background(), o, &stdout, &stderr) }()
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
			var rep Report
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

// When the server dies mid-call there was no cancel: the human summary
// says the connection was lost, not what came "after the cancel".
func TestCallHumanOutputConnectionLost(t *testing.T) {
	var out bytes.Buffer
	code := Run(context.Background(), Options{Target: testserver.InProcess(hostile.Crashes, "")(t), Method: wire.MethodToolsCall,
		Params: testserver.ToolParams(t, hostile.ToolName, ""), LateWindow: testserver.Late}, &out, io.Discard)
	if code != exitcode.ConnectionLost {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	s := out.String()
	testserver.MustContain(t, s, "lost        the connection was lost before an answer came")
	testserver.MustContain(t, s, "state       connection_lost (exit 5)")
	if strings.Contains(s, "after the cancel") || strings.Contains(s, "late ") {
		t.Errorf("the summary describes a cancel that never happened:\n%s", s)
	}
}

// A stdio server that dies at start-up: the error quotes what it wrote to
// stderr, which is where such a server says why.
func TestCallStartupFailureQuotesStderr(t *testing.T) {
	o := Options{Target: target.Target{Command: "sh", Args: []string{"-c", "echo 'fatal: bad config' >&2; exit 3"}}, Method: wire.MethodToolsList}
	var stderr bytes.Buffer
	if code := Run(context.Background(), o, io.Discard, &stderr); code != exitcode.Usage {
		t.Fatalf("exit %d", code)
	}
	testserver.MustContain(t, stderr.String(), `connect: server/discover: the server exited: exit status 3; its stderr ended with: "fatal: bad config"`)
}
