//go:build linux

package client_test

import (
	"context"
	"os"
	"testing"
	"time"

	"inflight/client"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// A stdio client gives back every descriptor of its server's pipes when it
// closes, not when a finalizer runs: before, the read ends of the child's
// stdout and stderr stayed open after Close, two for every server started
// (the TUI starts one per reconnect). Not parallel: it counts the whole
// process's descriptors.
func TestStdioCloseReleasesPipes(t *testing.T) {
	// Open what the runtime keeps once opened (the poller), so that the
	// count compares like with like.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Close()
	before := openFDs(t)
	for i := 0; i < 3; i++ {
		c, err := client.New(childConfig("server"))
		if err != nil {
			t.Fatal(err)
		}
		rec := record(c)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		if _, err := c.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		c.Close()
		<-rec.done
	}
	// Everything is closed synchronously by Close; the short poll only
	// absorbs the runtime's own bookkeeping.
	deadline := time.Now().Add(time.Second)
	for openFDs(t) > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := openFDs(t); after > before {
		t.Fatalf("%d descriptors open after three connections closed, %d before", after, before)
	}
}
