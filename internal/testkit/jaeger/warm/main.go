// Command warm builds the Jaeger the OTLP tests run into the shared cache
// (see package jaeger), so that `.ci/run` builds it once before the tests.
// Where the Go module proxy cannot be reached it says so and exits 0: the
// tests that need Jaeger are then skipped with that reason.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"inflight/internal/testkit/jaeger"
)

func main() {
	bin, err := jaeger.Ensure(context.Background())
	switch {
	case errors.Is(err, jaeger.ErrUnreachable):
		fmt.Fprintf(os.Stderr, "jaeger: %v; the tests that need it will be skipped\n", err)
		return
	case err != nil:
		fmt.Fprintf(os.Stderr, "jaeger: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("jaeger %s: %s\n", jaeger.Version, bin)
}
