package cli

import (
	"inflight/replay"

	"github.com/spf13/cobra"
)

func (c *cli) replayCommand() *cobra.Command {
	var o replay.Options
	cmd := &cobra.Command{
		Use:           "replay FILE",
		Short:         "Print a trace file as a table of what happened to each request",
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Stop = cmd.Context().Done()
			c.code = replay.File(args[0], o, c.stdout, c.stderr)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "also show the client's own housekeeping (era probe, initialize, pings)")
	return cmd
}
