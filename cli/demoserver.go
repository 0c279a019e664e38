package cli

import (
	"context"
	"errors"
	"fmt"
	"inflight/demo"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func (c *cli) demoServerCommand() *cobra.Command {
	var addr, sseAddr string
	var tick time.Duration
	var useHTTP, withAuth bool
	var tokenLifetime time.Duration
	cmd := &cobra.Command{
		Use:   "demo-server [--http ADDR | --sse ADDR]",
		Short: "Serve the embedded demo MCP server (stdio, or Streamable HTTP at /mcp and HTTP+SSE at /sse)",
		Long: `Serve the embedded demo MCP server over stdio (the default), or over Streamable HTTP
at /mcp with --http ADDR (127.0.0.1:0 picks a free port; the URL is printed on stderr).
The HTTP server also serves the deprecated HTTP+SSE transport (2024-11-05) at /sse;
--sse ADDR is --http ADDR that prints that URL instead.
Its tools show every cancellation behaviour: slow, stubborn, silent, flood, fail,
end_subscriptions; resource demo://clock; prompt explain_cancellation.`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			useHTTP = cmd.Flags().Changed("http")
			useSSE := cmd.Flags().Changed("sse")
			if useHTTP && useSSE {
				return fmt.Errorf("give --http or --sse, not both: one server serves both, Streamable HTTP at /mcp and HTTP+SSE at /sse")
			}
			opts := demo.Options{Logger: c.stderr, TickInterval: tick}
			ctx := cmd.Context()
			if useHTTP || useSSE {
				if useSSE {
					addr = sseAddr
				}
				serve := demo.ServeHTTP
				if withAuth {
					serve = func(ctx context.Context, addr string, opts demo.Options, ready func(string)) error {
						return demo.ServeHTTPAuth(ctx, addr, opts, demo.AuthOptions{TokenLifetime: tokenLifetime}, ready)
					}
				}
				err := serve(ctx, addr, opts, func(url string) {
					if useSSE {
						// The same server, named by its HTTP+SSE stream.
						url = strings.TrimSuffix(url, "/mcp") + "/sse"
					}
					fmt.Fprintf(c.stderr, "inflight demo server: %s\n", url)
				})
				if err != nil && !errors.Is(err, context.Canceled) {
					fmt.Fprintf(c.stderr, "inflight demo-server: %s\n", err)
					c.code = 1
				}
				return nil
			}
			if withAuth {
				return errors.New("--auth goes with --http or --sse: OAuth protects HTTP servers")
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
	cmd.Flags().StringVar(&sseAddr, "sse", "127.0.0.1:0", "the same as --http, but print the URL of the deprecated HTTP+SSE transport (/sse) served beside it")
	cmd.Flags().DurationVar(&tick, "tick", 0, "how often demo://clock changes (default 3s)")
	cmd.Flags().BoolVar(&withAuth, "auth", false, "serve behind OAuth: a local authorization server on the same address, and /mcp and /sse accept only its tokens")
	cmd.Flags().DurationVar(&tokenLifetime, "token-lifetime", time.Hour, "with --auth, how long an access token lives (short ones show the refresh)")
	return cmd
}
