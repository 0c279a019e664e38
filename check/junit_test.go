package check

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/exitcode"
	"inflight/internal/testkit/formats"
	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
	"inflight/target"
)

// checkJUnit runs the battery with --junit and --json and returns the
// report and the JUnit file, read back.
func checkJUnit(t *testing.T, o Options) (Report, JUnit, []byte) {
	t.Helper()
	o.JUnitPath = filepath.Join(t.TempDir(), "check.xml")
	rep, _ := runCheck(t, o)
	doc, err := os.ReadFile(o.JUnitPath)
	if err != nil {
		t.Fatal(err)
	}
	var j JUnit
	if err := xml.Unmarshal(doc, &j); err != nil {
		t.Fatalf("the JUnit file is not XML: %v\n%s", err, doc)
	}
	return rep, j, doc
}

// casesByID: a report's testcases by check ID (the name up to its colon).
func casesByID(s junitSuite) map[string]junitCase {
	m := map[string]junitCase{}
	for _, c := range s.Cases {
		id, _, _ := strings.Cut(c.Name, ":")
		m[id] = c
	}
	return m
}

// On the demo the JUnit report holds one testcase per finding and per
// skipped check, none failing, and CI's schema accepts it.
func TestJUnitOnTheDemo(t *testing.T) {
	rep, j, doc := checkJUnit(t, Options{Target: testserver.HTTP(t, testserver.Modern), Args: json.RawMessage(`{"seconds":0.4,"steps":4}`),
		TaskArgs: json.RawMessage(`{"seconds":0.3,"steps":3,"pollMs":50}`)})
	formats.JUnit(t, doc)
	if len(j.Suites) != 1 {
		t.Fatalf("%d suites, want 1", len(j.Suites))
	}
	s := j.Suites[0]
	if s.Tests != len(rep.Findings)+len(rep.Skipped) || s.Failures != 0 || s.Errors != 0 || s.Skipped != len(rep.Skipped) || len(rep.Skipped) == 0 {
		t.Errorf("suite counts tests=%d failures=%d errors=%d skipped=%d; report: %d findings, %d skipped",
			s.Tests, s.Failures, s.Errors, s.Skipped, len(rep.Findings), len(rep.Skipped))
	}
	if s.Name != rep.Target || j.Tests != s.Tests {
		t.Errorf("suite %q (report's target %q), root tests %d", s.Name, rep.Target, j.Tests)
	}
	cases := casesByID(s)
	for _, f := range rep.Findings {
		c, ok := cases[f.ID]
		switch {
		case !ok:
			t.Errorf("no testcase for %s", f.ID)
		case c.Name != f.ID+": "+f.Title:
			t.Errorf("testcase name %q, want the ID and title of %+v", c.Name, f)
		case c.Failure != nil || c.Error != nil || c.Skipped != nil:
			t.Errorf("%s passed but its testcase is %+v", f.ID, c)
		case !strings.Contains(c.SystemOut, f.Quote) || !strings.Contains(c.SystemOut, f.Page):
			t.Errorf("%s: system-out does not quote the spec: %q", f.ID, c.SystemOut)
		}
	}
	for _, sk := range rep.Skipped {
		if c := cases[sk.ID]; c.Skipped == nil || c.Skipped.Message != sk.Reason {
			t.Errorf("skipped %s: testcase %+v", sk.ID, c)
		}
	}
	// The suite's system-out says the tool and that no violation was
	// recorded (the demo commits none), rather than nothing.
	if len(rep.Violations) != 0 || s.SystemOut != "tool: "+rep.Tool+"\nprotocol violations: none recorded" {
		t.Errorf("violations %v, system-out %q", rep.Violations, s.SystemOut)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props["tool"] != rep.Tool || props["era"] != rep.Era || props["server"] == "" || props["exitCode"] != "0" {
		t.Errorf("properties %v", props)
	}
}

// A server that goes on after a cancel fails checks: each FAIL and WARN is
// a failure with its detail as the message and the spec's words in the
// body, and the file is still valid.
func TestJUnitFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    func(t *testing.T) Options
		fail bool // a MUST failed, not only a SHOULD
	}{
		{"demo stubborn modern", func(t *testing.T) Options {
			return Options{Target: testserver.Stdio(t, testserver.Modern), Tool: "stubborn",
				Args: json.RawMessage(`{"seconds":0.6,"steps":6}`), LateWindow: time.Second, NoTasks: true}
		}, true},
		{"hostile keeps sending legacy", func(t *testing.T) Options {
			return Options{Target: testserver.InProcess(keepsSending, testserver.Legacy.Version)(t), Tool: hostile.ToolName,
				LateWindow: 400 * time.Millisecond, Timeout: 5 * time.Second}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { junitFailures(t, tc.o(t), tc.fail) })
	}
}

