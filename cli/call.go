package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"inflight/call"
	"inflight/exitcode"
	"inflight/redact"
	"inflight/runner"
	"inflight/session"
	"inflight/target"
)

func (c *cli) callCommand() *cobra.Command {
	var tf target.Flags
	c.targets = append(c.targets, &tf)
	var o call.Options
	var tool, toolArgs string
	cmd := &cobra.Command{
		Use:   "call [URL] [METHOD [PARAMS_JSON]] [flags] [-- CMD ARGS…]",
		Short: "Send one request and follow it to the end",
		Long: `Send one request and follow it to the end: progress as it comes (a bar on a terminal,
plain lines otherwise), the cancel (--cancel-after, a timeout, Ctrl+C) with the signal
the transport and era require, late traffic for --late-window, then a summary.

Exit codes: 0 completed; 1 a tool error result or a JSON-RPC error; 2 usage or
connection failure; 3 timed out; 4 cancelled; 5 connection lost.`,
		Example: `  inflight call --tool slow --args '{"seconds":5}' --cancel-after 1s
  inflight call tools/list --json -- node server.js
  inflight call resources/read '{"uri":"demo://clock"}' --url http://127.0.0.1:8080/mcp`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			positional, command := splitDash(args, cmd.ArgsLenAtDash())
			bare, err := callRequest(positional, tool, toolArgs, &o)
			if err != nil {
				return err
			}
			target, err := tf.Resolve(command, bare)
			if err != nil {
				return err
			}
			o.Target = target
			if o.JSON {
				// Stdout carries exactly one JSON object; a person at the
				// terminal still sees the run on stderr.
				if isTerminal(c.stderr) {
					o.Live, o.Bar = c.stderr, true
				}
			} else {
				o.Live, o.Bar = c.stdout, isTerminal(c.stdout)
			}
			c.code = call.Run(cmd.Context(), o, c.stdout, c.stderr)
			return nil
		},
	}
	c.jsonUsage[cmd] = func(msg string, red *redact.Redactor) {
		if o.JSON {
			// The README promises the object on usage failures too, with
			// state not_sent, so that a script always has one to read.
			call.WriteNotSent(c.stdout, call.Options{Method: o.Method, Target: tf.Raw()}, exitcode.Usage, msg, red)
		}
	}
	tf.Add(cmd.Flags())
	addCallFlags(cmd.Flags(), &o, &tool, &toolArgs)
	return cmd
}

// callRequest reads the request from the words before "--" (an optional
// server URL first, then METHOD and PARAMS_JSON) and --tool and --args
// into o's Method and Params, and returns the URL (bare) if one came.
func callRequest(positional []string, tool, toolArgs string, o *call.Options) (bare string, err error) {
	// A server URL may come first, as the TUI and check take it
	// (inflight call URL METHOD …); anywhere else it is a slip.
	if len(positional) > 0 && looksLikeURL(positional[0]) {
		bare, positional = positional[0], positional[1:]
	}
	for _, a := range positional {
		if looksLikeURL(a) {
			return "", fmt.Errorf("a server URL goes first or with --url: inflight call %s METHOD", a)
		}
	}
	if len(positional) > 2 {
		return "", fmt.Errorf("at most METHOD and PARAMS_JSON before --, got %d arguments", len(positional))
	}
	if len(positional) > 0 {
		o.Method = positional[0]
	}
	if len(positional) > 1 {
		o.Params = json.RawMessage(positional[1])
	}
	switch {
	case tool != "":
		if o.Method != "" && o.Method != "tools/call" {
			return "", fmt.Errorf("--tool is tools/call; it cannot go with method %q", o.Method)
		}
		if len(o.Params) > 0 {
			return "", errors.New("give the tool's arguments with --args, not as PARAMS_JSON")
		}
		params, err := runner.ToolCallParams(tool, json.RawMessage(toolArgs))
		if err != nil {
			return "", err
		}
		o.Method, o.Params, o.Tool = "tools/call", params, tool
	case toolArgs != "":
		return "", errors.New("--args goes with --tool NAME")
	case o.Method == "":
		return "", errors.New("give a METHOD (and PARAMS_JSON), or --tool NAME --args JSON")
	}
	return bare, nil
}

// addCallFlags defines call's own flags (the target's are tf.Add's) in fs.
func addCallFlags(fs *pflag.FlagSet, o *call.Options, tool, toolArgs *string) {
	fs.StringVar(tool, "tool", "", "call tool `NAME` (short for METHOD tools/call)")
	fs.StringVar(toolArgs, "args", "", "the tool's arguments, a `JSON` object")
	durationVar(fs, &o.Timeout, "timeout", call.DefaultCallTimeout, "timeout of the request", true)
	fs.BoolVar(&o.ResetOnProgress, "reset-on-progress", true, "restart the timeout on each progress notification")
	durationVar(fs, &o.MaxTimeout, "max-timeout", call.DefaultCallMaxTimeout, "maximum timeout, which progress never pushes back", true)
	durationVar(fs, &o.CancelAfter, "cancel-after", 0, "cancel the request after `D` (0: never)", false)
	durationVar(fs, &o.LateWindow, "late-window", call.DefaultLateWindow, "how long to watch for a late response or progress after a cancel", true)
	durationVar(fs, &o.Grace, "grace", 0, "widen the window in which what follows a cancel counts as crossed in flight, beyond half the measured round trip", false)
	fs.BoolVar(&o.Task, "task", false, "ask for a task (legacy era: the tools/call task field; modern servers decide themselves)")
	durationVar(fs, &o.TaskTTL, "task-ttl", 0, "the time to live --task asks for (0: the server's default)", false)
	fs.StringVar(&o.AnswerFile, "answer-file", "", "answer the server's questions from `FILE`, a JSON object mapping input-request keys or methods (elicitation/create, sampling/createMessage, roots/list) to responses")
	fs.BoolVar(&o.Decline, "decline", false, "decline every question the answer file does not answer")
	fs.StringArrayVar(&o.Roots, "root", nil, "answer roots/list with `DIR` (repeatable; default: no roots)")
	fs.IntVar(&o.MaxRounds, "max-rounds", session.DefaultMaxRounds, "give up on a multi round-trip request after `N` rounds")
	fs.StringVar(&o.LogLevel, "log-level", "", "ask for the server's log lines at `LEVEL` (debug, info, notice, warning, error, …): per request in the modern era, logging/setLevel in the legacy one")
	fs.BoolVar(&o.JSON, "json", false, "print exactly one JSON object at the end (its fields: docs/call.md)")
	fs.StringVar(&o.TracePath, "trace", "", "write a trace of the run to `FILE` (JSON Lines)")
	fs.StringVar(&o.HARPath, "har", "", "write the run's HTTP exchanges to `FILE` as an HAR (HTTP Archive 1.2), with inflight's verdicts as comments")
	otlpVar(fs, &o.OTLP)
}
