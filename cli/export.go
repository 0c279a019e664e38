package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"inflight/exitcode"
	"inflight/har"
	"inflight/otlp"
	"inflight/redact"
	"inflight/report"
	"inflight/session"
	"inflight/source"
	"inflight/termsafe"
	"inflight/trace"
)

// exportCommand is `inflight export`: a trace file written after the fact
// in the formats other tools read, a flag a format.
func (c *cli) exportCommand() *cobra.Command {
	var harPath, endpoint string
	f := defaultReplayFlags()
	cmd := &cobra.Command{
		Use:   "export [--har OUT] [--otlp URL] TRACEFILE",
		Short: "Turn a trace file into another format: an HAR, or OpenTelemetry spans sent to a collector",
		Long: `Read a trace file (call, check, the proxies and the TUI write one with --trace;
the TUI's e too) and write what it recorded in another format, one flag a format:

  --har OUT   every HTTP exchange (request and response headers, credentials masked,
              timings, bodies, an event stream's events as _eventSourceMessages) as an
              HTTP Archive 1.2, with inflight's verdict on the request it carried — its
              final state, the cancel, late and crossed messages, violations — as each
              entry's comment. The same HAR a run writes with --har.
  --otlp URL  the run as OpenTelemetry spans, sent to the OTLP/HTTP collector at URL:
              one span a request, named after the MCP conventions, with the cancel, the
              late window, late and crossed traffic, timeouts and violations as its
              events, at the times the file holds. The trace is judged again as replay
              judges it, under the recorded run's policy (--timeout, --max-timeout,
              --late-window: a trace does not keep them).

With neither flag, the spans go to $OTEL_EXPORTER_OTLP_ENDPOINT when it is set.
A trace of a stdio server, or one written before inflight recorded HTTP exchanges,
has none: its HAR is written empty and stderr says why.
Exit codes: 0 written; 2 usage, or the trace cannot be read.`,
		Example: "  inflight call https://example.com/mcp --tool slow --trace run.jsonl\n" +
			"  inflight export --har run.har run.jsonl\n" +
			"  inflight export --otlp http://127.0.0.1:4318 run.jsonl",
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := otlp.CheckEndpoint(endpoint); err != nil {
				return err
			}
			spans := endpoint != "" || (harPath == "" && otlp.Enabled(""))
			if harPath == "" && !spans {
				return errors.New("name what to export to: --har OUT, --otlp URL (or set OTEL_EXPORTER_OTLP_ENDPOINT)")
			}
			c.code = exitcode.Completed
			if harPath != "" {
				c.code = exportHAR(args[0], harPath, c.stderr)
			}
			if spans && c.code == exitcode.Completed {
				c.code = c.exportSpans(cmd, endpoint, args[0], f)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&harPath, "har", "", "write the trace's HTTP exchanges to `OUT` as an HAR (HTTP Archive 1.2)")
	fs.StringVar(&endpoint, "otlp", "", "send the trace as spans to the OTLP/HTTP collector at `URL` (e.g. http://127.0.0.1:4318)")
	durationVar(fs, &f.timeout, "timeout", session.DefaultTimeout, "the recorded run's default timeout of a request (for --otlp's verdicts)", true)
	durationVar(fs, &f.maxTimeout, "max-timeout", session.DefaultMaxTimeout, "the recorded run's maximum timeout (for --otlp's verdicts)", true)
	durationVar(fs, &f.lateWindow, "late-window", session.DefaultLateWindow, "the recorded run's late window after a cancel (for --otlp's verdicts)", true)
	fs.BoolVar(&f.resetOnProgress, "reset-on-progress", true, "the recorded run restarted a request's timeout on each progress notification (for --otlp's verdicts)")
	return cmd
}

// exportSpans sends the trace at path to the collector as spans, judged
// under the recorded run's policy f.
func (c *cli) exportSpans(cmd *cobra.Command, endpoint, path string, f *replayFlags) int {
	cfg := session.DefaultConfig()
	cfg.DefaultTimeout, cfg.MaxTimeout, cfg.LateWindow = f.timeout, f.maxTimeout, f.lateWindow
	reset := f.resetOnProgress
	cfg.ResetOnProgress = &reset
	warn := func(msg string) { fmt.Fprintf(c.stderr, "inflight export: %s\n", msg) }
	err := otlp.ExportFile(cmd.Context(), endpoint, path, otlp.ExportOptions{Tracker: cfg, Warn: warn})
	switch {
	case errors.Is(err, source.ErrNotATrace):
		fmt.Fprintf(c.stderr, "inflight export: %s is not an inflight trace: none of its lines is a trace record\n", termsafe.Line(path))
		return exitcode.Usage
	case err != nil:
		fmt.Fprintf(c.stderr, "inflight export: %s\n", termsafe.Line(err.Error()))
		return exitcode.Usage
	}
	return exitcode.Completed
}

// exportHAR writes the HAR of the trace at path to out.
func exportHAR(path, out string, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "inflight export: %s\n", termsafe.Line(err.Error()))
		return exitcode.Usage
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	b := har.New()
	r := trace.NewReader(f)
	bad := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *trace.LineError
		if errors.As(err, &le) {
			bad++
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %w", path, err))
		}
		b.Add(&rec)
	}
	of, err := trace.Create(out)
	if err != nil {
		return fail(fmt.Errorf("--har: %w", err))
	}
	err = b.Write(of)
	if cerr := of.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(fmt.Errorf("--har: %w", err))
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "inflight export: %d line%s of %s not a trace record, left out\n", bad, report.Plural(bad), termsafe.Line(path))
	}
	if b.Len() == 0 {
		fmt.Fprintf(stderr, "inflight export: %s holds no HTTP exchange (a stdio server's run, or a trace written before inflight recorded them); the HAR is empty\n", termsafe.Line(path))
	}
	return exitcode.Completed
}

// harOfTrace makes *tw feed an HAR written to path by the function it
// returns: a trace kept to itself when there is no --trace. The path is
// created now, so that one that cannot be written is said before the run.
func harOfTrace(tw **trace.Writer, path string, red *redact.Redactor) (func() error, error) {
	f, err := trace.Create(path)
	if err != nil {
		return nil, err
	}
	if *tw == nil {
		*tw = trace.NewWriter(io.Discard, time.Now(), red)
	}
	b := har.New()
	(*tw).SetTap(b.Add)
	w := *tw
	return func() error {
		_ = w.Flush()
		err := b.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}
