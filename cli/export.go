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
	"inflight/redact"
	"inflight/report"
	"inflight/termsafe"
	"inflight/trace"
)

func (c *cli) exportCommand() *cobra.Command {
	var harPath string
	cmd := &cobra.Command{
		Use:   "export --har OUT TRACEFILE",
		Short: "Turn a trace file into another format: its HTTP exchanges as an HAR",
		Long: `Read a trace file (call, check and the TUI write one with --trace) and write what
it recorded in another format, one flag a format:

  --har OUT   every HTTP exchange (request and response headers, credentials masked,
              timings, bodies, an event stream's events as _eventSourceMessages) as an
              HTTP Archive 1.2, with inflight's verdict on the request it carried — its
              final state, the cancel, late and crossed messages, violations — as each
              entry's comment. The same HAR a run writes with --har.

A trace of a stdio server, or one written before inflight recorded HTTP exchanges,
has none: the HAR is written empty and stderr says why.
Exit codes: 0 written; 2 usage, or the trace cannot be read.`,
		Example:       "  inflight call https://example.com/mcp --tool slow --trace run.jsonl\n  inflight export --har run.har run.jsonl",
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if harPath == "" {
				return errors.New("name what to export to: --har OUT")
			}
			c.code = exportHAR(args[0], harPath, c.stderr)
			return nil
		},
	}
	cmd.Flags().StringVar(&harPath, "har", "", "write the trace's HTTP exchanges to `OUT` as an HAR (HTTP Archive 1.2)")
	return cmd
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
