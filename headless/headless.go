// Package headless is what the headless commands (call and check) share
// before and after their own work on the runner: the redactor of the
// target's secrets, a usage or connection failure said on stderr (and as
// the command's --json object), the --trace file, and the connection.
// Each command keeps what is its own: the request or the battery, its live
// lines, its report.
package headless

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"inflight/har"
	"inflight/otlp"
	"inflight/redact"
	"inflight/runner"
	"inflight/target"
	"inflight/termsafe"
	"inflight/trace"
)

// Run is one run of a headless command against a target.
type Run struct {
	// Red hides the target's secrets in everything the run prints or
	// writes.
	Red *redact.Redactor
	// Trace is the --trace file's writer; nil without one.
	Trace *trace.Writer
	// Spans sends the run as OpenTelemetry spans (--otlp, or the
	// OTEL_EXPORTER_OTLP_* variables); nil without.
	Spans *otlp.Sink

	name   string
	target target.Target
	stderr io.Writer
	notRun func(code int, msg string, red *redact.Redactor)
	file   *os.File
	// har is the --har file's HAR, built from the trace's records and
	// written at Close to harFile.
	har     *har.Builder
	harFile *os.File
}

// Begin begins a run of the command name ("inflight call") against t.
// notRun, when set (--json), prints the command's object for a run that
// failed before it could begin, msg redacted already.
func Begin(name string, t target.Target, stderr io.Writer, notRun func(code int, msg string, red *redact.Redactor)) *Run {
	return &Run{Red: t.Redactor(), name: name, target: t, stderr: stderr, notRun: notRun}
}

// Fail says why the run cannot go on — redacted, on one line of stderr,
// and as the --json object — and returns code, the exit code.
func (r *Run) Fail(code int, err error) int {
	msg := r.Red.String(err.Error())
	if r.notRun != nil {
		r.notRun(code, msg, r.Red)
	}
	fmt.Fprintf(r.stderr, "%s: %s\n", r.name, termsafe.Line(msg))
	return code
}

// CreateTrace creates the --trace file at path (none when path is empty),
// its times counted from start. Close flushes and closes it.
func (r *Run) CreateTrace(path string, start time.Time) error {
	if path == "" {
		return nil
	}
	f, err := trace.Create(path)
	if err != nil {
		return fmt.Errorf("--trace: %w", err)
	}
	r.file = f
	r.Trace = trace.NewWriter(f, start, r.Red)
	return nil
}

// CreateHAR makes the run write an HAR of its HTTP exchanges to path at
// Close (none when path is empty), built from the trace's records: with
// no --trace the trace is kept to itself. Call it after CreateTrace.
func (r *Run) CreateHAR(path string, start time.Time) error {
	if path == "" {
		return nil
	}
	if err := HARCheck(r.target); err != nil {
		return err
	}
	// Created now, so that a path that cannot be written is said before
	// the run rather than after it.
	f, err := trace.Create(path)
	if err != nil {
		return fmt.Errorf("--har: %w", err)
	}
	if r.Trace == nil {
		r.Trace = trace.NewWriter(io.Discard, start, r.Red)
	}
	r.har, r.harFile = har.New(), f
	r.Trace.SetTap(r.har.Add)
	return nil
}

// HARCheck refuses --har on a stdio target up front: an HAR holds HTTP
// exchanges, a stdio server has none, and an empty archive written
// without a word would read as a run that recorded nothing by mistake.
func HARCheck(t target.Target) error {
	if t.Transport() != "stdio" {
		return nil
	}
	return errors.New("--har records HTTP exchanges, and a stdio server has none: the archive would be empty (--trace records a stdio run)")
}

// OpenSpans starts the OTLP export of the run when --otlp gave endpoint
// or the environment names a collector (otlp.Enabled); a collector that
// fails is said once on stderr, and never fails the run.
func (r *Run) OpenSpans(endpoint string) error {
	s, err := otlp.Open(otlp.Options{Endpoint: endpoint, Name: r.name, Transport: r.target.Transport(), Redactor: r.Red,
		Warn: func(msg string) { fmt.Fprintf(r.stderr, "%s: %s\n", r.name, msg) }})
	if err != nil {
		return err
	}
	r.Spans = s
	return nil
}

// Dial connects to the target on the runner with opts, the run's trace,
// spans and redactor added.
func (r *Run) Dial(ctx context.Context, opts runner.Options) (*runner.Conn, error) {
	opts.Trace, opts.Spans, opts.Redactor = r.Trace, r.Spans, r.Red
	opts.HTTPBodies = r.har != nil
	return runner.Dial(ctx, r.target, opts)
}

// FlushTrace writes out what the trace holds; the error is the trace's
// first.
func (r *Run) FlushTrace() error {
	if r.Trace == nil {
		return nil
	}
	return r.Trace.Flush()
}

// Close flushes and closes the trace file, writes the HAR, and ends the
// spans (their flush bounded by otlp.FlushBound).
func (r *Run) Close() {
	_ = r.Spans.Close()
	if r.har != nil {
		_ = r.Trace.Flush()
		err := r.har.Write(r.harFile)
		if cerr := r.harFile.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(r.stderr, "%s: --har: %s\n", r.name, termsafe.Line(r.Red.String(err.Error())))
		}
	}
	if r.file == nil {
		return
	}
	_ = r.Trace.Flush()
	r.file.Close()
}
