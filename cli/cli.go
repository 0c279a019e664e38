// Package cli is inflight's command line: the cobra commands, one file
// each (tui.go, call.go, check.go, replay.go, demoserver.go), their shared
// flags and the usage errors, which it prints redacted and inert and exits
// 2 on. A new subcommand goes here, as a file of its own that parses flags
// and calls the package doing the work.
package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"inflight/exitcode"
	"inflight/redact"
	"inflight/target"
	"inflight/termsafe"
)

// cli is what the commands share: where they write and the exit code the
// one that ran chose.
type cli struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	code   int
	// targets are the target flags of every command, read when an error is
	// printed to know which secrets the command line holds.
	targets []*target.Flags
	// jsonUsage prints a usage failure of a command as that command's
	// --json object, when --json was given; Execute calls it for the command
	// that failed.
	jsonUsage map[*cobra.Command]func(msg string, red *redact.Redactor)
}

// Execute runs inflight with the given arguments (without the program's
// name) and returns the process exit code. ctx ending is the first Ctrl+C;
// runner.HurryOf(ctx), the second.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI(ctx, stdout, stderr)
	root := c.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if cmd, err := root.ExecuteContextC(ctx); err != nil {
		// A usage error can quote a flag's value (url.Parse quotes the
		// whole URL; pflag quotes an unknown flag as typed): redact the
		// secrets the command line holds and make it inert before it
		// reaches the terminal.
		red := c.commandLineRedactor(args)
		msg := red.Error(err)
		if f := c.jsonUsage[cmd]; f != nil {
			f(msg, red)
		}
		// Name the command that failed, and point at its own help.
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), termsafe.Line(msg))
		fmt.Fprintf(stderr, "run '%s --help' for usage\n", cmd.CommandPath())
		return exitcode.Usage
	}
	return c.code
}

// newCLI is what the commands share before any has run: Execute builds
// the root command on it, and the test that keeps docs/cli current builds
// the same tree without running it.
func newCLI(ctx context.Context, stdout, stderr io.Writer) *cli {
	return &cli{ctx: ctx, stdout: stdout, stderr: stderr, jsonUsage: map[*cobra.Command]func(string, *redact.Redactor){}}
}

// commandLineRedactor knows the secrets of the command line as typed: the
// -H, --env and --url values of every command (only the one that ran has
// any) and every argument that looks like a URL (a bare URL). It works from
// the raw values, since a usage error may be about one that did not parse.
func (c *cli) commandLineRedactor(args []string) *redact.Redactor {
	var b redact.Builder
	for _, tf := range c.targets {
		tf.AddSecrets(&b)
	}
	for _, a := range args {
		if looksLikeURL(a) {
			b.AddURL(a)
		}
	}
	return b.Build()
}
