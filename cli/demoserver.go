package cli

import (
	"context"
	"errors"
	"fmt"
	"inflight/demo"
	"os"
	"time"

	"github.com/spf13/cobra"
)

func (c *cli) demoServerCommand() *cobra.Command {
	var addr string
	var tick time.Duration
	var useHTTP bool
	cmd := &cobra.Command{
		Use:   "demo-server [--http ADDR]",
		Short: "Serve the embedded demo MCP server (stdio, or Streamable HTTP at /mcp)",
		Long: `Serve the embedded demo MCP server over stdio (the default), or over Streamable HTTP
at /mcp with --http ADDR (127.0.0.1:0 picks a free port; the URL is printed on stderr).
Its tools show every cancellation behaviour: slow, stubborn, silent, flood, fail,
end_subscriptions; resource demo://clock; prompt explain_cancellation.`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			useHTTP = cmd.Flags().Changed("http")
			opts := demo.Options{Logger: c.stderr, TickInterval: tick}
			ctx := cmd.Context()
			if useHTTP {
				err := demo.ServeHTTP(ctx, addr, opts, func(url string) {
					fmt.Fprintf(c.stderr, "inflight demo server: %s\n", url)
				})
				if err != nil && !errors.Is(err, context.Canceled) {
					fmt.Fprintf(c.stderr, "inflight demo-server: %s\n", err)
					c.code = 1
				}
				return nil
			}
			opts.NoTimestamps = true // the client stamps the stderr lines it reads
			srv := demo.New(opts)
			defer srv.Close()
			if err := srv.ServeStdio(ctx, os.Stdin, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(c.stderr, "inflight demo-server: %s\n", err)
				c.code = 1
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "http", "127.0.0.1:0", "serve Streamable HTTP on `ADDR` instead of stdio")
	cmd.Flags().DurationVar(&tick, "tick", 0, "how often demo://clock changes (default 3s)")
	return cmd
}