func junitFailures(t *testing.T, o Options, fail bool) {
	rep, j, doc := checkJUnit(t, o)
	formats.JUnit(t, doc)
	if (rep.Summary.Fail > 0) != fail || rep.Summary.Fail+rep.Summary.Warn == 0 {
		t.Fatalf("summary %+v: %+v", rep.Summary, rep.Findings)
	}
	s := j.Suites[0]
	if s.Failures != rep.Summary.Fail+rep.Summary.Warn {
		t.Errorf("%d failures, want %d FAIL + %d WARN", s.Failures, rep.Summary.Fail, rep.Summary.Warn)
	}
	cases := casesByID(s)
	for _, f := range rep.Findings {
		if f.Status == StatusPass {
			continue
		}
		c := cases[f.ID].Failure
		if c == nil || c.Message != f.Detail || c.Type != f.Status+" "+f.Level || !strings.Contains(c.Text, f.Quote) {
			t.Errorf("%s %s: failure %+v", f.Status, f.ID, c)
		}
	}
}

// A battery that never ran (nothing listens) is one error testcase, so
// that CI shows a red run rather than an empty one.
func TestJUnitConnectionFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "check.xml")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), Options{Target: target.Target{URL: "http://127.0.0.1:1/mcp?token=s3cret"}, JUnitPath: path}, &stdout, &stderr)
	if code != exitcode.Usage {
		t.Errorf("exit %d", code)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	formats.JUnit(t, doc)
	var j JUnit
	if err := xml.Unmarshal(doc, &j); err != nil || len(j.Suites) != 1 || j.Errors != 1 {
		t.Fatalf("%v %+v\n%s", err, j, doc)
	}
	if c := j.Suites[0].Cases; len(c) != 1 || c[0].Name != CheckConnection || c[0].Error == nil || c[0].Error.Message == "" {
		t.Errorf("cases %+v", c)
	}
	if bytes.Contains(doc, []byte("s3cret")) {
		t.Errorf("the JUnit file holds the URL's token:\n%s", doc)
	}
	// What was never used or learnt is not said: no tool was called, no
	// era or server was told.
	s := j.Suites[0]
	for _, p := range s.Properties {
		switch p.Name {
		case "tool", "args", "era", "protocolVersion", "server":
			t.Errorf("a battery that never ran says property %s=%q", p.Name, p.Value)
		}
	}
	if s.SystemOut != "the battery did not run: no tool was called, no violation recorded" {
		t.Errorf("system-out %q", s.SystemOut)
	}
}

// One file holds a suite per server, and a path that cannot be written
// is said before the battery runs.
func TestJUnitSuitePerServerAndBadPath(t *testing.T) {
	j := NewJUnit()
	red := target.Target{}.Redactor()
	a := Report{Target: "one", Transport: "stdio", Era: "modern", Findings: []Finding{newFinding(CheckDiscover, true, false, true, "answered")}}
	b := Report{Target: "two", Transport: "http", Era: "legacy", Findings: []Finding{newFinding(CheckCancelUnknown, false, true, false, "answered an error")},
		Skipped: []SkippedCheck{{ID: CheckTaskCancel, Reason: "no tasks"}}}
	j.Add(a, time.Now(), time.Second, red)
	j.Add(b, time.Now(), 2*time.Second, red)
	var buf bytes.Buffer
	if err := j.Write(&buf); err != nil {
		t.Fatal(err)
	}
	formats.JUnit(t, buf.Bytes())
	if len(j.Suites) != 2 || j.Tests != 3 || j.Failures != 1 || j.Skipped != 1 || j.Time != "3.000" {
		t.Errorf("%+v", j)
	}
	if c := casesByID(j.Suites[1])[CheckTaskCancel]; !strings.HasPrefix(c.Name, CheckTaskCancel+": ") {
		t.Errorf("a skipped check is named without its title: %q", c.Name)
	}

	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), Options{Target: testserver.Stdio(t, testserver.Modern), JUnitPath: filepath.Join(t.TempDir(), "no", "such", "dir.xml")}, &stdout, &stderr)
	if code != exitcode.Usage || !strings.Contains(stderr.String(), "--junit") || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
