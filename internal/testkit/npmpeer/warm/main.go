// Command warm installs every npm peer the tests use into the shared cache
// (see package npmpeer), so that `.ci/run` installs what its tests need
// before they run. Where the registry cannot be reached it says so and
// exits 0: the tests that need a peer are then skipped with that reason.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"inflight/internal/testkit/npmpeer"
)

func main() {
	for _, set := range npmpeer.Sets {
		in, err := npmpeer.Ensure(context.Background(), set...)
		switch {
		case errors.Is(err, npmpeer.ErrUnreachable):
			fmt.Fprintf(os.Stderr, "npm peers: %v; the tests that need %s will be skipped\n", err, strings.Join(set, " "))
			return
		case err != nil:
			fmt.Fprintf(os.Stderr, "npm peers: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("npm peers: %s in %s\n", strings.Join(set, " "), in.Dir)
	}
}
