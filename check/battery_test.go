package check

import (
	"bytes"
	"context"
	"encoding/json"
	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/target"
	"strings"
	"testing"
	"time"
)

// runCheck runs the battery with short timings and decodes its report.
func runCheck(t *testing.T, o Options) (Report, int) {
	t.Helper()
	o.JSON = true
	if o.LateWindow == 0 {
		o.LateWindow = 500 * time.Millisecond
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), o, &stdout, &stderr)
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("check --json printed no JSON object (%v):\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if rep.ExitCode != code {
		t.Errorf("report exitCode %d, returned %d", rep.ExitCode, code)
	}
	return rep, code
}

func findingsByID(rep Report) map[string]Finding {
	m := map[string]Finding{}
	for _, f := range rep.Findings {
		m[f.ID] = f
	}
	return m
}

// expectedChecks lists the checks that apply to a transport and era.
func expectedChecks(transport string, e testserver.Era) []string {
	// The demo declares tasks: its task_job serves the tasks group (the
	// cancel of a finished task is a legacy check).
	// Progress names a token inflight sent everywhere; on Streamable HTTP
	// it comes on its own request's stream, and a legacy stream dropped
	// mid-way is resumed (the demo keeps its events).
	tasks := []string{CheckTaskTerminal, CheckTaskCancel, CheckTaskUnknown, CheckTaskNoCancelled, CheckProgressKnownTok}
	switch {
	case transport == "http" && e == testserver.Modern:
		return append([]string{CheckDiscover, CheckProgressIncreases, CheckProgressStops, CheckStreamClose, CheckServerCancel, CheckServerRequests,
			CheckResponseIDs, CheckProgressOwnStream}, tasks...)
	case e == testserver.Modern:
		return append([]string{CheckDiscover, CheckProgressIncreases, CheckProgressStops, CheckCancelFinished, CheckCancelStops,
			CheckCancelNoResponse, CheckCancelUnknown, CheckCancelMalformed, CheckServerCancel, CheckServerRequests,
			CheckCancelErrorCode, CheckResponseIDs}, tasks...)
	}
	legacy := append([]string{CheckProgressIncreases, CheckProgressStops, CheckCancelFinished, CheckCancelStops,
		CheckCancelNoResponse, CheckCancelUnknown, CheckCancelMalformed, CheckServerCancel, CheckTaskCancelTerminal,
		CheckCancelErrorCode, CheckResponseIDs}, tasks...)
	if transport == "http" {
		legacy = append(legacy, CheckProgressOwnStream, CheckResumeRedelivers, CheckResumeOwnStream)
	}
	return legacy
}

// On the demo every check passes with slow.
func TestCheckSlowPasses(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code := runCheck(t, Options{Target: tc.Target(t, e), Args: json.RawMessage(`{"seconds":0.4,"steps":4}`),
			TaskArgs: json.RawMessage(`{"seconds":0.3,"steps":3,"pollMs":50}`)})
		got := findingsByID(rep)
		for _, id := range expectedChecks(tc.Name, e) {
			f, ok := got[id]
			switch {
			case !ok:
				t.Errorf("no finding %s", id)
			case f.Status != StatusPass:
				t.Errorf("%s: %s %s", id, f.Status, f.Detail)
			case f.Quote == "" || f.Page == "" || (f.Level != LevelMust && f.Level != LevelShould):
				t.Errorf("%s: requirement missing: %+v", id, f)
			}
		}
		if len(rep.Findings) != len(expectedChecks(tc.Name, e)) {
			t.Errorf("%d findings, want %d: %+v", len(rep.Findings), len(expectedChecks(tc.Name, e)), rep.Findings)
		}
		if code != 0 || rep.Summary.Fail != 0 || rep.Summary.Warn != 0 {
			t.Errorf("exit %d summary %+v", code, rep.Summary)
		}
		if len(rep.Violations) != 0 {
			t.Errorf("violations %+v", rep.Violations)
		}
	})
}

// Pointed at stubborn, the battery reports the late response and the
// progress after the cancel: a MUST failure in the modern era on stdio
// (exit 1), a SHOULD warning in the legacy era. On modern HTTP nothing can
// come back on a closed stream, so nothing is visible.
func TestCheckStubbornReported(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code := runCheck(t, Options{Target: tc.Target(t, e), Tool: "stubborn", Args: json.RawMessage(`{"seconds":0.6,"steps":6}`),
			LateWindow: time.Second, NoTasks: true})
		got := findingsByID(rep)
		if tc.Name == "http" && e == testserver.Modern {
			if f := got[CheckStreamClose]; f.Status != StatusPass || !strings.Contains(f.Detail, "not visible on the wire") {
				t.Errorf("stream close: %+v", f)
			}
			return
		}
		want, wantCode := StatusWarn, 0
		if e == testserver.Modern {
			want, wantCode = StatusFail, 1
		}
		stops, resp := got[CheckCancelStops], got[CheckCancelNoResponse]
		if stops.Status != want || !strings.Contains(stops.Detail, "progress notification") {
			t.Errorf("progress stops: %s %s, want %s", stops.Status, stops.Detail, want)
		}
		if resp.Status != want || !strings.Contains(resp.Detail, "late response") {
			t.Errorf("no response: %s %s, want %s", resp.Status, resp.Detail, want)
		}
		if code != wantCode {
			t.Errorf("exit %d, want %d", code, wantCode)
		}
		for _, id := range []string{CheckCancelFinished, CheckCancelUnknown, CheckCancelMalformed, CheckProgressIncreases, CheckProgressStops} {
			if got[id].Status != StatusPass {
				t.Errorf("%s: %s %s", id, got[id].Status, got[id].Detail)
			}
		}
	})
}

