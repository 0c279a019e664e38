package cli

import (
	"encoding/json"
	"fmt"
	"inflight/check"
	"inflight/exitcode"
	"inflight/redact"
	"inflight/runner"
	"inflight/target"

	"github.com/spf13/cobra"
)

func (c *cli) checkCommand() *cobra.Command {
	var tf target.Flags
	c.targets = append(c.targets, &tf)
	var o check.Options
	var toolArgs, taskArgs string
	var all bool
	cmd := &cobra.Command{
		Use:   "check [URL] [flags] [-- CMD ARGS…]",
		Short: "Run a cancellation compliance battery against a server",
		Long: `Run a cancellation compliance battery against a server, using one slow tool that
reports progress (the demo's slow by default): a full run (progress increases, none after
the response), a cancel mid-way (progress stops, no response, how long until quiet), a
cancel of a finished request, of an unknown ID and malformed cancels (the server must
stay healthy), server/discover on modern servers, a closed stream on modern HTTP, and
server-sent notifications/cancelled.

Each finding is PASS, WARN or FAIL, quoting the spec's MUST or SHOULD and its page;
a connection lost part-way is an ERROR finding, and the checks not run are skipped.
With --config FILE --all, the battery runs on every server of the file in turn (or on
each --server NAME given, repeatable), a report per server and a table at the end; a
server that cannot be reached is reported and the others still run; the exit code is
the worst of theirs.
Exit codes: 0 no MUST failed; 1 a MUST failed; 2 usage or connection failure (also
lost part-way); 4 interrupted.`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			positional, command := splitDash(args, cmd.ArgsLenAtDash())
			bare := ""
			switch {
			case len(positional) > 1 || (len(positional) == 1 && !looksLikeURL(positional[0])):
				return fmt.Errorf("at most a server URL before --, got %q (a stdio server's command goes after --)", positional)
			case len(positional) == 1:
				bare = positional[0]
			}
			o.Args = json.RawMessage(toolArgs)
			if taskArgs != "" {
				if err := runner.CheckObject(json.RawMessage(taskArgs), "--task-args"); err != nil {
					return err
				}
				o.TaskArgs = json.RawMessage(taskArgs)
			}
			if all {
				return c.checkAll(cmd, &tf, o, command, bare)
			}
			target, err := tf.Resolve(command, bare)
			if err != nil {
				return err
			}
			o.Target = target
			if !o.JSON {
				o.Live = c.stdout
			}
			c.code = check.Run(cmd.Context(), o, c.stdout, c.stderr)
			return nil
		},
	}
	c.jsonUsage[cmd] = func(msg string, red *redact.Redactor) {
		if o.JSON {
			tool := o.Tool
			if tool == "" {
				tool = check.DefaultCheckTool
			}
			check.WriteNotRun(c.stdout, check.Options{Tool: tool, Args: json.RawMessage(toolArgs), Target: tf.Raw()},
				exitcode.Usage, msg, red)
		}
	}
	tf.Add(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&o.Tool, "tool", "", "slow tool `NAME` that reports progress (default: the demo's slow; a server without one: the tool whose description speaks most of a long run with progress)")
	fs.StringVar(&toolArgs, "args", "", "the tool's arguments, a `JSON` object (demo slow/stubborn: {\"seconds\":1.5,\"steps\":6})")
	fs.StringVar(&o.TaskTool, "task-tool", "", "tool `NAME` the tasks group runs as a task (default: the first whose execution.taskSupport allows one)")
	fs.StringVar(&taskArgs, "task-args", "", "the task tool's arguments, a `JSON` object")
	fs.BoolVar(&o.NoTasks, "no-tasks", false, "skip the tasks group")
	durationVar(fs, &o.CancelAfter, "cancel-after", check.DefaultCheckCancelAfter, "cancel mid-way at the first progress, or after `D` without any", true)
	durationVar(fs, &o.LateWindow, "late-window", check.DefaultCheckLateWindow, "how long to watch after each cancel", true)
	durationVar(fs, &o.Grace, "grace", 0, "widen the window in which what follows a cancel counts as crossed in flight, beyond half the measured round trip", false)
	durationVar(fs, &o.Timeout, "timeout", check.DefaultCheckTimeout, "timeout of each request", true)
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table (with --all, one JSON array of them, each with its \"name\")")
	fs.BoolVar(&all, "all", false, "run the battery on every server of --config (or each --server NAME given), one after the other: a report each and a summary table")
	fs.StringVar(&o.TracePath, "trace", "", "write a trace of the battery to `FILE` (JSON Lines)")
	fs.StringVar(&o.JUnitPath, "junit", "", "also write the report as JUnit XML to `FILE`, for CI: a testcase per check (FAIL and WARN failures, skipped checks skipped); with --all, a testsuite per server")
	otlpVar(fs, &o.OTLP)
	return cmd
}

// checkAll is check --all: the battery on each server of --config.
func (c *cli) checkAll(cmd *cobra.Command, tf *target.Flags, o check.Options, command []string, bare string) error {
	if len(command) > 0 || bare != "" {
		return fmt.Errorf("--all runs the servers of --config FILE; it takes no URL or command")
	}
	if o.TracePath != "" {
		return fmt.Errorf("--trace writes one server's battery; with --all, run check on each --server NAME")
	}
	names, err := tf.ConfigServers()
	if err != nil {
		return err
	}
	servers := make([]check.Server, 0, len(names))
	for _, name := range names {
		s := check.Server{Name: name, Options: o}
		s.Options.Target, s.Err = tf.ResolveServer(name)
		servers = append(servers, s)
	}
	c.code = check.RunAll(cmd.Context(), servers, check.AllOptions{JSON: o.JSON, JUnitPath: o.JUnitPath}, c.stdout, c.stderr)
	return nil
}
