package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"inflight/exitcode"
	"inflight/replay"
	"inflight/session"
	"inflight/source"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/ui"
)

// replayFlags are the tracker's policy a trace was recorded under, which
// the trace does not say: the interactive replay judges the run again
// with it.
type replayFlags struct {
	text                            bool
	timeout, maxTimeout, lateWindow time.Duration
	resetOnProgress                 bool
	// run runs the interactive view (nil: runProgram; tests look at the
	// model instead).
	run func(ctx context.Context, m *ui.Model) error
	// built, when set, is shown the options the view is made of (tests).
	built func(ui.Options)
}

// defaultReplayFlags are the tracker's defaults, which a run recorded
// with no timeouts of its own was judged by (a proxy's).
func defaultReplayFlags() *replayFlags {
	return &replayFlags{timeout: session.DefaultTimeout, maxTimeout: session.DefaultMaxTimeout,
		lateWindow: session.DefaultLateWindow, resetOnProgress: true}
}

func (c *cli) replayCommand() *cobra.Command {
	var o replay.Options
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Play a trace file back: the interactive view of the recorded run, or a table of what happened to each request",
		Long: `On a terminal, open the interactive view on the recorded run: the list, the
detail and the protocol log as they were at any moment of it, opened at its
end. A scrubber above the footer moves the moment: 0 and $ the start and the
end, ] and [ the next and previous flag (late traffic, a violation, a
timeout), . and , one event on and back, space plays from the moment shown
and pauses, < and > play slower and faster (0.1× to 100×). The run is judged
again by the same tracker, at the recorded times; where it judges otherwise
than the trace says the recording run did, the status line says so. A replay
sends nothing. The trace does not keep the run's timeouts: give them as the
run had them (--timeout, --max-timeout, --late-window) for the countdowns
and timeouts to read as they did.

With --text, or when stdout is not a terminal, print the trace as a
time-ordered table of what happened to each request, then to the connection.`,
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !f.text && isTerminal(c.stdout) && term.IsTerminal(os.Stdin.Fd()) {
				c.code = c.replayView(cmd.Context(), args[0], &f)
				return nil
			}
			o.Stop = cmd.Context().Done()
			c.code = replay.File(args[0], o, c.stdout, c.stderr)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.All, "all", false, "also show the client's own housekeeping (era probe, initialize, pings) in the table")
	fs.BoolVar(&f.text, "text", false, "print the table even on a terminal")
	durationVar(fs, &f.timeout, "timeout", session.DefaultTimeout, "the recorded run's default timeout of a request", true)
	durationVar(fs, &f.maxTimeout, "max-timeout", session.DefaultMaxTimeout, "the recorded run's maximum timeout", true)
	durationVar(fs, &f.lateWindow, "late-window", session.DefaultLateWindow, "the recorded run's late window after a cancel", true)
	fs.BoolVar(&f.resetOnProgress, "reset-on-progress", true, "the recorded run restarted a request's timeout on each progress notification")
	return cmd
}

// replayView opens the interactive replay of the trace at path and
// returns the exit code: 0 when the user quit, 2 when the file is not a
// trace or cannot be read, 1 when the view failed.
func (c *cli) replayView(ctx context.Context, path string, f *replayFlags) int {
	return c.openReplay(ctx, path, "replay", "replay "+path, f)
}

// openReplay is replayView for the command who (its messages start
// "inflight WHO: "), with target in the header.
func (c *cli) openReplay(ctx context.Context, path, who, target string, f *replayFlags) int {
	name := termsafe.Line(path)
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(c.stderr, "inflight "+who+": "+format+"\n", args...)
		return code
	}
	file, err := os.Open(path)
	if err != nil {
		return fail(exitcode.Usage, "%s", termsafe.Line(err.Error()))
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return fail(exitcode.Usage, "%s", termsafe.Line(err.Error()))
	}
	cfg := session.DefaultConfig()
	cfg.DefaultTimeout, cfg.MaxTimeout, cfg.LateWindow = f.timeout, f.maxTimeout, f.lateWindow
	reset := f.resetOnProgress
	cfg.ResetOnProgress = &reset
	// As the TUI that recorded it: a modern round waits for the user.
	cfg.Converse = true
	rp, err := source.OpenReplay(file, st.Size(), source.ReplayOptions{Start: traceStart(file, st), Tracker: cfg})
	switch {
	case errors.Is(err, source.ErrNotATrace):
		return fail(exitcode.Usage, "%s is not an inflight trace: none of its lines is a trace record", name)
	case err != nil:
		return fail(exitcode.Usage, "%s: %s", name, termsafe.Line(err.Error()))
	}
	opts := ui.Options{
		Target:    target,
		Transport: transportOf(rp),
		Replay:    &ui.Replay{Trace: rp},
		Tracker:   cfg,
		Export: func(path string, snap ui.Snapshot) (string, error) {
			return writeTrace(path, snap, nil)
		},
		Dark: true,
	}
	if f.built != nil {
		f.built(opts)
	}
	m, err := ui.New(opts)
	if err != nil {
		return fail(1, "%s", termsafe.Line(err.Error()))
	}
	run := f.run
	if run == nil {
		run = func(ctx context.Context, m *ui.Model) error { return runProgram(ctx, m, m) }
	}
	if err := run(ctx, m); err != nil && !errors.Is(err, tea.ErrInterrupted) && !errors.Is(err, context.Canceled) {
		return fail(1, "%s", termsafe.Line(err.Error()))
	}
	return exitcode.Completed
}

// transportOf is the transport the run's first connection says, for the
// header before the moment shown has one ("stdio" when none says).
func transportOf(rp *source.Replay) string {
	if info, ok := rp.Tracker().Conn(); ok {
		return info.Transport.String()
	}
	return "stdio"
}

// traceStart is when the trace at file most likely began: a trace keeps
// no clock time, only offsets from its start, and the file was last
// written about when its last line was, so its start is that time less
// the last line's offset. The clock the screens show (the detail's
// "sent 14:03:05.120") is then the run's within the writer's lag.
func traceStart(file *os.File, st os.FileInfo) time.Time {
	const tail = 64 << 10
	off := max(st.Size()-tail, 0)
	rd := trace.NewReader(io.NewSectionReader(file, off, st.Size()-off))
	last := 0.0
	for {
		rec, err := rd.Next()
		var le *trace.LineError
		switch {
		case err == nil:
			last = max(last, rec.MS)
			continue
		case errors.As(err, &le):
			continue // the first line read may be cut by the tail's start
		}
		break
	}
	return st.ModTime().Add(-time.Duration(last * float64(time.Millisecond)))
}