func TestCheckConnectionFailure(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), Options{Target: target.Target{URL: "http://127.0.0.1:1/mcp"}, JSON: true}, &stdout, &stderr)
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || code != exitcode.Usage || rep.Error == "" || rep.ExitCode != exitcode.Usage {
		t.Errorf("exit %d report %+v (%v)", code, rep, err)
	}
	stdout.Reset()
	code = Run(context.Background(), Options{Target: target.Target{URL: "http://127.0.0.1:1/mcp"}, Args: json.RawMessage("[1"), JSON: true}, &stdout, &stderr)
	if code != exitcode.Usage || !json.Valid(stdout.Bytes()) {
		t.Errorf("bad args: exit %d %s", code, stdout.String())
	}
}

// A tool the server does not have, or one that fails when called, cannot
// serve the battery: an ERROR finding says why, the checks that depend on
// it are listed as not run, and the exit code is 2 — never a green run
// built on a typo.
func TestCheckUnusableTool(t *testing.T) {
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"nope", `{}`, `tools/list lists no tool "nope" (its tools: chatty, confirm, end_subscriptions, fail, flood, never_done, roots, sample, silent, slow, stubborn, task_flip, task_input, task_job, task_stubborn, two_rounds, withdrawn)`},
		{"fail", `{"message":"broken"}`, "calling fail failed (failed: a tool error result)"},
		{"fail", `{"rpc":true}`, "calling fail failed (failed: JSON-RPC error"},
	} {
		rep, code := runCheck(t, Options{Target: testserver.Stdio(t, testserver.Modern), Tool: tc.tool, Args: json.RawMessage(tc.args), NoTasks: true})
		f, ok := findingsByID(rep)[CheckTool]
		if !ok || f.Status != StatusError || !strings.Contains(f.Detail, tc.want) {
			t.Errorf("%s %s: tool finding %+v; want an ERROR containing %q", tc.tool, tc.args, f, tc.want)
		}
		if code != exitcode.Usage || rep.ExitCode != exitcode.Usage || rep.Summary.Fail != 0 || rep.Summary.Warn != 0 {
			t.Errorf("%s %s: exit %d, summary %+v", tc.tool, tc.args, code, rep.Summary)
		}
		skipped := map[string]bool{}
		for _, s := range rep.Skipped {
			skipped[s.ID] = strings.Contains(s.Reason, "cannot serve the battery")
		}
		if !skipped[CheckCancelStops] || !skipped[CheckProgressIncreases] {
			t.Errorf("%s %s: the dependent checks are not listed as not run: %+v", tc.tool, tc.args, rep.Skipped)
		}
	}
}

// Every check of the battery is either judged or listed as skipped with
// why, on every transport and era: none silently vanishes.
func TestCheckAccountsForEveryCheck(t *testing.T) {
	all := []string{CheckDiscover, CheckProgressIncreases, CheckProgressStops, CheckCancelFinished, CheckCancelStops,
		CheckCancelNoResponse, CheckStreamClose, CheckCancelUnknown, CheckCancelMalformed, CheckServerCancel, CheckServerRequests,
		CheckCancelErrorCode, CheckResponseIDs}
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, _ := runCheck(t, Options{Target: tc.Target(t, e), Args: json.RawMessage(`{"seconds":0.4,"steps":4}`)})
		seen := map[string]int{}
		for _, f := range rep.Findings {
			seen[f.ID]++
		}
		for _, s := range rep.Skipped {
			if s.Reason == "" {
				t.Errorf("%s skipped without a reason", s.ID)
			}
			seen[s.ID]++
		}
		for _, id := range all {
			if seen[id] != 1 {
				t.Errorf("%s: judged or skipped %d times, want exactly once", id, seen[id])
			}
		}
	})
}

func TestCheckProcess(t *testing.T) {
	rep, code := runCheck(t, Options{Target: testserver.DemoProcess(t, testserver.Era{}), Args: json.RawMessage(`{"seconds":0.4,"steps":4}`)})
	if code != 0 || rep.Summary.Fail+rep.Summary.Warn != 0 || rep.Era != "modern" {
		t.Errorf("exit %d summary %+v era %s: %+v", code, rep.Summary, rep.Era, rep.Findings)
	}
}
