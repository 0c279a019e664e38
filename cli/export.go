package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"inflight/exitcode"
	"inflight/otlp"
	"inflight/session"
	"inflight/source"
	"inflight/termsafe"
)

// exportCommand is `inflight export --otlp URL FILE`: a trace file sent
// after the fact as the spans its run would have sent.
func (c *cli) exportCommand() *cobra.Command {
	var endpoint string
	f := defaultReplayFlags()
	cmd := &cobra.Command{
		Use:   "export --otlp URL FILE",
		Short: "Send a trace file to an OpenTelemetry collector as the spans its run would have sent",
		Long: `Read a trace file (as --trace writes it, or the TUI's e) and send it to the
OTLP/HTTP collector at URL (or $OTEL_EXPORTER_OTLP_ENDPOINT) as OpenTelemetry
spans: one span a request, named after the MCP conventions, with the cancel,
the late window, late and crossed traffic, timeouts and violations as its
events, at the times the file holds. The trace is judged again as replay
judges it, under the recorded run's policy (--timeout, --max-timeout,
--late-window: a trace does not keep them).`,
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := otlp.CheckEndpoint(endpoint); err != nil {
				return err
			}
			cfg := session.DefaultConfig()
			cfg.DefaultTimeout, cfg.MaxTimeout, cfg.LateWindow = f.timeout, f.maxTimeout, f.lateWindow
			reset := f.resetOnProgress
			cfg.ResetOnProgress = &reset
			warn := func(msg string) { fmt.Fprintf(c.stderr, "inflight export: %s\n", msg) }
			err := otlp.ExportFile(cmd.Context(), endpoint, args[0], otlp.ExportOptions{Tracker: cfg, Warn: warn})
			switch {
			case errors.Is(err, source.ErrNotATrace):
				fmt.Fprintf(c.stderr, "inflight export: %s is not an inflight trace: none of its lines is a trace record\n", termsafe.Line(args[0]))
				c.code = exitcode.Usage
			case err != nil:
				fmt.Fprintf(c.stderr, "inflight export: %s\n", termsafe.Line(err.Error()))
				c.code = exitcode.Usage
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&endpoint, "otlp", "", "the OTLP/HTTP collector at `URL` (e.g. http://127.0.0.1:4318; default: $OTEL_EXPORTER_OTLP_ENDPOINT)")
	durationVar(fs, &f.timeout, "timeout", session.DefaultTimeout, "the recorded run's default timeout of a request", true)
	durationVar(fs, &f.maxTimeout, "max-timeout", session.DefaultMaxTimeout, "the recorded run's maximum timeout", true)
	durationVar(fs, &f.lateWindow, "late-window", session.DefaultLateWindow, "the recorded run's late window after a cancel", true)
	fs.BoolVar(&f.resetOnProgress, "reset-on-progress", true, "the recorded run restarted a request's timeout on each progress notification")
	return cmd
}
