package check

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"inflight/exitcode"
	"inflight/redact"
	"inflight/report"
	"inflight/termsafe"
)

// Server is one server of a config file for RunAll: its name, the
// battery's options with its target, or why its target could not be
// resolved (the battery then does not run on it, and its report says why).
type Server struct {
	Name    string
	Options Options
	Err     error
}

// AllOptions configure RunAll.
type AllOptions struct {
	// JSON prints one JSON array of the servers' reports (each with its
	// "name"), in the order given, instead of the tables and the summary.
	JSON bool
	// Each, when set, is handed each server's report as soon as its
	// battery ended (or failed to begin): a caller that writes something
	// of its own per server collects them there.
	Each func(Report)
	// JUnitPath, when set, is written as one JUnit file with a testsuite
	// per server.
	JUnitPath string
}

// RunAll runs the battery on every server in turn, one connection at a
// time, and prints a report per server and a summary table at the end
// (with JSON, one array of the reports). A server that cannot be reached
// is reported as such and the others still run; after an interrupt the
// servers not yet begun are reported as not run. The exit code is the
// worst of the servers': 1 when a MUST failed on any, else 2 when any
// could not be checked, else 4 when interrupted, else 0.
func RunAll(ctx context.Context, servers []Server, o AllOptions, stdout, stderr io.Writer) int {
	junit, err := createJUnit(o.JUnitPath)
	if err != nil {
		fmt.Fprintf(stderr, "inflight check: --junit: %s\n", termsafe.Line(err.Error()))
		return exitcode.Usage
	}
	defer junit.close(stderr, nil)
	reps := make([]Report, 0, len(servers))
	reds := make([]*redact.Redactor, 0, len(servers))
	for _, s := range servers {
		started := time.Now()
		rep, ran := collectOne(ctx, s, o.JSON, stdout, stderr)
		red := s.Options.Target.Redactor()
		junit.add(rep, started, red)
		if !o.JSON && ran {
			printCheckReport(stdout, rep, red)
		}
		if o.Each != nil {
			o.Each(rep)
		}
		reps, reds = append(reps, rep), append(reds, red)
	}
	if o.JSON {
		writeAllJSON(stdout, reps, reds)
	} else {
		printSummary(stdout, reps, reds)
	}
	return worstExit(reps)
}

// collectOne is one server's battery, its report named.
func collectOne(ctx context.Context, s Server, quiet bool, stdout, stderr io.Writer) (Report, bool) {
	o := s.Options
	o.defaults()
	o.runName = "inflight check " + termsafe.Line(s.Name)
	if !quiet {
		fmt.Fprintf(stdout, "\n━━ %s ━━\n", termsafe.Line(s.Name))
		o.Live = stdout
	}
	var rep Report
	ran := false
	switch {
	case s.Err != nil:
		msg := o.Target.Redactor().String(s.Err.Error())
		fmt.Fprintf(stderr, "inflight check: %s: %s\n", termsafe.Line(s.Name), termsafe.Line(msg))
		rep = notRunReport(o, exitcode.Usage, msg)
	case ctx.Err() != nil:
		rep = notRunReport(o, exitcode.Cancelled, "interrupted before its battery began")
		rep.Interrupted = true
	default:
		rep, ran = Collect(ctx, o, stderr)
	}
	rep.Name = s.Name
	return rep, ran
}

// worstExit is the exit code of a run over several servers.
func worstExit(reps []Report) int {
	for _, want := range []int{exitcode.Failed, exitcode.Usage, exitcode.Cancelled} {
		for _, r := range reps {
			if r.ExitCode == want {
				return want
			}
		}
	}
	return 0
}

// writeAllJSON prints the reports as one JSON array, each object redacted
// with its own server's secrets.
func writeAllJSON(w io.Writer, reps []Report, reds []*redact.Redactor) {
	var b bytes.Buffer
	b.WriteString("[")
	for i, rep := range reps {
		var one bytes.Buffer
		report.WriteJSON(&one, rep, reds[i])
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
		for _, line := range strings.Split(strings.TrimRight(one.String(), "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteString("\n]\n")
	_, _ = w.Write(b.Bytes())
}

// printSummary is the table after every server's report: a line a server.
func printSummary(w io.Writer, reps []Report, reds []*redact.Redactor) {
	nameW := len("SERVER")
	for _, r := range reps {
		nameW = max(nameW, len(termsafe.Line(r.Name)))
	}
	nameW = min(nameW, 32)
	fmt.Fprintf(w, "\n%-*s  %-9s  %-7s  %4s  %4s  %4s  %s\n", nameW, "SERVER", "TRANSPORT", "ERA", "PASS", "WARN", "FAIL", "RESULT")
	for i, r := range reps {
		name := termsafe.Line(r.Name)
		if len(name) > nameW {
			name = name[:nameW-1] + "…"
		}
		fmt.Fprintf(w, "%-*s  %-9s  %-7s  %4d  %4d  %4d  %s\n", nameW, name, r.Transport, r.Era,
			r.Summary.Pass, r.Summary.Warn, r.Summary.Fail, resultWords(r, reds[i]))
	}
}

// resultWords says how a server's battery ended, in a few words.
func resultWords(r Report, red *redact.Redactor) string {
	safe := func(s string) string { return termsafe.Line(red.String(s)) }
	switch {
	case r.Summary.Fail > 0:
		return "a MUST failed"
	case r.Interrupted && len(r.Findings) == 0:
		return "not run (interrupted)"
	case r.Interrupted:
		return "interrupted"
	case r.Error != "" && len(r.Findings) == 0:
		return "not run: " + clip(safe(r.Error), 60)
	case r.Error != "":
		return "did not finish: " + clip(safe(r.Error), 60)
	case r.Summary.Warn > 0:
		return "passed, with warnings"
	}
	return "passed"
}

// clip cuts s to n runes, with "…" where it was cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
