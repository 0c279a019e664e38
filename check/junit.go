package check

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"inflight/redact"
	"inflight/termsafe"
)

// JUnit is the battery's report as JUnit XML, the test report CI systems
// read (GitHub Actions' test reporters, GitLab's unit test reports,
// Jenkins): a testsuites root with one testsuite per battery run, so that
// one file can hold the runs against several servers. Each finding is a
// testcase named by its check ID and title; FAIL and WARN are failures
// (their detail the message, the spec's words the body), ERROR an error,
// a check that did not apply is skipped with why, and what the battery
// passed quotes its requirement on system-out.
//
// The format is the de-facto one of Ant's JUnit task as Jenkins reads it
// (check/testdata/junit.xsd is the subset inflight writes).
type JUnit struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`

	seconds float64
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Skipped   *junitMessage `xml:"skipped"`
	Error     *junitMessage `xml:"error"`
	Failure   *junitMessage `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitMessage is a failure, error or skipped: message and type as
// attributes, the longer text as content.
type junitMessage struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitClassname is every testcase's classname: CI systems group by it.
const junitClassname = "inflight.check"

// NewJUnit is an empty report.
func NewJUnit() *JUnit { return &JUnit{Name: "inflight check"} }

// Add adds one battery run as a testsuite named after its target: started
// when it began, elapsed how long it took. Every string goes through red.
func (j *JUnit) Add(rep Report, started time.Time, elapsed time.Duration, red *redact.Redactor) {
	modern, http := rep.Era == "modern", rep.Transport == "http"
	name := rep.Target
	if rep.Name != "" {
		name = rep.Name // a server of a config file, by its name there
	}
	s := junitSuite{
		Name:       red.String(name),
		Time:       seconds(elapsed),
		Timestamp:  started.UTC().Format("2006-01-02T15:04:05"),
		Properties: suiteProperties(rep, red),
	}
	for _, f := range rep.Findings {
		s.Cases = append(s.Cases, findingCase(f, red))
	}
	for _, sk := range rep.Skipped {
		title := ""
		if req, ok := lookupRequirement(sk.ID, modern, http); ok {
			title = req.Title
		}
		s.Cases = append(s.Cases, junitCase{Name: caseName(sk.ID, title), Classname: junitClassname,
			Skipped: &junitMessage{Message: red.String(sk.Reason)}})
	}
	if rep.Error != "" && len(rep.Findings) == 0 {
		// The battery never ran (a connection or usage failure): one error
		// says so, so that CI shows a red run and not an empty one.
		s.Cases = append(s.Cases, junitCase{Name: CheckConnection, Classname: junitClassname,
			Error: &junitMessage{Message: red.String(rep.Error), Type: StatusError, Text: red.String(rep.Error)}})
	}
	s.SystemOut = suiteOut(rep, red)
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	j.Suites = append(j.Suites, s)
	j.Tests += s.Tests
	j.Failures += s.Failures
	j.Errors += s.Errors
	j.Skipped += s.Skipped
	j.seconds += elapsed.Seconds()
	j.Time = fmt.Sprintf("%.3f", j.seconds)
}

// neverRan reports whether the battery never ran (a connection or usage
// failure before any check).
func neverRan(rep Report) bool { return rep.Error != "" && len(rep.Findings) == 0 }

// suiteProperties is what a suite says of its run: the target, tool,
// arguments, transport, era, protocol version, server and exit code. What
// was never used or learnt is left out: the tool and its arguments of a
// battery that never ran, an era, protocol version or server that no
// connection told.
func suiteProperties(rep Report, red *redact.Redactor) []junitProperty {
	props := []junitProperty{{"target", red.String(rep.Target)}}
	if !neverRan(rep) {
		props = append(props, junitProperty{"tool", red.String(rep.Tool)}, junitProperty{"args", red.String(string(rep.Args))})
	}
	for _, p := range []junitProperty{{"transport", rep.Transport}, {"era", rep.Era},
		{"protocolVersion", red.String(rep.ProtocolVersion)}, {"server", red.String(rep.Server)}} {
		if p.Value != "" && p.Value != "unknown" {
			props = append(props, p)
		}
	}
	return append(props, junitProperty{"exitCode", fmt.Sprint(rep.ExitCode)})
}

// findingCase is one finding as a testcase.
func findingCase(f Finding, red *redact.Redactor) junitCase {
	c := junitCase{Name: caseName(f.ID, f.Title), Classname: junitClassname}
	detail := red.String(f.Detail)
	spec := ""
	if f.Quote != "" {
		spec = fmt.Sprintf("%s %s: %q", f.Level, f.Page, f.Quote)
	}
	switch f.Status {
	case StatusFail, StatusWarn:
		c.Failure = &junitMessage{Message: detail, Type: f.Status + " " + f.Level, Text: joinLines(detail, spec)}
	case StatusError:
		c.Error = &junitMessage{Message: detail, Type: f.Status, Text: detail}
	default:
		c.SystemOut = joinLines(f.Status+": "+detail, spec)
	}
	return c
}

// caseName is a testcase's name: the check's stable ID, and its title
// for people.
func caseName(id, title string) string {
	if title == "" {
		return id
	}
	return id + ": " + title
}

// suiteOut is what a suite says besides its cases: the tool's choice and
// the violations the tracker recorded, "none" said as such (an empty
// system-out would leave a reader wondering whether it was looked at); of
// a battery that never ran, that it did not.
func suiteOut(rep Report, red *redact.Redactor) string {
	var lines []string
	switch {
	case neverRan(rep):
		lines = append(lines, "the battery did not run: no tool was called, no violation recorded")
	case rep.ToolChoice != "":
		lines = append(lines, "tool: "+red.String(rep.ToolChoice))
	default:
		lines = append(lines, "tool: "+red.String(rep.Tool))
	}
	for _, v := range rep.Violations {
		lines = append(lines, "protocol violation: "+v.Code+": "+red.String(v.Detail))
	}
	if len(rep.Violations) == 0 && !neverRan(rep) {
		lines = append(lines, "protocol violations: none recorded")
	}
	if rep.Interrupted {
		lines = append(lines, "interrupted")
	}
	return strings.Join(lines, "\n")
}

func joinLines(a, b string) string {
	if b == "" {
		return a
	}
	return a + "\n" + b
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// Write writes the report as an XML document.
func (j *JUnit) Write(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(j); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitFile is the --junit file of one Run: created before the battery
// runs (a path that cannot be written is a usage error, not a lost run),
// written when it ends. A nil one writes nothing.
type junitFile struct {
	f       *os.File
	path    string
	report  *JUnit
	written bool
}

func createJUnit(path string) (*junitFile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &junitFile{f: f, path: path, report: NewJUnit()}, nil
}

// add adds a run's report, ended now.
func (j *junitFile) add(rep Report, started time.Time, red *redact.Redactor) {
	if j == nil {
		return
	}
	j.report.Add(rep, started, time.Since(started), red)
}

// close writes the report and closes the file; a failure is said on
// stderr.
func (j *junitFile) close(stderr io.Writer, red *redact.Redactor) {
	if j == nil || j.written {
		return
	}
	j.written = true
	err := j.report.Write(j.f)
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "inflight check: --junit %s: %s\n", termsafe.Line(red.String(j.path)), termsafe.Line(red.String(err.Error())))
	}
}
