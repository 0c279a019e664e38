// Command peer is floodpeer's raw stdio server: it serves floodpeer.Serve on
// its stdin and stdout, so that `inflight call --tool flood --args
// '{"count":N}' -- peer` receives N progress notifications as fast as the
// pipe takes them.
package main

import (
	"fmt"
	"os"

	"inflight/internal/testkit/floodpeer"
)

func main() {
	if err := floodpeer.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "floodpeer: %v\n", err)
		os.Exit(1)
	}
}
