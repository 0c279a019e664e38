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
			target, err := tf.Resolve(command, bare)
			if err != nil {
				return err
			}
			o.Target = target
			o.Args = json.RawMessage(toolArgs)
			if taskArgs != "" {
				if err := runner.CheckObject(json.RawMessage(taskArgs), "--task-args"); err != nil {
					return err
				}
				o.TaskArgs = json.RawMessage(taskArgs)
			}
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
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&o.TracePath, "trace", "", "write a trace of the battery to `FILE` (JSON Lines)")
	otlpVar(fs, &o.OTLP)
	return cmd
}
