package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"inflight/exitcode"
	"inflight/proxy"
	"inflight/termsafe"
)

func (c *cli) attachCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "attach [NAME]",
		Short: "List the running proxies, or follow what one records",
		Long: `With no NAME, list the proxies running for you (inflight proxy), with their
process, command and start. With NAME, follow what that proxy records, as
trace lines (JSON, the format replay reads): its recent lines, then the new
ones until the proxy ends; Ctrl+C stops following and leaves the proxy
running. (The interactive view on a proxy is still to come.)`,
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := proxy.SocketDir()
			if len(args) == 0 {
				running, err := proxy.List(dir)
				if err != nil {
					fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
					c.code = exitcode.Usage
					return nil
				}
				if len(running) == 0 {
					fmt.Fprintf(c.stdout, "no proxy is running (sockets in %s)\n", termsafe.Line(dir))
					return nil
				}
				for _, r := range running {
					if r.Stale {
						fmt.Fprintf(c.stdout, "%-20s (stale socket: its proxy is gone; the next proxy of that name replaces it)\n", termsafe.Line(r.Proxy))
						continue
					}
					fmt.Fprintf(c.stdout, "%-20s pid %-7d since %s  %s\n", termsafe.Line(r.Proxy), r.PID,
						r.Started.Local().Format(time.DateTime), termsafe.Line(r.Command))
				}
				return nil
			}
			conn, err := proxy.Attach(dir, args[0])
			if err != nil {
				fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
				c.code = exitcode.Usage
				return nil
			}
			go func() {
				<-cmd.Context().Done()
				conn.Close() // Ctrl+C: stop following; the proxy runs on
			}()
			// The lines are the trace writer's: escaped so that no byte of
			// them drives a terminal.
			_, _ = io.Copy(c.stdout, conn)
			conn.Close()
			return nil
		},
	}
	return cmd
}
